package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock/mcp"
)

// gateUpstream serves, over streamable HTTP, an MCP server whose one tool,
// wait, answers only once release has been called: a program that awaits
// gate.wait({}) runs until the test lets it go on.
func gateUpstream(t *testing.T) (url string, release func()) {
	t.Helper()
	open := make(chan struct{})
	var once sync.Once
	s := sdk.NewServer(&sdk.Implementation{Name: "gate", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "wait", Description: "Answers when the test releases it"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			select {
			case <-open:
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "released"}}}, nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	release = func() { once.Do(func() { close(open) }) }
	t.Cleanup(release)
	return srv.URL, release
}

// notes records the progress notifications a client receives, in the
// order it handles them (the order they were sent in), and signals each.
type notes struct {
	mu  sync.Mutex
	got []*sdk.ProgressNotificationParams
	ch  chan *sdk.ProgressNotificationParams
}

func newNotes() *notes { return &notes{ch: make(chan *sdk.ProgressNotificationParams, 100000)} }

func (n *notes) handler(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	n.mu.Lock()
	n.got = append(n.got, req.Params)
	n.mu.Unlock()
	n.ch <- req.Params
}

func (n *notes) all() []*sdk.ProgressNotificationParams {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*sdk.ProgressNotificationParams(nil), n.got...)
}

// until waits, within answerBound, for a notification with token whose
// message has want as a line.
func (n *notes) until(t *testing.T, token, want string) {
	t.Helper()
	if err := n.wait(token, want); err != nil {
		t.Fatal(err)
	}
}

// wait is until for any goroutine: it returns an error instead of failing.
func (n *notes) wait(token, want string) error {
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	for {
		select {
		case p := <-n.ch:
			if p.ProgressToken == token && hasLine(p.Message, want) {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("no notification of %s with %q within %s", token, want, answerBound)
		}
	}
}

func hasLine(msg, line string) bool {
	for l := range strings.SplitSeq(msg, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// callWithToken calls run_code with code and a progress token (none when
// token is ""), within answerBound.
func callWithToken(t *testing.T, cs *sdk.ClientSession, token, code string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	params := &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": code, "language": "javascript"}}
	if token != "" {
		params.SetProgressToken(token)
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("run_code: %v", err)
	}
	return resultOf(res)
}

// A console line reaches the client while run_code runs, before its
// result: the program logs, then waits in an upstream tool that the test
// releases only when the client has received the line as a progress
// notification; the result, after, still has every line.
func TestRunCode_LogProgressBeforeResult(t *testing.T) {
	url, release := gateUpstream(t)
	n := newNotes()
	cs := clientWith(t, newServer(t, mcp.Options{Upstreams: &mcp.Config{MCPServers: map[string]mcp.ServerConfig{"gate": {URL: url}}}}),
		&sdk.ClientOptions{ProgressNotificationHandler: n.handler})
	go func() {
		if err := n.wait("run-1", "log: waiting for the gate"); err != nil {
			t.Error(err) // the call below then fails when its bound passes
			return
		}
		release()
	}()
	r := callWithToken(t, cs, "run-1", `console.log("waiting for the gate"); await gate.wait({}); console.log("through"); export default 42`)
	if r.isError || r.structured["result"] != 42.0 {
		t.Fatalf("%+v", r)
	}
	logs, _ := r.structured["logs"].([]any)
	if len(logs) != 2 || !strings.Contains(r.text, "waiting for the gate") || !strings.Contains(r.text, "through") {
		t.Fatalf("the result lacks lines: %+v", r)
	}
}

// A call without a progress token gets no notifications. The client
// handles notifications in the order they were sent, and a call's come
// before its result: so when the notification of a later call with a token
// has been handled, any of the first call's would have been too.
func TestRunCode_NoProgressWithoutToken(t *testing.T) {
	n := newNotes()
	cs := clientWith(t, newServer(t, mcp.Options{}), &sdk.ClientOptions{ProgressNotificationHandler: n.handler})
	if r := callWithToken(t, cs, "", `console.log("unasked"); report(1); export default 1`); r.isError || !strings.Contains(r.text, "unasked") {
		t.Fatalf("%+v", r)
	}
	callWithToken(t, cs, "second", `console.log("asked"); export default 2`)
	n.until(t, "second", "log: asked")
	for _, p := range n.all() {
		if p.ProgressToken != "second" {
			t.Errorf("a notification for a call without a token: %+v", p)
		}
	}
}

// A flood of console lines does not flood the client: the lines are
// batched (one notification carries what came since the one before, at
// most 16 KiB, one per 100 ms while it runs), the rest dropped and counted, and
// the result still has every line.
func TestRunCode_ProgressFlood(t *testing.T) {
	const lines = 20000
	n := newNotes()
	cs := clientWith(t, newServer(t, mcp.Options{MaxOutput: -1}), &sdk.ClientOptions{ProgressNotificationHandler: n.handler})
	r := callWithToken(t, cs, "flood", fmt.Sprintf(`for (let i = 0; i < %d; i++) console.log("line " + i + " " + "x".repeat(90)); export default "done"`, lines))
	if r.isError || r.structured["result"] != "done" {
		t.Fatalf("%.500v", r)
	}
	if logs, _ := r.structured["logs"].([]any); len(logs) != lines {
		t.Fatalf("the result has %d lines, want %d", len(logs), lines)
	}
	callWithToken(t, cs, "end", `console.log("end")`)
	n.until(t, "end", "log: end") // every notification of the flood has been handled

	var count, bytes, entries, dropped int
	next := 0 // the least line number the next entry may have
	for _, p := range n.all() {
		if p.ProgressToken != "flood" {
			continue
		}
		count++
		bytes += len(p.Message)
		if len(p.Message) > 16<<10+100 {
			t.Errorf("a notification of %d bytes", len(p.Message))
		}
		for l := range strings.SplitSeq(p.Message, "\n") {
			if rest, ok := strings.CutPrefix(l, "log: line "); ok {
				num, _, _ := strings.Cut(rest, " ")
				i, err := strconv.Atoi(num)
				if err != nil || i < next {
					t.Fatalf("entry %q out of order (next is at least %d)", l, next)
				}
				next = i + 1
				entries++
				continue
			}
			var k int
			if _, err := fmt.Sscanf(l, "(%d more not sent here; the result has them all)", &k); err != nil {
				t.Fatalf("unexpected entry %q", l)
			}
			dropped += k
		}
	}
	t.Logf("%d notifications, %d bytes, %d lines sent, %d dropped", count, bytes, entries, dropped)
	if entries == 0 || entries+dropped != lines {
		t.Errorf("%d lines sent and %d dropped, want %d in all", entries, dropped, lines)
	}
	// One notification per line would be 20,000; the run's 30 s at 10 a
	// second allow 301.
	if count > lines/10 || bytes > 1<<20+200 {
		t.Errorf("%d notifications of %d bytes for %d lines", count, bytes, lines)
	}
}

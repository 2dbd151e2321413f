package mcp_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock/mcp"
)

// listAPIs is list_apis's text.
func listAPIs(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_apis", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*sdk.TextContent).Text
}

// waitFor polls list_apis until it contains want.
func waitFor(t *testing.T, cs *sdk.ClientSession, want string) string {
	t.Helper()
	guard := time.Now().Add(time.Minute) // a hang guard, not a speed bound
	for {
		text := listAPIs(t, cs)
		if strings.Contains(text, want) {
			return text
		}
		if t.Context().Err() != nil || time.Now().After(guard) {
			t.Fatalf("list_apis never said %q:\n%s", want, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A hanging upstream beside a working one: initialize is answered while
// the hanging one is still being connected, the working one is usable, and
// list_apis says which is which.
func TestUpstreams_HangingBesideWorking(t *testing.T) {
	exe, _ := os.Executable()
	cfg := &mcp.Config{MCPServers: map[string]mcp.ServerConfig{
		"calc": {Command: exe, Env: map[string]string{"AIRLOCK_TEST_UPSTREAM": "1"}},
		"hang": {Command: exe, Env: map[string]string{"AIRLOCK_TEST_UPSTREAM": "hang"}},
	}}
	// The hanging upstream's attempt lasts as long as the test may: all
	// that follows happens while it is still connecting.
	s, err := mcp.NewServer(context.Background(), mcp.Options{Upstreams: cfg, ConnectTimeout: time.Hour, FirstWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs := client(t, s) // initialize
	if got := cs.InitializeResult().ServerInfo; got.Name != "airlock" || got.Version == "" || got.Version == "dev" {
		t.Errorf("serverInfo = %+v", got)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "run_code") {
		t.Errorf("instructions = %q", cs.InitializeResult().Instructions)
	}
	text := waitFor(t, cs, "- calc (calc): ready")
	if !strings.Contains(text, "- hang (hang): connecting") {
		t.Fatalf("list_apis:\n%s", text)
	}
	r := runCode(t, cs, map[string]any{"code": "export default (await calc.add({a: 1, b: 2})).sum"})
	if r.isError || r.structured["result"] != 3.0 {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(listAPIs(t, cs), "- hang (hang): connecting") {
		t.Fatal("the hanging upstream finished connecting")
	}
	// The description named what is not ready yet.
	tools, _ := cs.ListTools(context.Background(), nil)
	for _, tl := range tools.Tools {
		if tl.Name == "run_code" && !strings.Contains(tl.Description, "not available yet (list_apis tells why): hang.") {
			t.Errorf("run_code description:\n%s", tl.Description)
		}
	}
}

// An upstream whose attempt times out is reported as such.
func TestUpstreams_ConnectTimeout(t *testing.T) {
	exe, _ := os.Executable()
	cfg := &mcp.Config{MCPServers: map[string]mcp.ServerConfig{"hang": {Command: exe, Env: map[string]string{"AIRLOCK_TEST_UPSTREAM": "hang"}}}}
	s := newServer(t, mcp.Options{Upstreams: cfg, ConnectTimeout: 100 * time.Millisecond})
	if fs := s.Failures(); len(fs) != 1 || !strings.Contains(fs[0].Error(), "hang: initialize did not answer within 100ms (the connect timeout)") {
		t.Fatalf("failures = %v", fs)
	}
}

// An upstream that goes away is reported and connected again.
func TestUpstreams_DeadIsRetried(t *testing.T) {
	exe, _ := os.Executable()
	cfg := &mcp.Config{MCPServers: map[string]mcp.ServerConfig{"calc": {Command: exe, Env: map[string]string{"AIRLOCK_TEST_UPSTREAM": "mortal"}}}}
	var mu sync.Mutex
	changes := 0
	s := newServer(t, mcp.Options{Upstreams: cfg})
	cs := clientWith(t, s, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { mu.Lock(); changes++; mu.Unlock() },
	})
	waitFor(t, cs, "- calc (calc): ready")
	r := runCode(t, cs, map[string]any{"code": "await calc.die({}).catch(() => {}); export default 1"})
	if r.isError {
		t.Fatalf("%+v", r)
	}
	waitFor(t, cs, "- calc (calc): unavailable, exited with status 0")
	waitFor(t, cs, "- calc (calc): ready")
	r = runCode(t, cs, map[string]any{"code": "export default (await calc.add({a: 2, b: 2})).sum"})
	if r.isError || r.structured["result"] != 4.0 {
		t.Fatalf("after the retry: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if changes == 0 {
		t.Error("the client was not told the tool list changed")
	}
}

// progressUntil runs code, which does not end by itself, in run_code with a
// progress token, and cancels the call when n entries (lines of the
// notifications' messages) have come: the call must fail. It returns the
// entries; the notifications' progress values must increase.
func progressUntil(t *testing.T, code string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []string
	last := 0.0
	cs := clientWith(t, newServer(t, mcp.Options{}), &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.Progress <= last {
				t.Errorf("progress %v after %v", req.Params.Progress, last)
			}
			last = req.Params.Progress
			got = append(got, strings.Split(req.Params.Message, "\n")...)
			if len(got) >= n {
				cancel() // the program is still looping: only this ends it
			}
		},
	})
	params := &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": code, "timeout_ms": 3600000}}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, params); err == nil {
		t.Fatal("the endless program returned")
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), got...)
}

// report() values arrive as progress notifications while the program still
// runs: the program loops until the client, having seen them, cancels.
func TestRunCode_ProgressWhileRunning(t *testing.T) {
	got := progressUntil(t, "report('first'); report({ step: 2 }); while (true) {}", 2)
	if len(got) < 2 || got[0] != "report: first" || got[1] != "report: { step: 2 }" {
		t.Fatalf("progress = %q", got)
	}
}

// Console lines are sent as progress notifications as they are written,
// in order with the reports, while the program still runs.
func TestRunCode_LogProgressWhileRunning(t *testing.T) {
	got := progressUntil(t, "console.log('first', 1); report(2); console.warn({ a: 'x' }); while (true) {}", 3)
	if len(got) < 3 || got[0] != "log: first 1" || got[1] != "report: 2" || got[2] != "warn: { a: 'x' }" {
		t.Fatalf("progress = %q", got)
	}
}

// With many upstreams the run_code description names the functions and
// list_apis gives the declarations, of one server when asked.
func TestRunCodeDescription_Compact(t *testing.T) {
	servers := map[string]mcp.ServerConfig{}
	for i := range 20 {
		servers[fmt.Sprintf("calc%02d", i)] = mcp.ServerConfig{URL: httpUpstream(t)}
	}
	s := newServer(t, mcp.Options{Upstreams: &mcp.Config{MCPServers: servers}})
	desc := s.RunCodeDescription()
	if strings.Contains(desc, "declare namespace") || !strings.Contains(desc, "- calc07: add, explode, greetPerson\n") ||
		!strings.Contains(desc, "Call list_apis") || len(desc) > 3000 {
		t.Fatalf("description (%d characters):\n%s", len(desc), desc)
	}
	cs := client(t, s)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_apis", Arguments: map[string]any{"server": "calc07"}})
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !strings.Contains(text, "declare namespace calc07 {") || strings.Count(text, "declare namespace") != 1 {
		t.Fatalf("list_apis calc07:\n%s", text)
	}
	res, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_apis", Arguments: map[string]any{"server": "nope"}})
	if !res.IsError {
		t.Fatal("list_apis of an unknown server succeeded")
	}
}

package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock/mcp"
)

// scriptedUpstream is an MCP server on stdio written by hand, so that it
// can stall or fail at exactly the stage its mode names (TestMain runs it
// for AIRLOCK_TEST_UPSTREAM=script:MODE):
//
//   - hang-initialize: reads its input and never answers initialize;
//   - hang-list: answers initialize, never tools/list;
//   - exit-at-start: says why on its standard error and exits 2;
//   - flood: writes log notifications and standard error as fast as it
//     can, all the time, while it answers;
//   - anything else: answers, with the tools echo ({text}), stall (never
//     answers, reads on), deafen (never answers, never reads again) and
//     crash (exits 3 with a panic message on its standard error); echo's
//     description is 50,000 characters long.
func scriptedUpstream(mode string) {
	var wmu sync.Mutex
	send := func(v any) {
		b, _ := json.Marshal(v)
		wmu.Lock()
		os.Stdout.Write(append(b, '\n'))
		wmu.Unlock()
	}
	forever := func() {
		for {
			time.Sleep(time.Hour)
		}
	}
	switch mode {
	case "exit-at-start":
		fmt.Fprintln(os.Stderr, "starting…\nfatal: no API token given")
		os.Exit(2)
	case "flood":
		go func() {
			line := strings.Repeat("x", 4000)
			for {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": line}})
				os.Stderr.WriteString(line + "\n")
			}
		}()
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue // a notification
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}) }
		object := map[string]any{"type": "object"}
		switch m.Method {
		case "initialize":
			if mode == "hang-initialize" {
				continue
			}
			reply(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "scripted", "version": "1"}})
		case "tools/list":
			if mode == "hang-list" {
				continue
			}
			reply(map[string]any{"tools": []any{
				map[string]any{"name": "echo", "inputSchema": object, "description": strings.Repeat("d", 50000)}, map[string]any{"name": "stall", "inputSchema": object},
				map[string]any{"name": "deafen", "inputSchema": object}, map[string]any{"name": "crash", "inputSchema": object},
			}})
		case "tools/call":
			switch m.Params.Name {
			case "echo":
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(m.Params.Arguments["text"])}}})
			case "stall":
			case "deafen":
				forever()
			case "crash":
				fmt.Fprintln(os.Stderr, "panic: the upstream crashed")
				os.Exit(3)
			}
		case "ping":
			reply(map[string]any{})
		default: // server/discover among them: the client falls back to initialize
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
}

// beside is a config of the working calc upstream and "bad", the test
// binary as an upstream in mode (an AIRLOCK_TEST_UPSTREAM value).
func beside(mode string) *mcp.Config {
	exe, _ := os.Executable()
	return &mcp.Config{MCPServers: map[string]mcp.ServerConfig{
		"calc": {Command: exe, Env: map[string]string{"AIRLOCK_TEST_UPSTREAM": "1"}},
		"bad":  {Command: exe, Env: map[string]string{"AIRLOCK_TEST_UPSTREAM": mode}},
	}}
}

// started is a server that has not been waited for (as `airlock mcp`
// serves at once), and a client of it.
func started(t *testing.T, opts mcp.Options) (*mcp.Server, *sdk.ClientSession) {
	t.Helper()
	s, err := mcp.NewServer(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, client(t, s)
}

// answerBound is the hang guard of one run_code call: a call that has not
// answered by then hangs (nothing here takes a second on a healthy server).
const answerBound = 30 * time.Second

// runWithin is runCode, failing the test if the call has not answered
// within answerBound.
func runWithin(t *testing.T, cs *sdk.ClientSession, code string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": code, "language": "javascript"}})
	if err != nil {
		t.Fatalf("run_code did not answer within %s: %v\n%s", answerBound, err, code)
	}
	return resultOf(res)
}

// calcWorks checks that the working upstream's tool works.
func calcWorks(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	waitFor(t, cs, "- calc (calc): ready") // a program waits for it at most FirstWait
	if r := runWithin(t, cs, "export default (await calc.add({a: 1, b: 2})).sum"); r.isError || r.structured["result"] != 3.0 {
		t.Fatalf("calc beside a bad upstream: %+v", r)
	}
}

// One hanging upstream stalled every run_code: a call made while any
// upstream was on its first attempt waited (FirstWait, 10 s by default)
// for all of them, also when the program used none. Now a program waits
// only for the upstreams it names, and one that names a hanging upstream
// gets an error that says what the upstream is doing. For each stage an
// upstream can hang at, a real subprocess hangs there beside a working
// one: with the first wait as long as the test, the program that uses the
// working upstream answers while the one that names the hanging upstream
// still waits; with a short first wait, the second gets the error.
func TestUpstreams_HangAtEachStage(t *testing.T) {
	for _, c := range []struct{ mode, stage string }{
		{"hang", "initialize"},                   // never reads its input
		{"script:hang-initialize", "initialize"}, // reads, never answers
		{"script:hang-list", "tools/list"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			hanging := fmt.Sprintf("- bad (bad): connecting: %s has not answered after", c.stage)
			long := mcp.Options{Upstreams: beside(c.mode), ConnectTimeout: time.Hour, ListTimeout: time.Hour, FirstWait: time.Hour}
			_, cs := started(t, long)
			waitFor(t, cs, hanging)

			named := make(chan error, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "export default await bad.echo({text: 'x'})"}})
				named <- err
			}()
			calcWorks(t, cs)
			if r := runWithin(t, cs, "export default 6 * 7"); r.isError || r.structured["result"] != 42.0 {
				t.Fatalf("a program with no upstream: %+v", r)
			}
			select {
			case err := <-named:
				t.Fatalf("the program that names the hanging upstream did not wait for it (FirstWait is an hour): %v", err)
			default:
			}
			if !strings.Contains(listAPIs(t, cs), hanging) {
				t.Fatalf("the upstream stopped hanging:\n%s", listAPIs(t, cs))
			}
			cancel()
			<-named

			short := long
			short.FirstWait = 50 * time.Millisecond
			_, cs = started(t, short)
			waitFor(t, cs, hanging)
			r := runWithin(t, cs, "export default await bad.echo({text: 'x'})")
			want := fmt.Sprintf(`bad is not defined: upstream "bad" is not ready: %s has not answered after`, c.stage)
			if !r.isError || !strings.Contains(r.text, want) {
				t.Fatalf("want %q in:\n%s", want, r.text)
			}
			// A program can test for it.
			if r := runWithin(t, cs, "export default typeof bad"); r.isError || r.structured["result"] != "undefined" {
				t.Fatalf("%+v", r)
			}
			calcWorks(t, cs)
			if !strings.Contains(listAPIs(t, cs), hanging) {
				t.Fatalf("the upstream stopped hanging:\n%s", listAPIs(t, cs))
			}
		})
	}
}

// A tool call that never answers, and one to an upstream that stopped
// reading its input (a pipe write blocks, whatever its context says, and
// holds the SDK's write lock), end at the call timeout with an error the
// program can catch; the upstream that stopped reading is killed and
// connected again, and the working one is not disturbed.
func TestUpstreams_HangInCall(t *testing.T) {
	_, cs := started(t, mcp.Options{Upstreams: beside("script:calls"), CallTimeout: 300 * time.Millisecond})
	waitFor(t, cs, "- bad (bad): ready")
	r := runWithin(t, cs, `
let stalled = "";
try { await bad.stall({}); } catch (e) { stalled = e.message; }
const sum = (await calc.add({a: 2, b: 3})).sum;
export default { stalled, sum, echo: await bad.echo({ text: "still here" }) };`)
	if r.isError {
		t.Fatalf("%+v", r)
	}
	got := r.structured["result"].(map[string]any)
	if got["stalled"] != `upstream "bad": stall did not answer within 300ms (the call timeout)` || got["sum"] != 5.0 || got["echo"] != "still here" {
		t.Fatalf("result = %v", got)
	}

	// deafen never answers and never reads again: the next call's large
	// argument cannot be written.
	r = runWithin(t, cs, `
const errors = [];
await bad.deafen({}).catch(e => errors.push(e.message));
await bad.echo({ text: "x".repeat(1 << 20) }).catch(e => errors.push(e.message));
export default errors;`)
	if r.isError {
		t.Fatalf("%+v", r)
	}
	errs := r.structured["result"].([]any)
	// The second call ends at its timeout or when the write's does (both
	// 300ms), whichever comes first.
	if len(errs) != 2 || errs[0] != `upstream "bad": deafen did not answer within 300ms (the call timeout)` ||
		errs[1] != `upstream "bad": echo did not answer within 300ms (the call timeout)` &&
			!strings.Contains(errs[1].(string), `upstream "bad" went away during the call to echo: it exited (killed: it did not read a message of ours for 300ms)`) {
		t.Fatalf("errors = %q", errs)
	}
	calcWorks(t, cs)
	waitFor(t, cs, "- bad (bad): unavailable, exited (killed: it did not read a message of ours for 300ms)")
	waitFor(t, cs, "- bad (bad): ready")
	if r := runWithin(t, cs, `export default await bad.echo({ text: "back" })`); r.isError || r.structured["result"] != "back" {
		t.Fatalf("after it was connected again: %+v", r)
	}
}

// A call that hangs past the program's own time limit: run_code answers
// with the program stopped.
func TestUpstreams_HangInCallPastTheProgram(t *testing.T) {
	_, cs := started(t, mcp.Options{Upstreams: beside("script:calls"), CallTimeout: time.Hour})
	waitFor(t, cs, "- bad (bad): ready")
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "await bad.stall({})", "timeout_ms": 200}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "stopped after 200ms") {
		t.Fatalf("%+v, %v", res, err)
	}
	calcWorks(t, cs)
}

// An upstream that dies in a call: the call throws, saying that it exited,
// how, and the last line of its standard error. (Its echo's description,
// 50,000 characters, is cut to 2,000 in the declarations.)
func TestUpstreams_DiesInCall(t *testing.T) {
	_, cs := started(t, mcp.Options{Upstreams: beside("script:calls")})
	decls := waitFor(t, cs, "- bad (bad): ready")
	if !strings.Contains(decls, strings.Repeat("d", 2000)+"…") || strings.Contains(decls, strings.Repeat("d", 2001)) {
		t.Errorf("the long description was not cut to 2,000 characters (%d in list_apis)", strings.Count(decls, "d"))
	}
	r := runWithin(t, cs, "await bad.crash({})")
	want := `upstream "bad" went away during the call to crash: it exited: exit status 3; its standard error ends: "panic: the upstream crashed"`
	if !r.isError || !strings.Contains(r.text, want) {
		t.Fatalf("want %q in:\n%s", want, r.text)
	}
	calcWorks(t, cs)
}

// An upstream that exits at once, again at every attempt: list_apis and a
// program that names it say how it exited.
func TestUpstreams_ExitsAtStart(t *testing.T) {
	_, cs := started(t, mcp.Options{Upstreams: beside("script:exit-at-start")})
	waitFor(t, cs, `- bad (bad): unavailable, exited: exit status 2; its standard error ends: "fatal: no API token given"`)
	r := runWithin(t, cs, "await bad.echo({})")
	want := `bad is not defined: upstream "bad" is not ready: exited: exit status 2; its standard error ends: "fatal: no API token given"`
	if !r.isError || !strings.Contains(r.text, want) {
		t.Fatalf("want %q in:\n%s", want, r.text)
	}
	calcWorks(t, cs)
}

// An upstream that floods its output (notifications on stdout, lines on
// stderr, without end) still answers, and the server keeps none of it.
func TestUpstreams_Flood(t *testing.T) {
	_, cs := started(t, mcp.Options{Upstreams: beside("script:flood")})
	waitFor(t, cs, "- bad (bad): ready")
	for range 3 {
		if r := runWithin(t, cs, `export default await bad.echo({ text: "heard" })`); r.isError || r.structured["result"] != "heard" {
			t.Fatalf("%+v", r)
		}
		calcWorks(t, cs)
	}
}

// An HTTP upstream whose server accepts connections and never answers:
// the program that does not name it answers, and one that does is told.
func TestUpstreams_HTTPHangsAtConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	cfg := beside("1")
	cfg.MCPServers["bad"] = mcp.ServerConfig{URL: "http://" + ln.Addr().String() + "/mcp", Timeouts: mcp.Timeouts{Connect: mcp.Duration(time.Hour)}}
	_, cs := started(t, mcp.Options{Upstreams: cfg, FirstWait: 50 * time.Millisecond})
	hanging := "- bad (bad): connecting: initialize has not answered after"
	waitFor(t, cs, hanging)
	calcWorks(t, cs)
	r := runWithin(t, cs, "export default await bad.echo({text: 'x'})")
	if want := `upstream "bad" is not ready: initialize has not answered after`; !r.isError || !strings.Contains(r.text, want) {
		t.Fatalf("want %q in:\n%s", want, r.text)
	}
	if !strings.Contains(listAPIs(t, cs), hanging) {
		t.Fatalf("the upstream stopped hanging:\n%s", listAPIs(t, cs))
	}
}

// A server's timeouts in a config file: Go durations or milliseconds.
func TestLoadConfig_Timeouts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "x", "timeouts": {"connect": "10s", "list": 2500, "call": "2m"}}}}`), 0o644)
	c, err := mcp.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.MCPServers["a"].Timeouts; got != (mcp.Timeouts{Connect: mcp.Duration(10 * time.Second), List: mcp.Duration(2500 * time.Millisecond), Call: mcp.Duration(2 * time.Minute)}) {
		t.Fatalf("timeouts = %+v", got)
	}
	for _, bad := range []string{`"soon"`, `"-1s"`, `true`} {
		os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "x", "timeouts": {"call": `+bad+`}}}}`), 0o644)
		if _, err := mcp.LoadConfig(path); err == nil {
			t.Errorf("call timeout %s loaded", bad)
		}
	}
}

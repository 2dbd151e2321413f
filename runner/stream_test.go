package runner_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// event is a streamed event as a client decodes it.
type event struct {
	Type   string          `json:"type"`
	Text   string          `json:"text"`
	Lines  int64           `json:"lines"`
	Bytes  int64           `json:"bytes"`
	Result json.RawMessage `json:"result"`
	Status int             `json:"status"`
	Error  string          `json:"error"`
}

// events reads a stream of kind (NDJSON or server-sent events) one event
// at a time.
type events struct {
	t    *testing.T
	kind string
	r    *bufio.Reader
}

func (e *events) next() (event, bool) {
	e.t.Helper()
	var data []byte
	name := ""
	for {
		line, err := e.r.ReadBytes('\n')
		if err != nil {
			if len(line) > 0 || data != nil {
				e.t.Fatalf("the stream ends inside an event: %q", line)
			}
			return event{}, false
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if e.kind == "application/x-ndjson" {
			data = line
			break
		}
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			name = string(line[len("event: "):])
			continue
		case bytes.HasPrefix(line, []byte("data: ")):
			data = line[len("data: "):]
			continue
		case len(line) == 0 && data != nil:
		default:
			e.t.Fatalf("not a server-sent event line: %q", line)
		}
		break
	}
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		e.t.Fatalf("event %q: %v", data, err)
	}
	if e.kind == "text/event-stream" && name != ev.Type {
		e.t.Fatalf("event: %s names an event of type %s", name, ev.Type)
	}
	return ev, true
}

// postStream sends a streaming request and gives its events.
func postStream(t *testing.T, client *http.Client, url, kind, body string) (*http.Response, *events) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", kind)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, &events{t: t, kind: kind, r: bufio.NewReader(resp.Body)}
}

// gate is a tool callback server whose "wait" tool answers only when the
// test opens it; a call still waiting after a minute (a backstop: the
// stream did not deliver what the test waits for) fails.
type gate struct {
	URL      string
	open     chan struct{}
	gaveUp   atomic.Bool
	reached  chan struct{} // closed when the "ended" tool is called
	reachedN atomic.Int32
}

func newGate(t *testing.T) *gate {
	g := &gate{open: make(chan struct{}), reached: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct{ Name string }
		json.NewDecoder(r.Body).Decode(&call)
		switch call.Name {
		case "wait":
			select {
			case <-g.open:
			case <-time.After(time.Minute):
				g.gaveUp.Store(true)
				w.Write([]byte(`{"error":"not released: the client never saw the line before it"}`))
				return
			}
		case "ended":
			if g.reachedN.Add(1) == 1 {
				close(g.reached)
			}
		}
		w.Write([]byte(`{"data":"\"ok\""}`))
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// streamPrograms print a line, wait for the test (a tool call it answers
// once it has read the line), print another and set a result.
var streamPrograms = map[string]string{
	"python":     "print('first line')\ncall_tool('wait')\nprint('second line')\nset_result({'n': 1})",
	"node":       "console.log('first line');\nawait callTool('wait');\nconsole.log('second line');\nsetResult({ n: 1 });",
	"javascript": "console.log('first line');\nawait callTool('wait');\nconsole.warn('second line');\nsetResult({ n: 1 });",
	"typescript": "console.log('first line');\nawait callTool('wait');\nconsole.warn('second line');\nconst n: number = 1;\nsetResult({ n });",
}

// TestStreamLogBeforeEnd: a long run's console lines reached an HTTP
// client only when the run ended. Asked for a stream (NDJSON or
// server-sent events), the service sends each line as it is written: the
// program here waits, after its first line, on a tool call that the test
// answers only once it has read that line from the stream, so the run
// cannot end unless the line arrived while it ran. The last event is the
// result, the default response's object (/v1/execute's on /v1/execute).
//
// javascript also runs in worker-process mode (Config.Workers), where the
// lines cross the worker's pipe.
func TestStreamLogBeforeEnd(t *testing.T) {
	_, url := serve(t, service.Config{})
	_, workersURL := serve(t, service.Config{Workers: 1})
	for _, name := range []string{"python", "node", "javascript", "typescript", "javascript-workers"} {
		for _, kind := range []string{"application/x-ndjson", "text/event-stream"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				rt, workers := strings.CutSuffix(name, "-workers")
				url := url
				if workers {
					url = workersURL
				}
				needRuntime(t, rt)
				g := newGate(t)
				path := "/execute"
				if kind == "text/event-stream" {
					path = "/v1/execute"
				}
				body, _ := json.Marshal(map[string]any{"code": streamPrograms[rt], "runtime": rt, "callback_url": g.URL, "timeout": 120})
				resp, evs := postStream(t, http.DefaultClient, url+path, kind, string(body))
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != kind {
					b, _ := io.ReadAll(resp.Body)
					t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
				}
				ev, ok := evs.next()
				if !ok || ev.Type != "log" || ev.Text != "first line" {
					t.Fatalf("first event: %+v", ev)
				}
				close(g.open)
				var got []event
				for {
					ev, ok := evs.next()
					if !ok {
						break
					}
					got = append(got, ev)
				}
				if g.gaveUp.Load() {
					t.Fatal("the tool call waited for a line the stream did not deliver")
				}
				want := "second line"
				if rt == "javascript" || rt == "typescript" {
					want = "[warn] second line"
				}
				if len(got) != 2 || got[0].Type != "log" || got[0].Text != want || got[1].Type != "result" {
					t.Fatalf("events after the first: %+v", got)
				}
				var res struct {
					Output   string `json:"output"`
					Logs     string `json:"logs"`
					ExitCode int    `json:"exit_code"`
					Status   string `json:"status"`
				}
				if err := json.Unmarshal(got[1].Result, &res); err != nil {
					t.Fatal(err)
				}
				if strings.ReplaceAll(res.Output, " ", "") != `{"n":1}` || res.ExitCode != 0 || res.Logs != "first line\n"+want+"\n" {
					t.Fatalf("result: %+v", res)
				}
				if (path == "/v1/execute") != (res.Status == "success") {
					t.Fatalf("result on %s: status %q", path, res.Status)
				}
			})
		}
	}
}

// TestStreamDefaultUnchanged: the default response stays the reference's,
// byte for byte, for a client that asks for no stream (no Accept, JSON,
// anything else), and a stream's result event carries the same bytes.
func TestStreamDefaultUnchanged(t *testing.T) {
	_, url := serve(t, service.Config{})
	const body = `{"code":"console.log('hi <&>'); setResult({n: 1})","runtime":"javascript"}`
	const want = `{"output":"{\"n\":1}","logs":"hi <&>\n","exit_code":0}` + "\n"
	for _, accept := range []string{"", "application/json", "*/*", "text/html", "application/x-ndjson;q=0"} {
		req, _ := http.NewRequest(http.MethodPost, url+"/execute", strings.NewReader(body))
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || string(b) != want {
			t.Fatalf("Accept %q: %d %s %q", accept, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	for _, accept := range []string{"application/x-ndjson", "text/event-stream", "application/json;q=0.5, text/event-stream"} {
		kind := "application/x-ndjson"
		if strings.Contains(accept, "event-stream") {
			kind = "text/event-stream"
		}
		_, evs := postStream(t, http.DefaultClient, url+"/execute", accept, body)
		evs.kind = kind
		var last event
		for ev, ok := evs.next(); ok; ev, ok = evs.next() {
			last = ev
		}
		if last.Type != "result" || string(last.Result)+"\n" != want {
			t.Fatalf("Accept %q: last event %+v", accept, last)
		}
	}
	// A request refused before it runs is answered as without a stream.
	resp, evs := postStream(t, http.DefaultClient, url+"/execute", "application/x-ndjson", `{"code":"1","runtime":"cobol"}`)
	b, _ := io.ReadAll(evs.r)
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(b), `"error":"unsupported runtime`) {
		t.Fatalf("refused: %d %s", resp.StatusCode, b)
	}
}

// smallBuffers keeps the kernel from holding much of a response: the
// slow-client test then measures the server's own queue, not the sockets'.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// TestStreamSlowClient: a client that reads nothing while the code writes
// megabytes must not grow the server's memory or hold the code. The
// stream's queue drops what does not fit (1,024 lines, 256 KiB) and says so
// with a dropped event standing where the lines were; the program, which
// reaches its "ended" tool call only after writing everything, ends while
// the client still reads nothing, and the final result has every line.
func TestStreamSlowClient(t *testing.T) {
	needRuntime(t, "python")
	cfg := service.Config{MaxOutput: 16 << 20, Workspace: t.TempDir(), Insecure: insecure()}
	srv, err := service.New(cfg, discard())
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Listener = smallBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(func() { hs.Close(); srv.Close() })
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{Control: smallReceiveBuffer}).DialContext}}
	defer client.CloseIdleConnections()

	g := newGate(t)
	const lines = 8192 // 8 MiB: lines of 1,000 bytes with their newline
	code := fmt.Sprintf("import sys\nfor i in range(%d):\n    sys.stdout.write('%%04d' %% i + 'x' * 995 + '\\n')\ncall_tool('ended')\nset_result('done')", lines)
	body, _ := json.Marshal(map[string]any{"code": code, "runtime": "python", "callback_url": g.URL, "timeout": 120})
	resp, evs := postStream(t, client, hs.URL+"/execute", "application/x-ndjson", string(body))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	select {
	case <-g.reached:
	case <-time.After(2 * time.Minute): // a backstop: the program is held by the client
		t.Fatal("the program did not end while the client read nothing: its output waited for the client")
	}
	var logs, dropped, droppedEvents int64
	var last event
	next := int64(0)
	for ev, ok := evs.next(); ok; ev, ok = evs.next() {
		switch ev.Type {
		case "log":
			var i int64
			if _, err := fmt.Sscanf(ev.Text[:4], "%d", &i); err != nil || i < next || len(ev.Text) != 999 {
				t.Fatalf("line %d after %d: %q...", i, next, ev.Text[:min(len(ev.Text), 20)])
			}
			next = i + 1
			logs++
		case "dropped":
			if ev.Lines <= 0 || ev.Bytes != ev.Lines*999 {
				t.Fatalf("dropped event %+v", ev)
			}
			dropped += ev.Lines
			droppedEvents++
		}
		last = ev
	}
	if droppedEvents == 0 || logs+dropped != lines {
		t.Fatalf("%d lines sent, %d dropped in %d events: want some dropped and %d in all", logs, dropped, droppedEvents, lines)
	}
	var res struct {
		Output string `json:"output"`
		Logs   string `json:"logs"`
	}
	if last.Type != "result" || json.Unmarshal(last.Result, &res) != nil || res.Output != `"done"` || strings.Count(res.Logs, "\n") != lines {
		t.Fatalf("last event %s, output %q, %d lines of logs", last.Type, res.Output, strings.Count(res.Logs, "\n"))
	}
	// The server counts what it dropped.
	mresp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if !strings.Contains(string(m), fmt.Sprintf("airlock_stream_dropped_lines_total %d", dropped)) {
		t.Fatalf("metrics do not count %d dropped lines:\n%s", dropped, m)
	}
}

// TestStreamClientGone: a streaming client that goes away cancels its
// execution, as one waiting for the default response does.
func TestStreamClientGone(t *testing.T) {
	_, url := serve(t, service.Config{MaxConcurrent: 1})
	g := newGate(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/execute",
		strings.NewReader(`{"code":"console.log('up'); await callTool('ended'); while (true) {}","runtime":"javascript","timeout":300,"callback_url":"`+g.URL+`"}`))
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-g.reached
	cancel()
	resp.Body.Close()
	// The only slot comes free once the run is cancelled: a later request
	// runs (503 until then). The run's own timeout is 5 minutes; a minute
	// is a backstop.
	for start := time.Now(); ; {
		if time.Since(start) > time.Minute {
			t.Fatal("the execution runs on after its streaming client went away")
		}
		r, err := http.Post(url+"/execute", "application/json", strings.NewReader(`{"code":"setResult(1)","runtime":"javascript"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode == 200 {
			break
		}
		if r.StatusCode != 503 {
			t.Fatalf("%d %s", r.StatusCode, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunnerLog: CodeRequest.Log gives the Go client each line as it is
// written, remotely (HTTPRunner streams) and locally (Local): the program
// waits after its first line on a tool that the test answers only once
// Log has had that line.
func TestRunnerLog(t *testing.T) {
	_, url := serve(t, service.Config{})
	remote := runner.NewHTTPRunner(url)
	defer remote.Close()
	local, err := runner.NewLocal(service.Config{Workspace: t.TempDir(), Insecure: insecure()})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	for name, r := range map[string]runner.CodeRunner{"http": remote, "local": local} {
		for _, rt := range []string{"python", "javascript"} {
			t.Run(name+"/"+rt, func(t *testing.T) {
				needRuntime(t, rt)
				seen := make(chan struct{})
				var lines []string
				log := func(line string) {
					lines = append(lines, line)
					if line == "first line" {
						close(seen)
					}
				}
				var gaveUp atomic.Bool
				dispatch := func(ctx context.Context, call runner.ToolCall) (string, error) {
					select {
					case <-seen:
						return `"ok"`, nil
					case <-time.After(time.Minute): // a backstop
						gaveUp.Store(true)
						return "", fmt.Errorf("Log never had the first line")
					}
				}
				res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: rt, Code: streamPrograms[rt], Timeout: 2 * time.Minute, Log: log}, dispatch)
				if err != nil || gaveUp.Load() {
					t.Fatalf("%+v, %v (gave up: %v)", res, err, gaveUp.Load())
				}
				want := "second line"
				if rt == "javascript" {
					want = "[warn] second line"
				}
				if strings.Join(lines, "|") != "first line|"+want || strings.ReplaceAll(res.Output, " ", "") != `{"n":1}` || res.Logs != "first line\n"+want+"\n" {
					t.Fatalf("lines %q, result %+v", lines, res)
				}
			})
		}
	}
}

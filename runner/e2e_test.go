package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// insecure reports whether the tests run python and node without
// bubblewrap (AIRLOCK_TEST_INSECURE=1, for machines without it).
func insecure() bool { return os.Getenv("AIRLOCK_TEST_INSECURE") == "1" }

// needJail skips a test of the bubblewrap jail when the tests run without it.
func needJail(t *testing.T) {
	t.Helper()
	if insecure() {
		t.Skip("AIRLOCK_TEST_INSECURE: no bubblewrap")
	}
}

// serve starts the service on a real listener.
func serve(t testing.TB, cfg service.Config) (*service.Server, string) {
	t.Helper()
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	cfg.Insecure = cfg.Insecure || insecure()
	srv, err := service.New(cfg, discard())
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return srv, hs.URL
}

func needRuntime(t *testing.T, rt string) {
	t.Helper()
	bin := map[string]string{"python": "python3", "node": "node"}[rt]
	if bin == "" {
		return
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("%s is not installed: the %s runtime cannot be tested (.ci/run installs it)", bin, rt)
	}
	if !insecure() {
		if _, err := exec.LookPath("bwrap"); err != nil {
			t.Fatalf("bwrap is not installed (apt-get install bubblewrap), or set AIRLOCK_TEST_INSECURE=1")
		}
	}
}

// slowMeet pairs the parallel program's two "slow" calls: the first waits
// for the second, so the program ends only if the calls overlap. The bound
// is an event, not the time the calls took (a loaded machine stretches
// that); the minute is a backstop for calls that never overlap.
var slowMeet struct {
	sync.Mutex
	waiting chan struct{}
}

// tools answers the code's tool calls: add sums, slow meets the other slow
// call, fail fails.
func tools(ctx context.Context, call runner.ToolCall) (string, error) {
	switch call.Name {
	case "add":
		var in struct{ A, B float64 }
		json.Unmarshal(call.Args, &in)
		return fmt.Sprintf(`{"sum": %g}`, in.A+in.B), nil
	case "slow":
		slowMeet.Lock()
		if w := slowMeet.waiting; w != nil { // the second call: release the first
			slowMeet.waiting = nil
			slowMeet.Unlock()
			close(w)
			return `"done"`, nil
		}
		w := make(chan struct{})
		slowMeet.waiting = w
		slowMeet.Unlock()
		select {
		case <-w:
			return `"done"`, nil
		case <-ctx.Done():
		case <-time.After(time.Minute):
		}
		slowMeet.Lock()
		defer slowMeet.Unlock()
		if slowMeet.waiting == w {
			slowMeet.waiting = nil
			return "", errors.New("the slow calls did not run at once")
		}
		return `"done"`, nil // released while giving up
	case "text":
		return "plain text, not JSON", nil
	case "fail":
		return "", errors.New("the tool broke")
	}
	return "", fmt.Errorf("unknown tool %s", call.Name)
}

// programs are the same tasks in each runtime.
var programs = map[string]map[string]string{
	"python": {
		"roundtrip": "r = call_tool('add', {'a': 2, 'b': 3})\nt = call_tool('text')\ntry:\n    call_tool('fail')\nexcept RuntimeError as e:\n    err = str(e)\nprint('logged')\nset_result({'sum': r['sum'], 'text': t, 'err': err})",
		"parallel":  "set_result(call_tools_parallel([('slow', {}), ('add', {'a': 1, 'b': 1}), ('slow', None)]))",
		"files":     "data = open('in/data.txt').read()\nopen('out.txt', 'w').write(data.upper())\nset_result(len(data), files=['out.txt'])",
		"write":     "open('state.txt', 'w').write('kept')\nset_result('written')",
		"read":      "set_result(open('state.txt').read())",
		"fork":      "import os, time\nif os.fork() == 0:\n    os.setsid()\n    while True:\n        open('beat.tmp', 'w').write(str(time.time()))\n        os.replace('beat.tmp', 'beat.txt')\n        time.sleep(0.05)\nwhile not os.path.exists('beat.txt'):\n    time.sleep(0.01)\ntime.sleep(60)",
		"flood":     "import sys\nfor i in range(100000):\n    print('x' * 100)",
		"big":       "set_result('y' * (2 << 20))",
		"escape":    "import os\nout = {}\ntry:\n    open('/etc/airlock-escape', 'w').write('x')\n    out['write'] = 'ok'\nexcept OSError as e:\n    out['write'] = 'refused'\ntry:\n    import socket\n    socket.create_connection(('1.1.1.1', 80), timeout=2)\n    out['net'] = 'ok'\nexcept OSError:\n    out['net'] = 'refused'\nout['env'] = sorted(k for k in os.environ if 'SECRET' in k)\nset_result(out)",
		"throw":     "x = 1\nraise ValueError('bad value')",
	},
	"node": {
		"roundtrip": "const r = await callTool('add', { a: 2, b: 3 });\nconst t = await callTool('text');\nlet err;\ntry { await callTool('fail'); } catch (e) { err = e.message; }\nconsole.log('logged');\nsetResult({ sum: r.sum, text: t, err });",
		"parallel":  "setResult(await callToolsParallel([['slow', {}], ['add', { a: 1, b: 1 }], ['slow']]));",
		"files":     "const fs = require('fs');\nconst data = fs.readFileSync('in/data.txt', 'utf8');\nfs.writeFileSync('out.txt', data.toUpperCase());\nsetResult(data.length, ['out.txt']);",
		"write":     "require('fs').writeFileSync('state.txt', 'kept'); setResult('written');",
		"read":      "setResult(require('fs').readFileSync('state.txt', 'utf8'));",
		"fork":      "const { spawn } = require('child_process');\nconst fs = require('fs');\nspawn(process.execPath, ['-e', \"const fs = require('fs'); setInterval(() => { fs.writeFileSync('beat.tmp', String(Date.now())); fs.renameSync('beat.tmp', 'beat.txt'); }, 50)\"], { detached: true, stdio: 'ignore' });\nwhile (!fs.existsSync('beat.txt')) await new Promise((r) => setTimeout(r, 10));\nawait new Promise(() => setTimeout(() => {}, 60000));",
		"flood":     "for (let i = 0; i < 5000; i++) console.log('x'.repeat(1000));",
		"big":       "setResult('y'.repeat(2 << 20));",
		"escape":    "const fs = require('fs'); const net = require('net'); const out = {};\ntry { fs.writeFileSync('/etc/airlock-escape', 'x'); out.write = 'ok'; } catch { out.write = 'refused'; }\nout.net = await new Promise((res) => { const s = net.connect({ host: '1.1.1.1', port: 80, timeout: 2000 }, () => { s.destroy(); res('ok'); }); s.on('error', () => res('refused')); s.on('timeout', () => { s.destroy(); res('refused'); }); });\nout.env = Object.keys(process.env).filter((k) => k.includes('SECRET')).sort();\nsetResult(out);",
		"throw":     "const x = 1;\nthrow new RangeError('bad value');",
	},
	"javascript": {
		"roundtrip": "const r = await callTool('add', { a: 2, b: 3 });\nconst t = await callTool('text');\nlet err;\ntry { await callTool('fail'); } catch (e) { err = e.message; }\nconsole.log('logged');\nsetResult({ sum: r.sum, text: t, err });",
		"parallel":  "setResult(await callToolsParallel([['slow', {}], ['add', { a: 1, b: 1 }], ['slow']]));",
		"files":     "const data = readFile('in/data.txt');\nwriteFile('out.txt', data.toUpperCase());\nsetResult(data.length, ['out.txt']);",
		"write":     "writeFile('state.txt', 'kept'); setResult('written');",
		"read":      "setResult(readFile('state.txt'));",
		"flood":     "for (let i = 0; i < 5000; i++) console.log('x'.repeat(1000));",
		"big":       "setResult('y'.repeat(2 << 20));",
		"throw":     "const x = 1;\nthrow new RangeError('bad value');",
	},
	"typescript": {
		"roundtrip": "const r: { sum: number } = await callTool('add', { a: 2, b: 3 });\nconst t: string = await callTool('text');\nlet err: string | undefined;\ntry { await callTool('fail'); } catch (e) { err = (e as Error).message; }\nconsole.log('logged');\nsetResult({ sum: r.sum, text: t, err });",
		"parallel":  "setResult(await callToolsParallel([['slow', {}], ['add', { a: 1, b: 1 }], ['slow']]));",
		"files":     "const data: string = readFile('in/data.txt');\nwriteFile('out.txt', data.toUpperCase());\nsetResult(data.length, ['out.txt']);",
		"write":     "writeFile('state.txt', 'kept'); setResult('written');",
		"read":      "setResult(readFile('state.txt'));",
		"flood":     "for (let i = 0; i < 5000; i++) console.log('x'.repeat(1000));",
		"big":       "setResult('y'.repeat(2 << 20));",
		"throw":     "const x: number = 1;\nthrow new RangeError('bad value');",
	},
}

func TestEndToEnd(t *testing.T) {
	_, url := serve(t, service.Config{MaxOutput: 4 << 20, JSMaxOutput: 4 << 20})
	r := runner.NewHTTPRunner(url, runner.WithMaxOutput(8<<20))
	defer r.Close()
	ctx := context.Background()
	for _, rt := range []string{"python", "node", "javascript", "typescript"} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, rt)
			p := programs[rt]
			run := func(code string, req runner.CodeRequest) runner.CodeResult {
				t.Helper()
				req.Code, req.Runtime = code, rt
				res, err := r.Run(ctx, req, tools)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			// A tool callback round trip: JSON data parsed, text kept, errors raised.
			res := run(p["roundtrip"], runner.CodeRequest{})
			var got map[string]any
			if err := json.Unmarshal([]byte(res.Output), &got); err != nil || res.ExitCode != 0 {
				t.Fatalf("roundtrip: %+v", res)
			}
			if got["sum"] != 5.0 || got["text"] != "plain text, not JSON" || got["err"] != "Tool 'fail' failed: the tool broke" || !strings.Contains(res.Logs, "logged") {
				t.Fatalf("roundtrip: %v (logs %q)", got, res.Logs)
			}
			// Parallel calls keep their order and run at once (each slow
			// call waits for the other).
			res = run(p["parallel"], runner.CodeRequest{})
			if res.Output != `["done",{"sum":2},"done"]` && strings.ReplaceAll(res.Output, " ", "") != `["done",{"sum":2},"done"]` {
				t.Fatalf("parallel: %+v", res)
			}
			// Files in and out.
			res = run(p["files"], runner.CodeRequest{Files: []runner.File{{Name: "in/data.txt", Data: []byte("hello")}}})
			if res.Output != "5" || len(res.Files) != 1 || string(res.Files[0].Data) != "HELLO" || res.Files[0].MIME != "text/plain" {
				t.Fatalf("files: %+v", res)
			}
			// A session persists; without one, nothing does.
			run(p["write"], runner.CodeRequest{SessionID: "s-" + rt})
			if res = run(p["read"], runner.CodeRequest{SessionID: "s-" + rt}); res.Output != `"kept"` {
				t.Fatalf("session: %+v", res)
			}
			if res = run(p["read"], runner.CodeRequest{}); res.ExitCode == 0 {
				t.Fatalf("a throwaway workspace kept a file: %+v", res)
			}
			// A 2 MB result arrives whole.
			if res = run(p["big"], runner.CodeRequest{}); len(res.Output) != 2<<20+2 || res.Error != "" {
				t.Fatalf("big: %d bytes, error %q", len(res.Output), res.Error)
			}
			// A flood of output is truncated with a marker. 5,000 lines of
			// 1,000 bytes, not 100,000 of 100: under -race each console call of
			// the QuickJS runtimes costs ~300 µs, and 100,000 of them met the
			// 30 s timeout before the cap (a CI failure).
			res = run(p["flood"], runner.CodeRequest{})
			if !cutMarker.MatchString(res.Logs) || len(res.Logs) > 4<<20+64 {
				t.Fatalf("flood: %d bytes of logs, ends %q; exit %d, error %q", len(res.Logs), res.Logs[max(0, len(res.Logs)-40):], res.ExitCode, res.Error)
			}
			// An error: exit code and the message.
			res = run(p["throw"], runner.CodeRequest{})
			if res.ExitCode != 1 || !strings.Contains(res.Error+res.Logs, "bad value") {
				t.Fatalf("throw: %+v", res)
			}
		})
	}
}

// The timeout kills the code and what it forked, even a child that left
// its process group.
func TestTimeoutKillsChildren(t *testing.T) {
	_, url := serve(t, service.Config{})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	for _, rt := range []string{"python", "node"} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, rt)
			if insecure() {
				t.Skip("without bubblewrap a child that calls setsid escapes the process group (documented)")
			}
			session := "fork-" + rt
			start := time.Now()
			res, err := r.Run(context.Background(), runner.CodeRequest{Code: programs[rt]["fork"], Runtime: rt, SessionID: session, Timeout: 3 * time.Second}, tools)
			if err != nil || res.ExitCode != -1 || !strings.Contains(res.Error, "timed out") || time.Since(start) > 45*time.Second { // the program sleeps 60 s
				t.Fatalf("%+v, %v after %v", res, err, time.Since(start))
			}
			// The beat file stops changing.
			read := func() string {
				res, _ := r.Run(context.Background(), runner.CodeRequest{Code: map[string]string{
					"python": "import os\nset_result(open('beat.txt').read() if os.path.exists('beat.txt') else '')",
					"node":   "const fs = require('fs'); setResult(fs.existsSync('beat.txt') ? fs.readFileSync('beat.txt', 'utf8') : '');",
				}[rt], Runtime: rt, SessionID: session}, nil)
				return res.Output
			}
			a := read()
			if a == "" || a == `""` {
				t.Fatal("the forked child never wrote its beat: the test would prove nothing")
			}
			time.Sleep(400 * time.Millisecond)
			if b := read(); a != b {
				t.Fatalf("a forked child still runs after the timeout: %s then %s", a, b)
			}
		})
	}
}

// Under bubblewrap, the code has no network, cannot write outside its
// workspace, and sees none of the server's environment.
func TestJail(t *testing.T) {
	needJail(t)
	t.Setenv("AIRLOCK_TEST_SECRET", "hunter2")
	_, url := serve(t, service.Config{})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	for _, rt := range []string{"python", "node"} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, rt)
			res, err := r.Run(context.Background(), runner.CodeRequest{Code: programs[rt]["escape"], Runtime: rt}, tools)
			if err != nil || strings.ReplaceAll(res.Output, " ", "") != `{"write":"refused","net":"refused","env":[]}` {
				t.Fatalf("%+v, %v", res, err)
			}
		})
	}
}

// Sessions: TTL eviction and deletion.
func TestWorkspaces(t *testing.T) {
	dir := t.TempDir()
	srv, url := serve(t, service.Config{Workspace: dir, SessionTTL: 50 * time.Millisecond})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	ctx := context.Background()
	res, err := r.Run(ctx, runner.CodeRequest{Code: programs["javascript"]["write"], Runtime: "javascript", SessionID: "ttl"}, nil)
	if err != nil || res.Error != "" {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ttl", "state.txt")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if gone := srv.Evict(); len(gone) != 1 || gone[0] != "ttl" {
		t.Fatalf("evicted %v", gone)
	}
	if _, err := os.Stat(filepath.Join(dir, "ttl")); !os.IsNotExist(err) {
		t.Fatal("the workspace is still there")
	}
	r.Run(ctx, runner.CodeRequest{Code: programs["javascript"]["write"], Runtime: "javascript", SessionID: "del"}, nil)
	for _, id := range []string{"del", "never-existed"} {
		req, _ := http.NewRequest(http.MethodDelete, url+"/workspace/"+id, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE %s: %v %v", id, resp.Status, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "del")); !os.IsNotExist(err) {
		t.Fatal("the deleted workspace is still there")
	}
}

// A session's workspace has a quota of bytes and of entries: a run that
// goes over fails with a clear error (Python and Node are killed while they
// write; JavaScript's writeFile throws), the workspace then refuses runs
// until it is deleted, and nothing is lost before that.
func TestWorkspaceQuota(t *testing.T) {
	dir := t.TempDir()
	_, url := serve(t, service.Config{Workspace: dir, WorkspaceQuotaBytes: 1 << 20, WorkspaceMaxEntries: 50})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	ctx := context.Background()
	fill := map[string]map[string]string{
		"python": {
			"bytes":   "i = 0\nwhile True:\n    open(f'f{i}', 'w').write('x' * 100000)\n    i += 1",
			"entries": "import os\nfor i in range(100000):\n    os.makedirs(f'd{i}', exist_ok=True)",
			"one":     "open('big', 'w').write('x' * (2 << 20))",
		},
		"node": {
			"bytes":   "const fs = require('fs'); for (let i = 0; ; i++) fs.writeFileSync('f' + i, 'x'.repeat(100000));",
			"entries": "const fs = require('fs'); for (let i = 0; i < 100000; i++) fs.mkdirSync('d' + i, { recursive: true });",
			"one":     "require('fs').writeFileSync('big', 'x'.repeat(2 << 20));",
		},
		"javascript": {
			"bytes":   "for (let i = 0; ; i++) writeFile('f' + i, 'x'.repeat(100000));",
			"entries": "for (let i = 0; i < 100000; i++) writeFile('e' + i, '');",
			"one":     "writeFile('big', 'x'.repeat(2 << 20));",
		},
	}
	for _, rt := range []string{"python", "node", "javascript"} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, rt)
			for _, kind := range []string{"bytes", "entries", "one"} {
				session := rt + "-" + kind
				start := time.Now()
				res, err := r.Run(ctx, runner.CodeRequest{Code: fill[rt][kind], Runtime: rt, SessionID: session, Timeout: 20 * time.Second}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if kind != "one" && !strings.Contains(res.Error, "workspace quota exceeded") {
					t.Fatalf("%s: error %q", kind, res.Error)
				}
				if kind == "one" && res.Error == "" {
					t.Fatalf("%s: a file over the quota was written", kind)
				}
				if d := time.Since(start); d > 10*time.Second {
					t.Fatalf("%s: stopped after %v", kind, d)
				}
				var size int64
				filepath.Walk(filepath.Join(dir, session), func(_ string, info os.FileInfo, err error) error {
					if err == nil && info.Mode().IsRegular() {
						size += info.Size()
					}
					return nil
				})
				// Python and Node are measured while they write and stopped at
				// most one measure late (~2 MB here; the bound leaves room for
				// a loaded machine, where a measure comes late: unstopped, they
				// write gigabytes in the 20 s); javascript never goes over.
				limit := int64(256 << 20)
				if rt == "javascript" {
					limit = 1 << 20
				}
				if size > limit {
					t.Fatalf("%s: %d bytes were written before the stop", kind, size)
				}
				t.Logf("%s: stopped with %d bytes written, after %v", kind, size, time.Since(start).Round(time.Millisecond))
			}
			if rt == "javascript" {
				return // it never went over
			}
			// A workspace over the quota runs nothing until it is deleted.
			session := rt + "-bytes"
			res, err := r.Run(ctx, runner.CodeRequest{Code: programs[rt]["write"], Runtime: rt, SessionID: session}, nil)
			if err != nil || !strings.Contains(res.Error, "workspace quota exceeded") {
				t.Fatalf("over the quota: %+v, %v", res, err)
			}
			req, _ := http.NewRequest(http.MethodDelete, url+"/workspace/"+session, nil)
			if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
				t.Fatalf("DELETE: %v", err)
			}
			res, err = r.Run(ctx, runner.CodeRequest{Code: programs[rt]["write"], Runtime: rt, SessionID: session}, nil)
			if err != nil || res.Error != "" || string(res.Output) != `"written"` {
				t.Fatalf("after DELETE: %+v, %v", res, err)
			}
		})
	}
}

// The reference protocol, spoken with raw HTTP requests.
func TestReferenceProtocol(t *testing.T) {
	_, url := serve(t, service.Config{MaxConcurrent: 1})
	post := func(path, body string) (int, map[string]any) {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	// Health.
	resp, _ := http.Get(url + "/health")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != `{"status":"ready"}` {
		t.Fatalf("health: %d %s", resp.StatusCode, b)
	}
	// A run with the reference's fields; a callback server of our own.
	var calls atomic.Int32
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ExecutionID string          `json:"execution_id"`
			Name        string          `json:"name"`
			Args        json.RawMessage `json:"args"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		calls.Add(1)
		if r.URL.Path != "/_oasis/dispatch" || body.ExecutionID != "e1" || body.Name != "echo" {
			w.Write([]byte(`{"error":"unexpected call"}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"data": string(body.Args)})
	}))
	defer cb.Close()
	status, m := post("/execute", `{"execution_id":"e1","callback_url":"`+cb.URL+`/_oasis/dispatch","code":"setResult(await callTool('echo', {x: 1}))","runtime":"javascript","session_id":"","timeout":0,"files":[{"name":"a.txt","data":"aGk=","mime":"text/plain"}]}`)
	if status != 200 || m["output"] != `{"x":1}` || m["exit_code"] != 0.0 || calls.Load() != 1 {
		t.Fatalf("execute: %d %v", status, m)
	}
	for _, c := range []struct {
		body   string
		status int
		msg    string
	}{
		{`{bad json`, 400, "invalid JSON"},
		{`{"code":"","runtime":"python"}`, 400, "code is empty"},
		{`{"code":"1","runtime":"ruby"}`, 400, "unsupported runtime"},
		{`{"code":"1","runtime":"javascript","files":[{"name":"../x","data":""}]}`, 400, "invalid file path"},
		{`{"code":"1","runtime":"javascript","files":[{"name":"/etc/passwd","data":""}]}`, 400, "invalid file path"},
	} {
		status, m := post("/execute", c.body)
		if status != c.status || !strings.Contains(fmt.Sprint(m["error"]), c.msg) {
			t.Errorf("%s: %d %v", c.body, status, m)
		}
	}
	if resp, _ := http.Get(url + "/execute"); resp.StatusCode != 405 {
		t.Errorf("GET /execute: %d", resp.StatusCode)
	}
	// Timeout: exit code -1.
	_, m = post("/execute", `{"code":"while (true) {}","runtime":"javascript","timeout":1}`)
	if m["exit_code"] != -1.0 || !strings.Contains(fmt.Sprint(m["error"]), "timed out") {
		t.Fatalf("timeout: %v", m)
	}
	// Busy: 503 at once, no queue.
	// The first execution holds the only slot: it says so through a tool
	// call before it loops.
	started := make(chan struct{})
	var once sync.Once
	hold := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started) })
		w.Write([]byte(`{"data":"1"}`))
	}))
	defer hold.Close()
	done := make(chan struct{})
	go func() {
		post("/execute", `{"code":"await callTool('started'); while (true) {}","runtime":"javascript","timeout":2,"callback_url":"`+hold.URL+`"}`)
		close(done)
	}()
	<-started
	status, m = post("/execute", `{"code":"setResult(1)","runtime":"javascript"}`)
	if status != 503 || m["error"] != "server busy" {
		t.Fatalf("busy: %d %v", status, m)
	}
	select {
	case <-done:
		t.Fatal("busy was answered only after the first execution ended: the request queued")
	default:
	}
	<-done
	// /v1/execute adds status and the structured error.
	status, m = post("/v1/execute", `{"code":"const a = 1;\nnull.f();","runtime":"javascript"}`)
	se, _ := m["scriptError"].(map[string]any)
	if status != 200 || m["status"] != "error" || se["line"] != 2.0 {
		t.Fatalf("v1: %d %v", status, m)
	}
	// Metrics.
	resp, _ = http.Get(url + "/metrics")
	b, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `airlock_executions_total{runtime="javascript",status="success"}`) || !strings.Contains(string(b), "airlock_rejected_total 1") {
		t.Fatalf("metrics:\n%s", b)
	}
}

// The runner: late callbacks, blocked tools, retries, and the local runner
// with the same results.
func TestRunner(t *testing.T) {
	_, url := serve(t, service.Config{})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	ctx := context.Background()
	res, err := r.Run(ctx, runner.CodeRequest{Code: "let m; try { await callTool('execute_code', { code: '1' }) } catch (e) { m = e.message } setResult(m)", Runtime: "javascript"}, tools)
	if err != nil || res.Output != `"Tool 'execute_code' failed: code cannot call execute_code"` {
		t.Fatalf("%+v, %v", res, err)
	}
	// A callback for an execution that ended.
	h := r.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/_oasis/dispatch", strings.NewReader(`{"execution_id":"gone","name":"add","args":{}}`)))
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "is not running") {
		t.Fatalf("late callback: %d %s", rec.Code, rec.Body)
	}
	// Retries on 5xx, with backoff.
	var hits atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if hits.Add(1) < 3 {
			w.WriteHeader(502)
			return
		}
		w.Write([]byte(`{"output":"1","logs":"","exit_code":0}`))
	}))
	defer flaky.Close()
	fr := runner.NewHTTPRunner(flaky.URL, runner.WithMaxRetries(3), runner.WithRetryDelay(10*time.Millisecond))
	defer fr.Close()
	if res, err := fr.Run(ctx, runner.CodeRequest{Code: "1", Runtime: "javascript"}, nil); err != nil || res.Output != "1" || hits.Load() != 3 {
		t.Fatalf("retry: %+v, %v, %d hits", res, err, hits.Load())
	}
	// 4xx is not retried.
	hits.Store(0)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		w.WriteHeader(400)
		w.Write([]byte(`{"error":"code is empty"}`))
	}))
	defer bad.Close()
	br := runner.NewHTTPRunner(bad.URL, runner.WithRetryDelay(time.Millisecond))
	var se *runner.ServiceError
	if _, err := br.Run(ctx, runner.CodeRequest{Runtime: "javascript"}, nil); !errors.As(err, &se) || se.Status != 400 || hits.Load() != 1 {
		t.Fatalf("400: %v, %d hits", err, hits.Load())
	}

	// The local runner gives the same results for the same request.
	local, err := runner.NewLocal(service.Config{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	var cr runner.CodeRunner = local
	for _, code := range []string{programs["typescript"]["roundtrip"], programs["javascript"]["files"]} {
		req := runner.CodeRequest{Code: code, Runtime: "typescript", Files: []runner.File{{Name: "in/data.txt", Data: []byte("hello")}}}
		a, err1 := cr.Run(ctx, req, tools)
		b, err2 := r.Run(ctx, req, tools)
		if err1 != nil || err2 != nil || a.Output != b.Output || a.ExitCode != b.ExitCode || len(a.Files) != len(b.Files) {
			t.Fatalf("local %+v (%v) vs remote %+v (%v)", a, err1, b, err2)
		}
	}
}

var _ = bytes.NewReader

// cutMarker ends output the service cut.
var cutMarker = regexp.MustCompile(`\n\.\.\.\[output truncated: [1-9][0-9]* bytes cut\]\n$`)

// Path traversal through symbolic links, both ways: a declared output file
// that points out of the workspace is refused, and so is an input file
// written through a link the code left.
func TestSymlinkTraversal(t *testing.T) {
	needRuntime(t, "python")
	_, url := serve(t, service.Config{})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	ctx := context.Background()
	res, err := r.Run(ctx, runner.CodeRequest{Runtime: "python", SessionID: "links", Code: "import os\nos.symlink('/etc/passwd', 'leak')\nos.symlink('/tmp', 'dir')\nopen('ok.txt', 'w').write('fine')\nset_result(1, files=['leak', 'ok.txt', '../escape'])"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Name != "ok.txt" || !strings.Contains(res.Error, "leak") || !strings.Contains(res.Error, "../escape") {
		t.Fatalf("%+v", res)
	}
	_, err = r.Run(ctx, runner.CodeRequest{Runtime: "javascript", SessionID: "links", Code: "setResult(1)",
		Files: []runner.File{{Name: "dir/planted.txt", Data: []byte("x")}}}, nil)
	var se *runner.ServiceError
	if !errors.As(err, &se) || se.Status != 400 {
		t.Fatalf("writing through a link: %v", err)
	}
	if _, err := os.Stat("/tmp/planted.txt"); err == nil {
		t.Fatal("a file was written outside the workspace")
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A returned file over the cap comes back as metadata; the callback server
// can be the application's own (WithCallbackExternal and Handler).
func TestFileCapAndExternalCallback(t *testing.T) {
	_, url := serve(t, service.Config{MaxFileBytes: 1000})
	mux := http.NewServeMux()
	app := httptest.NewServer(mux)
	defer app.Close()
	r := runner.NewHTTPRunner(url, runner.WithCallbackExternal(app.URL))
	defer r.Close()
	mux.Handle(runner.DispatchPath, r.Handler())
	res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: "javascript",
		Code: "writeFile('big.txt', 'z'.repeat(5000)); writeFile('small.txt', 'ok'); setResult(await callTool('add', { a: 1, b: 2 }), ['big.txt', 'small.txt'])"}, tools)
	if err != nil || res.Output != `{"sum": 3}` && res.Output != `{"sum":3}` {
		t.Fatalf("%+v, %v", res, err)
	}
	if len(res.Files) != 2 || res.Files[0].Data != nil || res.Files[0].Size != 5000 || string(res.Files[1].Data) != "ok" {
		t.Fatalf("files: %+v", res.Files)
	}
}

// The service with javascript in worker processes gives the same answers.
func TestServiceWorkers(t *testing.T) {
	_, url := serve(t, service.Config{Workers: 1})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	res, err := r.Run(context.Background(), runner.CodeRequest{Code: programs["typescript"]["roundtrip"], Runtime: "typescript"}, tools)
	if err != nil || !strings.Contains(res.Output, `"sum":5`) || !strings.Contains(res.Logs, "logged") {
		t.Fatalf("%+v, %v", res, err)
	}
}

// Without bubblewrap, python and node are refused, and javascript still runs.
func TestNoBwrapRefused(t *testing.T) {
	srv, err := service.New(service.Config{Workspace: t.TempDir(), BwrapBin: "no-such-bwrap"}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, rt := range []string{"python", "node"} {
		_, err := srv.Execute(context.Background(), service.ExecuteRequest{Code: "1", Runtime: rt}, nil)
		var re *service.RequestError
		if !errors.As(err, &re) || re.Status != 400 || !strings.Contains(err.Error(), "bubblewrap") {
			t.Fatalf("%s: %v", rt, err)
		}
	}
	resp, err := srv.Execute(context.Background(), service.ExecuteRequest{Code: "setResult(1)", Runtime: "javascript"}, nil)
	if err != nil || resp.Output != "1" {
		t.Fatalf("%+v, %v", resp, err)
	}
}

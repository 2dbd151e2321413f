package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// post sends a raw request to the service, with a bearer token when given.
func post(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// holdingTool is a callback server whose tool calls wait for release;
// started is closed at the first call. The test's end releases them too.
func holdingTool(t *testing.T) (url string, started <-chan struct{}, release func()) {
	t.Helper()
	start, hold := make(chan struct{}), make(chan struct{})
	var first, released sync.Once
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.Do(func() { close(start) })
		<-hold
		w.Write([]byte(`{"data":"1"}`))
	}))
	release = func() { released.Do(func() { close(hold) }) }
	t.Cleanup(func() { release(); cb.Close() })
	return cb.URL, start, release
}

// Issue 18 item 8: callbacks go to loopback and the hosts the operator
// lists, and no redirect is followed: a local server that redirects to
// another gets its 302 reported as an error, and the target is never
// called; a callback_url elsewhere is a clear 400 before anything runs.
func TestCallbackSSRF(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"data":"\"secret from the target\""}`))
	}))
	defer target.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/internal", http.StatusFound)
	}))
	defer redirect.Close()
	_, url := serve(t, service.Config{CallbackHosts: []string{"tools.example"}})
	code := `let out; try { out = await callTool('x', {}) } catch (e) { out = 'error: ' + e.message } setResult(out)`
	body := func(cb string) string {
		b, _ := json.Marshal(map[string]any{"code": code, "runtime": "javascript", "callback_url": cb})
		return string(b)
	}
	status, m := post(t, http.MethodPost, url+"/execute", "", body(redirect.URL+"/_oasis/dispatch"))
	out, _ := m["output"].(string)
	if status != 200 || !strings.Contains(out, "error: ") || !strings.Contains(out, "302") || hits.Load() != 0 {
		t.Fatalf("redirect: %d %v, target hit %d times", status, m, hits.Load())
	}
	for _, cb := range []string{"http://169.254.169.254/latest/meta-data", "http://10.0.0.1/", "http://example.com/x", "file:///etc/passwd", "http://user:pw@127.0.0.1/", "gopher://127.0.0.1/"} {
		status, m := post(t, http.MethodPost, url+"/execute", "", body(cb))
		if status != 400 || !strings.Contains(fmt.Sprint(m["error"]), "callback_url") {
			t.Errorf("%s: %d %v", cb, status, m)
		}
	}
	// Loopback by address and name is allowed; a listed host passes the check.
	for _, cb := range []string{target.URL, strings.Replace(target.URL, "127.0.0.1", "localhost", 1), "http://tools.example:1/"} {
		status, m := post(t, http.MethodPost, url+"/execute", "", body(cb))
		if status != 200 {
			t.Errorf("%s: %d %v", cb, status, m)
		}
	}
	if hits.Load() != 2 {
		t.Fatalf("the allowed target was called %d times, want 2", hits.Load())
	}
}

// Issue 18 item 9: with tokens, requests without one get 401 (but
// /health), a session belongs to the token that made it (another gets 403
// for runs and deletes), and a busy session is not deleted (409).
func TestSessionOwnership(t *testing.T) {
	_, url := serve(t, service.Config{Tokens: []string{"alice-token", "bob-token"}})
	run := func(token, session, code string) (int, map[string]any) {
		b, _ := json.Marshal(map[string]any{"code": code, "runtime": "javascript", "session_id": session})
		return post(t, http.MethodPost, url+"/execute", token, string(b))
	}
	if status, _ := run("", "s", "setResult(1)"); status != 401 {
		t.Fatalf("no token: %d", status)
	}
	if status, _ := run("mallory", "s", "setResult(1)"); status != 401 {
		t.Fatalf("a wrong token: %d", status)
	}
	if status, _ := post(t, http.MethodGet, url+"/metrics", "", ""); status != 401 {
		t.Fatalf("metrics without a token: %d", status)
	}
	if status, _ := post(t, http.MethodGet, url+"/health", "", ""); status != 200 {
		t.Fatalf("health: %d", status)
	}
	if status, m := run("alice-token", "chat:42", "writeFile('a.txt', 'alice'); setResult(1)"); status != 200 || m["error"] != nil {
		t.Fatalf("alice: %d %v", status, m)
	}
	if status, m := run("bob-token", "chat:42", "setResult(readFile('a.txt'))"); status != 403 || !strings.Contains(fmt.Sprint(m["error"]), "another credential") {
		t.Fatalf("bob reads alice's session: %d %v", status, m)
	}
	if status, _ := post(t, http.MethodDelete, url+"/workspace/chat:42", "bob-token", ""); status != 403 {
		t.Fatalf("bob deletes alice's session: %d", status)
	}
	if status, m := run("alice-token", "chat:42", "setResult(readFile('a.txt'))"); status != 200 || m["output"] != `"alice"` {
		t.Fatalf("alice again: %d %v", status, m)
	}
	// A busy session: alice's run holds it (it says so through a tool call)
	// while she tries to delete it.
	cb, started, release := holdingTool(t)
	done := make(chan int)
	go func() {
		b, _ := json.Marshal(map[string]any{"code": "await callTool('hold'); setResult(1)", "runtime": "javascript", "session_id": "chat:42", "callback_url": cb})
		req, _ := http.NewRequest(http.MethodPost, url+"/execute", strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer alice-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-started
	if status, m := post(t, http.MethodDelete, url+"/workspace/chat:42", "alice-token", ""); status != 409 || !strings.Contains(fmt.Sprint(m["error"]), "running") {
		t.Fatalf("deleting a busy session: %d %v", status, m)
	}
	release()
	if status := <-done; status != 200 {
		t.Fatalf("the held run: %d", status)
	}
	if status, _ := post(t, http.MethodDelete, url+"/workspace/chat:42", "alice-token", ""); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	// Once deleted, the id is free for another credential.
	if status, m := run("bob-token", "chat:42", "setResult(1)"); status != 200 {
		t.Fatalf("bob after the delete: %d %v", status, m)
	}
	// The runner sends its token.
	r := runner.NewHTTPRunner(url, runner.WithToken("bob-token"))
	defer r.Close()
	if res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: "javascript", SessionID: "chat:42", Code: "setResult(2)"}, nil); err != nil || res.Output != "2" {
		t.Fatalf("runner with a token: %+v, %v", res, err)
	}
	var se *runner.ServiceError
	if _, err := runner.NewHTTPRunner(url).Run(context.Background(), runner.CodeRequest{Runtime: "javascript", Code: "1"}, nil); !errors.As(err, &se) || se.Status != 401 {
		t.Fatalf("runner without a token: %v", err)
	}
}

// Issue 18 item 9: the server refuses to listen beyond loopback without a
// token, unless told.
func TestListenNeedsToken(t *testing.T) {
	for _, c := range []struct {
		cfg service.Config
		ok  bool
	}{
		{service.Config{Addr: ":9000"}, false},
		{service.Config{Addr: "0.0.0.0:9000"}, false},
		{service.Config{Addr: "10.1.2.3:9000"}, false},
		{service.Config{Addr: ":9000", Tokens: []string{"t"}}, true},
		{service.Config{Addr: ":9000", AllowNoToken: true}, true},
		{service.Config{Addr: "127.0.0.1:9000"}, true},
		{service.Config{Addr: "[::1]:9000"}, true},
		{service.Config{Addr: "localhost:9000"}, true},
		{service.Config{}, true}, // the default is loopback
	} {
		c.cfg.Workspace = t.TempDir()
		c.cfg.PythonBin, c.cfg.NodeBin = "no-such-python", "no-such-node" // not needed here; each costs a start
		srv, err := service.New(c.cfg, discard())
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "token")) {
			t.Errorf("%+v: %v", c.cfg, err)
		}
		if srv != nil {
			srv.Close()
		}
	}
}

// Issue 18 item 10: bodies are bounded before they are read (413 with the
// limit, from the declared length or while reading a chunked body), and a
// request that fails validation never takes the execution slot.
func TestRequestBounds(t *testing.T) {
	_, url := serve(t, service.Config{MaxRequestBytes: 1 << 20, MaxConcurrent: 1})
	big := `{"code":"1","runtime":"javascript","files":[{"name":"a","data":"` + strings.Repeat("A", 2<<20) + `"}]}`
	status, m := post(t, http.MethodPost, url+"/execute", "", big)
	if status != 413 || !strings.Contains(fmt.Sprint(m["error"]), "1048576 bytes") {
		t.Fatalf("declared length: %d %v", status, m)
	}
	// Chunked: no length declared.
	pr, pw := io.Pipe()
	go func() { io.Copy(pw, strings.NewReader(big)); pw.Close() }()
	req, _ := http.NewRequest(http.MethodPost, url+"/execute", pr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("chunked: %d", resp.StatusCode)
	}
	// Bad requests while the one slot is taken: 400, not 503.
	cb, started, release := holdingTool(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		post(t, http.MethodPost, url+"/execute", "", `{"code":"await callTool('hold')","runtime":"javascript","callback_url":"`+cb+`"}`)
	}()
	<-started
	for _, body := range []string{`{"code":"","runtime":"javascript"}`, `{"code":"1","runtime":"ruby"}`, `{"code":"1","runtime":"javascript","callback_url":"http://10.0.0.1/"}`, `{"code":"1","files":[{"name":"../x"}]}`} {
		if status, m := post(t, http.MethodPost, url+"/execute", "", body); status != 400 {
			t.Errorf("%s: %d %v", body, status, m)
		}
	}
	if status, _ := post(t, http.MethodPost, url+"/execute", "", `{"code":"setResult(1)","runtime":"javascript"}`); status != 503 {
		t.Errorf("a good request while busy: %d", status)
	}
	release()
	<-done
}

// Issue 18 item 10: callToolsParallel / call_tools_parallel keep at most
// MaxCallsInFlight callbacks in flight, in every runtime, and still give
// every result in order.
func TestCallsInFlight(t *testing.T) {
	const limit = 3
	_, url := serve(t, service.Config{MaxCallsInFlight: limit})
	var now, peak atomic.Int32
	tool := func(ctx context.Context, call runner.ToolCall) (string, error) {
		n := now.Add(1)
		defer now.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-overlap(ctx)
		return string(call.Args), nil
	}
	r := guarded(t, url)
	code := map[string]string{
		"python":     "set_result(sum(r['i'] for r in call_tools_parallel([('t', {'i': i}) for i in range(60)])))",
		"node":       "const r = await callToolsParallel(Array.from({ length: 60 }, (_, i) => ['t', { i }])); setResult(r.reduce((a, x) => a + x.i, 0));",
		"javascript": "const r = await callToolsParallel(Array.from({ length: 60 }, (_, i) => ['t', { i }])); setResult(r.reduce((a, x) => a + x.i, 0));",
	}
	for _, rt := range []string{"python", "node", "javascript"} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, rt)
			peak.Store(0)
			res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: rt, Code: code[rt]}, tool)
			if err != nil || res.Output != "1770" {
				t.Fatalf("%+v, %v", res, err)
			}
			t.Logf("peak %d", peak.Load())
			if p := peak.Load(); p > limit {
				t.Fatalf("%d callbacks in flight at once, limit %d", p, limit)
			}
		})
	}
	// Code that bypasses the prelude's pool (Promise.all of callTool) is
	// held by the server.
	peak.Store(0)
	res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: "javascript", Code: "const r = await Promise.all(Array.from({ length: 60 }, (_, i) => callTool('t', { i }))); setResult(r.length);"}, tool)
	if err != nil || res.Output != "60" || peak.Load() > limit {
		t.Fatalf("%+v, %v, peak %d", res, err, peak.Load())
	}
	needRuntime(t, "node")
	peak.Store(0)
	res, err = r.Run(context.Background(), runner.CodeRequest{Runtime: "node", Code: "const r = await Promise.all(Array.from({ length: 60 }, (_, i) => callTool('t', { i }))); setResult(r.length);"}, tool)
	if err != nil || res.Output != "60" || peak.Load() > limit {
		t.Fatalf("node: %+v, %v, peak %d", res, err, peak.Load())
	}
}

// overlap is a short wait that gives calls time to overlap.
func overlap(ctx context.Context) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		t := time.NewTimer(5 * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}()
	return c
}

package airlock_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// fetchNet is the network of the fetch tests: dials go only to loopback
// (anything else is refused and recorded, so a wrong policy cannot send a
// packet off the machine), and names resolve from a table, never by DNS.
type fetchNet struct {
	mu      sync.Mutex
	refused []string // non-loopback dials
	names   map[string][]netip.Addr
}

func (n *fetchNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if a, err := netip.ParseAddr(host); err != nil || !a.IsLoopback() {
		n.mu.Lock()
		n.refused = append(n.refused, addr)
		n.mu.Unlock()
		return nil, fmt.Errorf("test network: %s is not loopback", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (n *fetchNet) lookup(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n.names[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host (test resolver)")
}

func (n *fetchNet) dialsRefused() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.refused...)
}

// fetchServer is a TLS server on loopback that records what it was sent.
type fetchServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newFetchServer(t *testing.T, h http.HandlerFunc) *fetchServer {
	s := &fetchServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Header.Clone())
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fetchServer) addr() string { return strings.TrimPrefix(s.URL, "https://") }

func (s *fetchServer) headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.seen...)
}

func pool(servers ...*fetchServer) *x509.CertPool {
	p := x509.NewCertPool()
	for _, s := range servers {
		p.AddCert(s.Certificate())
	}
	return p
}

// runFetch runs code with fetch under the policy and returns its result
// (the program's default export, as JSON text).
func runFetch(t *testing.T, f *airlock.Fetcher, code string, opts ...func(*airlock.Options)) *airlock.Result {
	t.Helper()
	rt := airlock.NewRuntime(airlock.RuntimeConfig{})
	t.Cleanup(func() { rt.Close() })
	o := airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"fetch": f}, Timeout: time.Minute}
	for _, fn := range opts {
		fn(&o)
	}
	ex, err := rt.Run(context.Background(), code, o)
	if err != nil {
		t.Fatal(err)
	}
	return ex.Wait()
}

func resultJSON(t *testing.T, res *airlock.Result) map[string]any {
	t.Helper()
	if res.Status != airlock.StatusSuccess {
		t.Fatalf("run: %s %+v", res.Status, res.Error)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Result.(string)), &m); err != nil {
		t.Fatalf("%v: %v", err, res.Result)
	}
	return m
}

// An allowed host answers through fetch: a Response with its status,
// headers, body and URL; the secret of the host reaches the server in
// place of the header of the same name the code set, and the sandbox
// never sees it; a host not allowed is a TypeError that names it, and
// every request is in the record.
func TestFetch_AllowedHostAndSecrets(t *testing.T) {
	n := &fetchNet{}
	defer airlock.SetFetchNetwork(n.dial, n.lookup)()
	api := newFetchServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Set-Cookie", "a=1")
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"method":%q,"path":%q,"body":%q}`, r.Method, r.URL.RequestURI(), body)
	})
	f := airlock.Fetch(airlock.FetchPolicy{
		Allow:   []string{"api.example.com"},
		Secrets: map[string]map[string]string{"api.example.com": {"Authorization": "Bearer s3cret-token"}},
		Resolve: map[string]string{"api.example.com:443": api.addr()},
		RootCAs: pool(api),
	})
	res := runFetch(t, f, `
const r = await fetch("https://api.example.com/v1/items?q=1", { method: "POST", body: JSON.stringify({ a: 1 }),
  headers: { "content-type": "application/json", "authorization": "Bearer the-code's-own", "x-trace": "t1" } });
const data = await r.json();
let refused;
try { await fetch("https://evil.test/x"); } catch (e) { refused = e.name + ": " + e.message; }
export default JSON.stringify({ status: r.status, ok: r.ok, url: r.url, redirected: r.redirected, type: r.headers.get("content-type"),
  cookie: r.headers.getSetCookie(), data, refused, isResponse: r instanceof Response });`)
	m := resultJSON(t, res)
	data, _ := m["data"].(map[string]any)
	if m["status"] != 201.0 || m["ok"] != true || m["url"] != "https://api.example.com/v1/items?q=1" || m["redirected"] != false ||
		m["type"] != "application/json" || data["method"] != "POST" || data["path"] != "/v1/items?q=1" || data["body"] != `{"a":1}` ||
		m["isResponse"] != true || fmt.Sprint(m["cookie"]) != "[a=1]" {
		t.Errorf("result %v", m)
	}
	if s, _ := m["refused"].(string); !strings.HasPrefix(s, "TypeError: fetch failed") || !strings.Contains(s, "evil.test") || !strings.Contains(s, "not allowed") {
		t.Errorf("refusal %q", m["refused"])
	}
	seen := api.headers()
	if len(seen) != 1 || seen[0].Get("Authorization") != "Bearer s3cret-token" || len(seen[0].Values("Authorization")) != 1 || seen[0].Get("X-Trace") != "t1" {
		t.Errorf("the server saw %v", seen)
	}
	if strings.Contains(fmt.Sprint(res), "s3cret") {
		t.Errorf("the secret is in the result: %v", res)
	}
	recs := f.Records()
	if len(recs) != 2 || !recs[0].Allowed || recs[0].Host != "api.example.com" || recs[0].Status != 201 || recs[0].Method != "POST" ||
		recs[0].Path != "/v1/items" || recs[1].Allowed || recs[1].Host != "evil.test" {
		t.Errorf("records %+v", recs)
	}
	if strings.Contains(fmt.Sprintf("%+v", recs), "s3cret") {
		t.Errorf("the secret is in the records")
	}
	if d := n.dialsRefused(); len(d) != 0 {
		t.Errorf("dials beyond loopback: %v", d)
	}
}

// Redirects are followed hop by hop and each checked: a redirect to a host
// not allowed is refused; one to another allowed host carries that host's
// secret, not the first one's, and drops the code's Authorization.
func TestFetch_Redirects(t *testing.T) {
	n := &fetchNet{}
	defer airlock.SetFetchNetwork(n.dial, n.lookup)()
	other := newFetchServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "landed") })
	first := newFetchServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, "https://evil.test/steal", http.StatusFound)
		case "/other":
			http.Redirect(w, r, "https://other.example.com/x", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	})
	f := airlock.Fetch(airlock.FetchPolicy{
		Allow:   []string{"first.example.com", "other.example.com"},
		Secrets: map[string]map[string]string{"first.example.com": {"X-Key": "first-secret"}, "other.example.com": {"X-Other": "other-secret"}},
		Resolve: map[string]string{"first.example.com:443": first.addr(), "other.example.com:443": other.addr()},
		RootCAs: pool(first, other), MaxRedirects: 3,
	})
	m := resultJSON(t, runFetch(t, f, `
const msg = async (p) => { try { const r = await p; return [r.status, r.url, r.redirected, await r.text()]; } catch (e) { return e.name + ": " + e.message; } };
export default JSON.stringify({
  away: await msg(fetch("https://first.example.com/away")),
  other: await msg(fetch("https://first.example.com/other", { headers: { authorization: "Bearer mine" } })),
  loop: await msg(fetch("https://first.example.com/loop")),
  manual: await msg(fetch("https://first.example.com/away", { redirect: "manual" })),
  error: await msg(fetch("https://first.example.com/away", { redirect: "error" })),
});`))
	if s, _ := m["away"].(string); !strings.Contains(s, "evil.test") || !strings.Contains(s, "not allowed") {
		t.Errorf("away: %v", m["away"])
	}
	if fmt.Sprint(m["other"]) != "[200 https://other.example.com/x true landed]" {
		t.Errorf("other: %v", m["other"])
	}
	if s, _ := m["loop"].(string); !strings.Contains(s, "more than 3 redirects") {
		t.Errorf("loop: %v", m["loop"])
	}
	if fmt.Sprint(m["manual"]) != "[302 https://first.example.com/away false <a href=\"https://evil.test/steal\">Found</a>.\n\n]" {
		t.Errorf("manual: %q", fmt.Sprint(m["manual"]))
	}
	if s, _ := m["error"].(string); !strings.Contains(s, "redirect") {
		t.Errorf("error: %v", m["error"])
	}
	for _, h := range other.headers() {
		if h.Get("X-Key") != "" || h.Get("Authorization") != "" || h.Get("X-Other") != "other-secret" {
			t.Errorf("the other host saw %v", h)
		}
	}
	if d := n.dialsRefused(); len(d) != 0 {
		t.Errorf("dials beyond loopback: %v", d)
	}
}

// Addresses no public host has are refused after resolution unless the
// operator mapped the name: a private, loopback, link-local (metadata) or
// unspecified IP literal, a name that resolves to one (DNS rebinding), an
// IPv4-mapped IPv6 loopback; none is dialled. http is refused unless
// allowed.
func TestFetch_PrivateAddressesRefused(t *testing.T) {
	n := &fetchNet{names: map[string][]netip.Addr{
		"rebind.test": {netip.MustParseAddr("127.0.0.1")},
		"inside.test": {netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::1")},
	}}
	defer airlock.SetFetchNetwork(n.dial, n.lookup)()
	f := airlock.Fetch(airlock.FetchPolicy{Allow: []string{"*.test", "10.0.0.1", "169.254.169.254", "127.0.0.1", "[::1]",
		"0.0.0.0", "[::ffff:7f00:1]", "100.64.0.1", "localhost"}, AllowHTTP: true})
	m := resultJSON(t, runFetch(t, f, `
const out = {};
for (const u of ["http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "https://127.0.0.1/", "https://[::1]/",
  "http://0.0.0.0/", "https://[::ffff:127.0.0.1]/", "http://100.64.0.1/", "https://rebind.test/", "https://inside.test/"]) {
  try { await fetch(u); out[u] = "fetched"; } catch (e) { out[u] = e.name + ": " + e.message; }
}
export default JSON.stringify(out);`))
	for u, v := range m {
		s, _ := v.(string)
		if !strings.HasPrefix(s, "TypeError: fetch failed") || !strings.Contains(s, "private, loopback") {
			t.Errorf("%s: %v", u, v)
		}
	}
	if d := n.dialsRefused(); len(d) != 0 {
		t.Errorf("dials attempted: %v", d)
	}
	for _, r := range f.Records() {
		if r.Allowed || !strings.Contains(r.Error, "refused") {
			t.Errorf("record %+v", r)
		}
	}
	strict := airlock.Fetch(airlock.FetchPolicy{Allow: []string{"api.example.com"}})
	m = resultJSON(t, runFetch(t, strict, `
let out; try { await fetch("http://api.example.com/"); } catch (e) { out = e.message; }
export default JSON.stringify({ out });`))
	if s, _ := m["out"].(string); !strings.Contains(s, "only https") {
		t.Errorf("http: %v", m["out"])
	}
}

// A response past MaxResponseBytes fails the fetch; a request body past
// MaxRequestBytes too, before anything is sent. A stop of the run cancels
// a request in flight: the server sees its request end.
func TestFetch_Bounds(t *testing.T) {
	n := &fetchNet{}
	defer airlock.SetFetchNetwork(n.dial, n.lookup)()
	cancelled := make(chan struct{})
	api := newFetchServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write(make([]byte, 5000))
		case "/hang":
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(cancelled)
		}
	})
	f := airlock.Fetch(airlock.FetchPolicy{Allow: []string{"api.example.com"}, Resolve: map[string]string{"api.example.com:443": api.addr()},
		RootCAs: pool(api), MaxResponseBytes: 4096, MaxRequestBytes: 100})
	m := resultJSON(t, runFetch(t, f, `
const msg = async (p) => { try { await p; return "ok"; } catch (e) { return e.message; } };
export default JSON.stringify({ big: await msg(fetch("https://api.example.com/big")),
  body: await msg(fetch("https://api.example.com/x", { method: "POST", body: "x".repeat(101) })) });`))
	if s, _ := m["big"].(string); !strings.Contains(s, "MaxResponseBytes") {
		t.Errorf("big: %v", m["big"])
	}
	if s, _ := m["body"].(string); !strings.Contains(s, "MaxRequestBytes") {
		t.Errorf("body: %v", m["body"])
	}
	res := runFetch(t, f, `await fetch("https://api.example.com/hang"); export default 1;`, func(o *airlock.Options) { o.Timeout = 300 * time.Millisecond })
	if res.Status != airlock.StatusTerminated {
		t.Errorf("hang: %s", res.Status)
	}
	select {
	case <-cancelled:
	case <-time.After(time.Minute): // a hang guard, not a speed bound
		t.Fatal("the server's request was never cancelled")
	}
}

// Approve decides about a host that Allow does not cover.
func TestFetch_Approve(t *testing.T) {
	n := &fetchNet{}
	defer airlock.SetFetchNetwork(n.dial, n.lookup)()
	api := newFetchServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hi") })
	var asked []string
	f := airlock.Fetch(airlock.FetchPolicy{Resolve: map[string]string{"ok.example.com:443": api.addr(), "no.example.com:443": api.addr()},
		RootCAs: pool(api), Approve: func(_ context.Context, host string) bool {
			asked = append(asked, host)
			return host == "ok.example.com:443"
		}})
	m := resultJSON(t, runFetch(t, f, `
const msg = async (p) => { try { return await (await p).text(); } catch (e) { return e.name; } };
export default JSON.stringify({ ok: await msg(fetch("https://ok.example.com/")), no: await msg(fetch("https://no.example.com/")) });`))
	if m["ok"] != "hi" || m["no"] != "TypeError" || fmt.Sprint(asked) != "[ok.example.com:443 no.example.com:443]" {
		t.Errorf("%v, asked %v", m, asked)
	}
}

// A Fetcher or the timers where they do not go say so: in a module of
// Options.Imports, under another name, in worker processes; the timers as
// an Executor's tool.
func TestFetch_WhereItDoesNotGo(t *testing.T) {
	f := airlock.Fetch(airlock.FetchPolicy{})
	_, err := airlock.Run(context.Background(), `import {fetch} from "net"; export default 1`, airlock.Options{Imports: map[string]airlock.Module{"net": {"fetch": f}}})
	if err == nil || !strings.Contains(err.Error(), "Options.Globals") {
		t.Errorf("in Imports: %v", err)
	}
	_, err = airlock.Run(context.Background(), `export default typeof http`, airlock.Options{Globals: map[string]any{"http": f}})
	if err == nil || !strings.Contains(err.Error(), `Globals["http"]: this value is the global fetch, under that name only`) {
		t.Errorf("under another name: %v", err)
	}
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Cleanup(context.Background())
	if err := ex.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ex.SendTools(context.Background(), map[string]any{"setTimeout": airlock.Timers()["setTimeout"]}); err == nil || !strings.Contains(err.Error(), "timers do not reach an Executor") {
		t.Errorf("timers as a tool: %v", err)
	}
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1})
	defer rt.Close()
	if _, err := rt.Run(context.Background(), `export default 1`, airlock.Options{Imports: map[string]airlock.Module{"net": {"fetch": f}}}); err == nil || !strings.Contains(err.Error(), "Options.Globals") {
		t.Errorf("in Imports, in a worker: %v", err)
	}
}

// In worker processes (RuntimeConfig.Workers) fetch and the timers are
// the same: the requests are made by the host's process (its policy, its
// secrets, its record), the sandbox in the worker gets the same Response,
// and its timers fire.
func TestFetch_Worker(t *testing.T) {
	n := &fetchNet{}
	defer airlock.SetFetchNetwork(n.dial, n.lookup)()
	api := newFetchServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"path":%q,"key":%t}`, r.URL.Path, r.Header.Get("X-Key") == "worker-s3cret")
	})
	f := airlock.Fetch(airlock.FetchPolicy{
		Allow:   []string{"api.example.com"},
		Secrets: map[string]map[string]string{"api.example.com": {"X-Key": "worker-s3cret"}},
		Resolve: map[string]string{"api.example.com:443": api.addr()},
		RootCAs: pool(api),
	})
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1})
	defer rt.Close()
	globals := map[string]any{"fetch": f}
	maps.Copy(globals, airlock.Timers())
	ex, err := rt.Run(context.Background(), `
const r = await fetch("https://api.example.com/w");
let refused; try { await fetch("https://evil.test/"); } catch (e) { refused = e.name; }
const order = [];
await new Promise((done) => { setTimeout(() => { order.push("late"); done(); }, 30); setTimeout(() => order.push("early"), 1); });
export default JSON.stringify({ data: await r.json(), isResponse: r instanceof Response, refused, order });`,
		airlock.Options{Language: airlock.JavaScript, Globals: globals, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	m := resultJSON(t, ex.Wait())
	if fmt.Sprint(m) != "map[data:map[key:true path:/w] isResponse:true order:[early late] refused:TypeError]" {
		t.Errorf("result %v", m)
	}
	if recs := f.Records(); len(recs) != 2 || recs[0].Status != 200 || recs[1].Allowed {
		t.Errorf("records %+v", recs)
	}
	if d := n.dialsRefused(); len(d) != 0 {
		t.Errorf("dials beyond loopback: %v", d)
	}
}

// An Executor's fetch is a Fetcher sent as a tool: the same fetch as a
// run's (the sandbox's Response, the secret at the server and nowhere in
// the sandbox, a host not allowed refused, every request recorded), from
// step to step; the host function under it is no global a step can find;
// a name keeps its kind (a function cannot replace a Fetcher), and a
// Fetcher is fetch under that name only; and a
// request in flight when its step is interrupted is cancelled.
func TestFetch_Executor(t *testing.T) {
	n := &fetchNet{}
	defer airlock.SetFetchNetwork(n.dial, n.lookup)()
	arrived, hang := make(chan struct{}), make(chan struct{})
	api := newFetchServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			close(arrived)
			select {
			case <-r.Context().Done():
				close(hang)
			case <-time.After(time.Minute):
			}
			return
		}
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	})
	f := airlock.Fetch(airlock.FetchPolicy{
		Allow:   []string{"api.example.com"},
		Secrets: map[string]map[string]string{"api.example.com": {"Authorization": "Bearer s3cret-token"}},
		Resolve: map[string]string{"api.example.com:443": api.addr()},
		RootCAs: pool(api),
	})
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Cleanup(context.Background())
	ctx := context.Background()
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ex.SendTools(ctx, map[string]any{"fetch": f, "lookup": func(id int) string { return "x" }}); err != nil {
		t.Fatal(err)
	}
	step := func(code string) string {
		t.Helper()
		out, err := ex.Run(ctx, code)
		if err != nil {
			t.Fatalf("%s: %v", code, err)
		}
		return fmt.Sprint(out.Output)
	}
	got := step(`const r = await fetch("https://api.example.com/one", { headers: { authorization: "mine" } });
JSON.stringify({ data: await r.json(), isResponse: r instanceof Response, status: r.status })`)
	if got != `{"data":{"path":"/one"},"isResponse":true,"status":200}` {
		t.Errorf("first step: %s", got)
	}
	got = step(`let refused; try { await fetch("https://evil.test/"); } catch (e) { refused = e.name + ": " + e.message }
const again = await (await fetch("https://api.example.com/two")).text();
const names = Object.getOwnPropertyNames(globalThis).filter((n) => { const d = Object.getOwnPropertyDescriptor(globalThis, n); return typeof d.value === "function" && d.value.name === "fetch"; });
JSON.stringify({ refused, again, names, writable: Object.getOwnPropertyDescriptor(globalThis, "fetch").writable })`)
	var m map[string]any
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if s, _ := m["refused"].(string); !strings.HasPrefix(s, "TypeError: fetch failed") || !strings.Contains(s, "evil.test") {
		t.Errorf("refusal: %s", got)
	}
	if m["again"] != `{"path":"/two"}` || fmt.Sprint(m["names"]) != "[fetch]" || m["writable"] != false {
		t.Errorf("second step: %s", got)
	}
	if strings.Contains(got, "s3cret") {
		t.Errorf("the secret reached the sandbox: %s", got)
	}
	for _, h := range api.headers() {
		if h.Get("Authorization") != "Bearer s3cret-token" {
			t.Errorf("the server saw %v", h)
		}
	}
	if err := ex.SendTools(ctx, map[string]any{"fetch": func() {}}); err == nil || !strings.Contains(err.Error(), "another kind of tool") {
		t.Errorf("a function in place of a Fetcher: %v", err)
	}
	if err := ex.SendTools(ctx, map[string]any{"lookup": f}); err == nil || !strings.Contains(err.Error(), `tool "lookup"`) || !strings.Contains(err.Error(), "the global fetch, under that name only") {
		t.Errorf("a Fetcher under another name: %v", err)
	}
	// A step interrupted while it awaits a request: the request is
	// cancelled, and the executor stays ready.
	go func() {
		<-arrived
		ex.Interrupt()
	}()
	if _, err := ex.Run(ctx, `await fetch("https://api.example.com/hang")`); err == nil || !strings.Contains(err.Error(), "ERR_INTERRUPTED") {
		t.Errorf("the interrupted step: %v", err)
	}
	<-hang
	if got := step(`(await fetch("https://api.example.com/three")).status`); got != "200" {
		t.Errorf("after the interrupt: %s", got)
	}
	// The cancelled request's record is written when its call returns,
	// which may come after the next step's.
	recs := f.Records()
	for i := 0; len(recs) < 5 && i < 1000; i++ {
		time.Sleep(10 * time.Millisecond)
		recs = f.Records()
	}
	paths := map[string]airlock.FetchRecord{}
	for _, r := range recs {
		paths[r.Path] = r
	}
	if len(recs) != 5 || recs[1].Allowed || recs[1].Host != "evil.test" || paths["/hang"].Status != 0 || paths["/hang"].Error == "" || paths["/three"].Status != 200 {
		t.Errorf("records %+v", recs)
	}
	if d := n.dialsRefused(); len(d) != 0 {
		t.Errorf("dials beyond loopback: %v", d)
	}
}

// What reaches the host is the code's to shape, whatever the sandbox's
// Request checked: a forbidden method forced through Request's prototype
// is refused by the host. Secrets go over https only: an http request to
// the same host (allowed by AllowHTTP) carries none.
func TestFetch_HostChecksAgain(t *testing.T) {
	n := &fetchNet{}
	defer airlock.SetFetchNetwork(n.dial, n.lookup)()
	var mu sync.Mutex
	var methods []string
	var keys []string
	record := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method)
		keys = append(keys, r.Header.Get("X-Key"))
		mu.Unlock()
	}
	api := newFetchServer(t, record)
	plain := httptest.NewServer(http.HandlerFunc(record))
	defer plain.Close()
	f := airlock.Fetch(airlock.FetchPolicy{Allow: []string{"api.example.com"}, AllowHTTP: true, RootCAs: pool(api),
		Secrets: map[string]map[string]string{"api.example.com": {"X-Key": "k"}},
		Resolve: map[string]string{"api.example.com:443": api.addr(), "api.example.com:80": strings.TrimPrefix(plain.URL, "http://")}})
	m := resultJSON(t, runFetch(t, f, `
const out = {};
await fetch("https://api.example.com/");
await fetch("http://api.example.com/");
Object.defineProperty(Request.prototype, "method", { get() { return "TRACE"; }, configurable: true });
try { await fetch("https://api.example.com/"); out.trace = "sent"; } catch (e) { out.trace = e.message; }
export default JSON.stringify(out);`))
	if s, _ := m["trace"].(string); !strings.Contains(s, "forbidden") {
		t.Errorf("TRACE: %v", m["trace"])
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(methods) != "[GET GET]" || fmt.Sprint(keys) != "[k ]" {
		t.Errorf("the servers saw methods %v, keys %q", methods, keys)
	}
}

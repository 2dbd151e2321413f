package fetch

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// loopbackOnly is the tests' network: dials beyond loopback are refused
// and recorded; no name is looked up.
type loopbackOnly struct {
	mu      sync.Mutex
	refused []string
}

func (n *loopbackOnly) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, _ := net.SplitHostPort(addr)
	if a, err := netip.ParseAddr(host); err != nil || !a.IsLoopback() {
		n.mu.Lock()
		n.refused = append(n.refused, addr)
		n.mu.Unlock()
		return nil, fmt.Errorf("test network: %s is not loopback", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (n *loopbackOnly) lookup(context.Context, string, string) ([]netip.Addr, error) {
	return nil, errors.New("no lookups in tests")
}

// serveProxy serves a proxy for f on a unix socket; stop ends it and
// returns what ServeProxy did (once; the test's cleanup stops it too).
func serveProxy(t *testing.T, f *Fetcher) (sock string, ca *CA, stop func() error) {
	t.Helper()
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(t.TempDir(), "proxy")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.ServeProxy(ctx, ln, ca) }()
	stop = sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("ServeProxy: %v", err)
		}
	})
	return sock, ca, stop
}

// startProxy serves a proxy for f and returns a client that reaches it on
// its socket and trusts only its CA.
func startProxy(t *testing.T, f *Fetcher) *http.Client {
	t.Helper()
	sock, ca, _ := serveProxy(t, f)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	tr := &http.Transport{
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy.invalid:3128"}),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// The proxy makes a client's requests under the policy: https through a
// CONNECT, read with a certificate of its CA, with the host's secret in
// place of the client's header; a redirect is the client's to follow (and
// is checked again when it does); a host not allowed is a 403 at the
// CONNECT, http without AllowHTTP a 403; every request is recorded;
// nothing is dialled beyond loopback.
func TestProxy(t *testing.T) {
	n := &loopbackOnly{}
	defer SetNetwork(n.dial, n.lookup)()
	var mu sync.Mutex
	var seen []string
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/landed", http.StatusFound)
		case "/away":
			http.Redirect(w, r, "https://evil.test/", http.StatusFound)
		default:
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Answer", "42")
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, body)
		}
	}))
	defer api.Close()
	roots := x509.NewCertPool()
	roots.AddCert(api.Certificate())
	f := New(Policy{
		Allow:   []string{"api.example.com"},
		Secrets: map[string]map[string]string{"api.example.com": {"Authorization": "Bearer proxy-s3cret"}},
		Resolve: map[string]string{"api.example.com:443": api.Listener.Addr().String()},
		RootCAs: roots,
	})
	c := startProxy(t, f)

	req, _ := http.NewRequest("POST", "https://api.example.com/items?q=1", strings.NewReader("hello"))
	req.Header.Set("Authorization", "Bearer the-code's-own")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "POST /items hello" || resp.Header.Get("X-Answer") != "42" {
		t.Errorf("POST: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, err = c.Get("https://api.example.com/redirect")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "GET /landed " {
		t.Errorf("redirect: %d %q", resp.StatusCode, body)
	}
	if _, err := c.Get("https://api.example.com/away"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a redirect to a host not allowed: %v", err)
	}
	if _, err := c.Get("https://evil.test/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a host not allowed: %v", err)
	}
	resp, err = c.Get("http://api.example.com/plain")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "http is not allowed") {
		t.Errorf("http: %d %q", resp.StatusCode, body)
	}

	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	want := "POST /items?q=1 auth=Bearer proxy-s3cret\nGET /redirect auth=Bearer proxy-s3cret\nGET /landed auth=Bearer proxy-s3cret\nGET /away auth=Bearer proxy-s3cret"
	if got != want {
		t.Errorf("the server saw:\n%s\nwant:\n%s", got, want)
	}
	var hosts []string
	for _, r := range f.Records() {
		hosts = append(hosts, fmt.Sprintf("%s %s%s %d %t", r.Method, r.Host, r.Path, r.Status, r.Allowed))
	}
	if strings.Join(hosts, "; ") != "POST api.example.com/items 200 true; GET api.example.com/redirect 302 true; GET api.example.com/landed 200 true; GET api.example.com/away 302 true; CONNECT evil.test 0 false; CONNECT evil.test 0 false; GET api.example.com/plain 0 false" {
		t.Errorf("records: %s", strings.Join(hosts, "; "))
	}
	if len(n.refused) != 0 {
		t.Errorf("dials beyond loopback: %v", n.refused)
	}
}

// The proxy's edges: over http (AllowHTTP) hop-by-hop and proxy headers
// are not passed on and no secret is added; a name that resolves to a
// private address is refused with nothing dialled; inside a tunnel only a
// path of the tunnel's host may be named; HEAD keeps the host's length;
// at the end every request, one still in flight included, is recorded
// before ServeProxy returns.
func TestProxy_Edges(t *testing.T) {
	n := &loopbackOnly{}
	lookup := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host == "internal.example.com" {
			return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
		}
		return nil, errors.New("no such host (test resolver)")
	}
	defer SetNetwork(n.dial, lookup)()
	var mu sync.Mutex
	var seen []http.Header
	arrived := make(chan struct{}, 1)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		if r.URL.Path == "/hang" {
			arrived <- struct{}{}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "plain")
	}))
	defer plain.Close()
	f := New(Policy{
		Allow:     []string{"plain.example.com", "internal.example.com", "a.example.com"},
		AllowHTTP: true,
		Secrets:   map[string]map[string]string{"plain.example.com": {"X-Key": "never-over-http"}},
		Resolve:   map[string]string{"plain.example.com:80": plain.Listener.Addr().String()},
	})
	sock, ca, stop := serveProxy(t, f)
	raw := func(req string) string {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, req)
		b, _ := io.ReadAll(c)
		return string(b)
	}
	got := raw("GET http://plain.example.com/x HTTP/1.1\r\nHost: plain.example.com\r\nConnection: close, X-Drop\r\nX-Drop: 1\r\nKeep-Alive: 5\r\nProxy-Authorization: Basic eDp5\r\nX-Keep: 1\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 200") || !strings.HasSuffix(got, "plain") {
		t.Errorf("http: %q", got)
	}
	got = raw("HEAD http://plain.example.com/x HTTP/1.1\r\nHost: plain.example.com\r\nConnection: close\r\n\r\n")
	if !strings.Contains(got, "Content-Length: 5") {
		t.Errorf("HEAD: %q", got)
	}
	mu.Lock()
	h := seen[0]
	mu.Unlock()
	if h.Get("X-Drop") != "" || h.Get("Keep-Alive") != "" || h.Get("Proxy-Authorization") != "" || h.Get("X-Keep") != "1" || h.Get("X-Key") != "" {
		t.Errorf("the server saw %v", h)
	}
	got = raw("GET http://internal.example.com/ HTTP/1.1\r\nHost: internal.example.com\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("a private address: %q", got)
	}
	// Inside a tunnel, a request that names another host is refused.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "CONNECT a.example.com:443 HTTP/1.1\r\nHost: a.example.com:443\r\n\r\n")
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	tc := tls.Client(&readerConn{Conn: c, r: br}, &tls.Config{ServerName: "a.example.com", RootCAs: roots})
	io.WriteString(tc, "GET https:.b.a.example.com/x HTTP/1.1\r\nHost: a.example.com\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(tc)
	tc.Close()
	if !strings.HasPrefix(string(b), "HTTP/1.1 400") {
		t.Errorf("another host inside a tunnel: %q", b)
	}
	// A request in flight at the end is recorded before ServeProxy returns.
	go func() { // (raw's Fatal is for the test's goroutine)
		if c, err := net.Dial("unix", sock); err == nil {
			defer c.Close()
			io.WriteString(c, "GET http://plain.example.com/hang HTTP/1.1\r\nHost: plain.example.com\r\n\r\n")
			io.ReadAll(c)
		}
	}()
	<-arrived
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	recs := f.Records()
	last := recs[len(recs)-1]
	if last.Path != "/hang" || last.Error == "" {
		t.Errorf("records: %+v", recs)
	}
	if len(n.refused) != 0 {
		t.Errorf("dials beyond loopback: %v", n.refused)
	}
}

// readerConn is a connection whose first bytes were read into r.
type readerConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *readerConn) Read(b []byte) (int, error) { return c.r.Read(b) }

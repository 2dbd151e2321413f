package fetch

import (
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

// startProxy serves a proxy for f on a unix socket and returns a client
// that reaches it there and trusts only its CA.
func startProxy(t *testing.T, f *Fetcher) *http.Client {
	t.Helper()
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "proxy")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.ServeProxy(ctx, ln, ca) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeProxy: %v", err)
		}
	})
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
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" auth="+r.Header.Get("Authorization")+" proxy-auth="+r.Header.Get("Proxy-Authorization"))
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
	want := "POST /items?q=1 auth=Bearer proxy-s3cret proxy-auth=\nGET /redirect auth=Bearer proxy-s3cret proxy-auth=\nGET /landed auth=Bearer proxy-s3cret proxy-auth=\nGET /away auth=Bearer proxy-s3cret proxy-auth="
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

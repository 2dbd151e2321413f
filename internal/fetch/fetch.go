// Package fetch is the host side of the sandbox's fetch: HTTP requests
// made by Go's net/http under a policy (hosts allowed, secrets added by
// the host, addresses refused after resolution, bounds), and the
// JavaScript glue (glue.js) that makes the host function into fetch,
// giving Responses.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Glue is the JavaScript that makes the host function into fetch: a
// function expression called with it (source.Config.Glue).
//
//go:embed glue.js
var Glue string

// Policy is what a fetch may do (airlock.FetchPolicy, documented there).
type Policy struct {
	Allow            []string
	AllowHTTP        bool
	Secrets          map[string]map[string]string
	Resolve          map[string]string
	MaxRequestBytes  int64
	MaxResponseBytes int64
	MaxRedirects     int
	Timeout          time.Duration
	MaxConcurrent    int
	Approve          func(ctx context.Context, host string) bool
	RootCAs          *x509.CertPool
}

// Record is one request as the host saw it (airlock.FetchRecord).
type Record struct {
	Method   string
	Host     string
	Path     string
	Status   int
	Bytes    int64
	Duration time.Duration
	Allowed  bool
	Error    string
}

// Request is what the glue sends: the Request's parts.
type Request struct {
	Method   string      `json:"method"`
	URL      string      `json:"url"`
	Headers  [][2]string `json:"headers"`
	Body     []byte      `json:"body"`
	Redirect string      `json:"redirect"`
}

// Response is what the glue makes a Response of.
type Response struct {
	Status     int         `json:"status"`
	StatusText string      `json:"statusText"`
	URL        string      `json:"url"`
	Redirected bool        `json:"redirected"`
	Headers    [][2]string `json:"headers"`
	Body       []byte      `json:"body"`
}

// Fetcher makes requests under a policy and keeps their records.
type Fetcher struct {
	policy Policy
	client *http.Client
	slots  chan struct{} // a request in flight holds one (MaxConcurrent)

	mu      sync.Mutex
	records []Record
}

// The network a Fetcher reaches, replaced by tests (SetNetwork), which
// send nothing beyond loopback.
var (
	dialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	lookupIP    = net.DefaultResolver.LookupNetIP
)

// SetNetwork replaces how a Fetcher dials and resolves, for tests, and
// returns a function that restores them.
func SetNetwork(dial func(ctx context.Context, network, addr string) (net.Conn, error),
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)) (restore func()) {
	d, l := dialContext, lookupIP
	dialContext, lookupIP = dial, lookup
	return func() { dialContext, lookupIP = d, l }
}

// New makes a Fetcher with the policy's defaults filled in.
func New(p Policy) *Fetcher {
	if p.MaxRequestBytes <= 0 {
		p.MaxRequestBytes = 10 << 20
	}
	if p.MaxResponseBytes <= 0 {
		p.MaxResponseBytes = 10 << 20
	}
	if p.MaxRedirects == 0 {
		p.MaxRedirects = 10
	}
	p.MaxRedirects = max(p.MaxRedirects, 0) // negative: none
	if p.Timeout <= 0 {
		p.Timeout = 30 * time.Second
	}
	if p.MaxConcurrent <= 0 {
		p.MaxConcurrent = 4
	}
	f := &Fetcher{policy: p, slots: make(chan struct{}, p.MaxConcurrent)}
	transport := &http.Transport{
		DialContext:            f.dial,
		TLSClientConfig:        &tls.Config{RootCAs: p.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  p.Timeout,
		MaxResponseHeaderBytes: maxHeaderBytes,
		Proxy:                  nil, // never the environment's proxy: the policy decides where requests go
	}
	f.client = &http.Client{
		Transport: transport,
		// Redirects are followed here, one hop at a time, each checked.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return f
}

// Records returns the records of the requests made so far.
func (f *Fetcher) Records() []Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Record(nil), f.records...)
}

func (f *Fetcher) record(r Record) {
	f.mu.Lock()
	f.records = append(f.records, r)
	f.mu.Unlock()
}

// errRefused marks a request the policy refused.
type errRefused struct{ msg string }

func (e *errRefused) Error() string { return e.msg }

// Do makes the request (the host function the glue calls), once one of
// the MaxConcurrent slots is free.
func (f *Fetcher) Do(ctx context.Context, req Request) (Response, error) {
	if err := f.acquire(ctx); err != nil {
		return Response{}, err
	}
	defer f.release()
	return f.do(ctx, req)
}

// acquire waits for a slot of the requests in flight, or for ctx.
func (f *Fetcher) acquire(ctx context.Context) error {
	select {
	case f.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return errors.New(cleanError(ctx.Err()))
	}
}

func (f *Fetcher) release() { <-f.slots }

// CloseIdle closes the connections kept for later requests (at the end of
// an execution whose Fetcher goes with it).
func (f *Fetcher) CloseIdle() { f.client.CloseIdleConnections() }

// do is Do in a slot.
func (f *Fetcher) do(ctx context.Context, req Request) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, f.policy.Timeout)
	defer cancel()
	// The sandbox's Request checks the method, but what reaches the host is
	// the code's to shape: the host checks again (net/http refuses what is
	// not a token).
	switch strings.ToUpper(req.Method) {
	case "CONNECT", "TRACE", "TRACK":
		return Response{}, &errRefused{fmt.Sprintf("the method %s is forbidden", req.Method)}
	}
	if int64(len(req.Body)) > f.policy.MaxRequestBytes {
		return Response{}, fmt.Errorf("the request body is %d bytes, past the policy's %d (FetchPolicy.MaxRequestBytes)", len(req.Body), f.policy.MaxRequestBytes)
	}
	// failed records a hop that failed, with why, and returns err.
	failed := func(rec Record, err error) (Response, error) {
		rec.Error = err.Error()
		f.record(rec)
		return Response{}, err
	}
	method, body, target := req.Method, req.Body, req.URL
	redirected := false
	for hop := 0; ; hop++ {
		u, err := url.Parse(target)
		if err != nil {
			return Response{}, fmt.Errorf("invalid URL %q", target)
		}
		start := time.Now()
		rec := Record{Method: method, Host: u.Host, Path: u.EscapedPath()}
		if err := f.allowed(ctx, u); err != nil {
			return failed(rec, err)
		}
		rec.Allowed = true
		hreq, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
		if err != nil {
			return failed(rec, err)
		}
		for _, h := range req.Headers {
			hreq.Header.Add(h[0], h[1])
		}
		// The secrets of this host, in place of any header of the same name
		// the code set; a hop to another host gets its own or none.
		for name, value := range f.secrets(u) {
			hreq.Header.Set(name, value)
		}
		resp, err := f.client.Do(hreq)
		rec.Duration = time.Since(start)
		if err != nil {
			var refused *errRefused
			if errors.As(err, &refused) { // the address, refused at the dial
				rec.Allowed = false
				return failed(rec, refused)
			}
			return failed(rec, errors.New(cleanError(err)))
		}
		rec.Status = resp.StatusCode
		if loc := resp.Header.Get("Location"); isRedirect(resp.StatusCode) && loc != "" && req.Redirect != "manual" {
			resp.Body.Close()
			f.record(rec)
			if req.Redirect == "error" {
				return Response{}, fmt.Errorf("redirect to %s refused (redirect: \"error\")", loc)
			}
			if hop >= f.policy.MaxRedirects {
				return Response{}, fmt.Errorf("more than %d redirects (FetchPolicy.MaxRedirects)", f.policy.MaxRedirects)
			}
			next, err := u.Parse(loc)
			if err != nil {
				return Response{}, fmt.Errorf("invalid redirect location %q", loc)
			}
			if resp.StatusCode == 303 || ((resp.StatusCode == 301 || resp.StatusCode == 302) && method == http.MethodPost) {
				if method != http.MethodHead {
					method = http.MethodGet
				}
				body = nil
				req.Headers = without(req.Headers, "Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location")
			}
			if next.Scheme != u.Scheme || next.Host != u.Host {
				// Fetch drops Authorization on a redirect to another origin.
				req.Headers = without(req.Headers, "Authorization")
			}
			target, redirected = next.String(), true
			continue
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, f.policy.MaxResponseBytes+1))
		resp.Body.Close()
		rec.Bytes = int64(len(data))
		if err == nil && int64(len(data)) > f.policy.MaxResponseBytes {
			err = fmt.Errorf("the response body is past the policy's %d bytes (FetchPolicy.MaxResponseBytes)", f.policy.MaxResponseBytes)
		}
		if err != nil {
			return failed(rec, errors.New(cleanError(err)))
		}
		f.record(rec)
		out := Response{Status: resp.StatusCode, StatusText: strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode))),
			URL: u.String(), Redirected: redirected, Body: data}
		for name, values := range resp.Header {
			for _, v := range values {
				out.Headers = append(out.Headers, [2]string{name, v})
			}
		}
		return out, nil
	}
}

// maxHeaderBytes bounds a response's headers.
const maxHeaderBytes = 256 << 10

func isRedirect(status int) bool {
	return status == 301 || status == 302 || status == 303 || status == 307 || status == 308
}

// without is the headers h less those of the names (a redirect to a GET
// drops what describes the body; one to another origin, Authorization).
func without(h [][2]string, names ...string) [][2]string {
	return slices.DeleteFunc(slices.Clone(h), func(kv [2]string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, kv[0]) })
	})
}

// cleanError is an error's text for the sandbox and the record: what Go's
// client says, without the URL it repeats.
func cleanError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the request timed out"
	}
	if errors.Is(err, context.Canceled) {
		return "the request was cancelled"
	}
	return err.Error()
}

// allowed checks a URL against the policy: its scheme, and its host
// against Allow (or Approve).
func (f *Fetcher) allowed(ctx context.Context, u *url.URL) error {
	switch u.Scheme {
	case "https":
	case "http":
		if !f.policy.AllowHTTP {
			return &errRefused{fmt.Sprintf("fetch to %s refused: http is not allowed, only https (FetchPolicy.AllowHTTP)", u.Host)}
		}
	default:
		return &errRefused{fmt.Sprintf("fetch of a %s: URL refused: only https and http", u.Scheme)}
	}
	if u.User != nil {
		return &errRefused{"fetch of a URL with credentials refused"}
	}
	host, port := hostPort(u)
	for _, pattern := range f.policy.Allow {
		if matches(pattern, host, port) {
			return nil
		}
	}
	if f.policy.Approve != nil && f.policy.Approve(ctx, host+":"+port) {
		return nil
	}
	return &errRefused{fmt.Sprintf("fetch to %s refused: the host is not allowed (FetchPolicy.Allow)", u.Host)}
}

// hostPort is a URL's host, lower case, and its port (the scheme's
// default when it has none).
func hostPort(u *url.URL) (string, string) {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return host, port
}

// matches says whether a host pattern ("api.example.com", "*.example.com",
// either with ":port") covers host and port. "*." covers the subdomains,
// not the domain itself. Without a port a pattern covers 443 and 80.
func matches(pattern, host, port string) bool {
	pattern = strings.ToLower(strings.TrimSpace(pattern))
	pp := ""
	if h, p, err := net.SplitHostPort(pattern); err == nil {
		pattern, pp = h, p
	}
	if pp != "" && pp != port {
		return false
	}
	if pp == "" && port != "443" && port != "80" {
		return false
	}
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	return host == strings.Trim(pattern, "[]")
}

// secrets are the headers the policy adds for a URL's host: over https
// only, never in clear text.
func (f *Fetcher) secrets(u *url.URL) map[string]string {
	host, port := hostPort(u)
	out := map[string]string{}
	if u.Scheme != "https" {
		return out
	}
	for pattern, headers := range f.policy.Secrets {
		if matches(pattern, host, port) {
			for k, v := range headers {
				out[k] = v
			}
		}
	}
	return out
}

// dial connects to addr: to what Resolve maps it to, if it does (the
// operator's choice, private addresses included), else to an address the
// name resolves to that is public: loopback, private, link-local, shared,
// multicast, unspecified and reserved addresses are refused, and the
// connection is made to the address checked (no second resolution to
// rebind).
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if to, ok := f.policy.Resolve[strings.ToLower(addr)]; ok {
		return dialContext(ctx, network, to)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = lookupIP(ctx, "ip", host); err != nil {
		return nil, fmt.Errorf("cannot resolve %s", host)
	}
	for _, a := range addrs {
		if public(a) {
			return dialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		}
	}
	return nil, &errRefused{fmt.Sprintf("fetch to %s refused: it resolves to a private, loopback, link-local or reserved address (map it with FetchPolicy.Resolve to allow it)", host)}
}

// public says whether an address may be reached by a name the policy
// allows without mapping it.
func public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// reserved are the other ranges no public host has: "this network",
// shared address space (carrier NAT), IETF protocol assignments, the
// documentation and benchmarking networks, the 6to4 relay anycast, the
// reserved and broadcast range, IPv4-compatible and IPv4-translated and
// discard-only IPv6, NAT64, 6to4 and Teredo (which embed IPv4 addresses),
// documentation IPv6, site-local IPv6.
var reserved = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48",
		"100::/64", "2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20", "fec0::/10"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

package fetch

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// A CA is the certificate authority of a proxy: it signs a certificate
// for each host a client asks the proxy to reach over https, so that the
// proxy can read the requests and make them itself (with the secrets of
// the host). Only the jail trusts it; its key never leaves the process.
type CA struct {
	cert *x509.Certificate
	key  crypto.Signer
	// PEM is the CA's certificate, for the clients' trust stores.
	PEM []byte

	mu     sync.Mutex
	leaves map[string]*tls.Certificate // by host in lower case, at most maxLeaves
}

// maxLeaves bounds the certificates a CA keeps; past it they are made again.
const maxLeaves = 1024

// newKey is a certificate's key and serial number.
func newKey() (*ecdsa.PrivateKey, *big.Int, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return key, serial, err
}

// NewCA makes a certificate authority valid for ten years.
func NewCA() (*CA, error) {
	key, serial, err := newKey()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Airlock fetch proxy CA", Organization: []string{"Airlock"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), leaves: map[string]*tls.Certificate{}}, nil
}

// leaf is the certificate of host, signed by the CA: the one made before
// while it has a month to live, else a new one (made outside the lock).
func (ca *CA) leaf(host string) (*tls.Certificate, error) {
	host = strings.ToLower(host)
	ca.mu.Lock()
	c, ok := ca.leaves[host]
	ca.mu.Unlock()
	if ok && time.Until(c.Leaf.NotAfter) > 30*24*time.Hour {
		return c, nil
	}
	key, serial, err := newKey()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	ca.mu.Lock()
	if len(ca.leaves) >= maxLeaves {
		clear(ca.leaves)
	}
	ca.leaves[host] = c
	ca.mu.Unlock()
	return c, nil
}

// ServeProxy serves an HTTP proxy on ln until ctx ends, making every
// request it is sent with f, under f's policy (the hosts, the addresses,
// the bounds, the secrets): a request for an http URL (absolute form) as
// it is, and a CONNECT to a host by reading the requests inside it with a
// certificate of ca for that host (the client must trust ca) and making
// each as an https request. The proxy follows no redirect (the client
// does, through the proxy again). A request the policy refuses is a 403
// whose body says why; one that fails is a 502.
//
// A client is bounded: maxProxyConns connections at once (more wait to be
// accepted), the Fetcher's MaxConcurrent requests in flight (a request
// holds its slot while its body is read), idle connections closed after
// proxyIdle, a request's headers and body read within proxyRead. When ctx
// ends, every connection is closed and ServeProxy returns once every
// request has ended and been recorded.
func (f *Fetcher) ServeProxy(ctx context.Context, ln net.Listener, ca *CA) error {
	p := &proxy{f: f, ca: ca, ctx: ctx, conns: make(chan struct{}, maxProxyConns)}
	srv := p.server(p)
	stop := context.AfterFunc(ctx, func() {
		p.close()
		srv.Close()
	})
	defer stop()
	err := srv.Serve(&limitedListener{Listener: ln, p: p})
	p.wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// The bounds of a proxy's clients (ServeProxy).
const (
	maxProxyConns = 64
	proxyIdle     = 30 * time.Second
	proxyRead     = time.Minute
)

// server is an HTTP server of the proxy's, for its listener or a tunnel.
func (p *proxy) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: proxyRead,
		ReadTimeout:       proxyRead,
		IdleTimeout:       proxyIdle,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return p.ctx },
		ErrorLog:          discardLog,
	}
}

// limitedListener accepts a connection once fewer than maxProxyConns are
// open; a connection frees its place when it is closed.
type limitedListener struct {
	net.Listener
	p *proxy
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.p.conns <- struct{}{}:
	case <-l.p.ctx.Done():
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.p.conns
		return nil, err
	}
	return &freeOnClose{Conn: c, free: func() { <-l.p.conns }}, nil
}

// freeOnClose calls free once, when it is first closed.
type freeOnClose struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *freeOnClose) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}

type proxy struct {
	f     *Fetcher
	ca    *CA
	ctx   context.Context
	conns chan struct{} // an open connection holds one

	// wg counts the handlers and tunnels running; mu guards closed and
	// tunnels, and the wg.Add that must not follow close.
	wg      sync.WaitGroup
	mu      sync.Mutex
	tunnels map[net.Conn]bool
	closed  bool
}

// enter counts a handler, or the tunnel of c (kept to be closed), in,
// unless the proxy is closing.
func (p *proxy) enter(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if c != nil {
		if p.tunnels == nil {
			p.tunnels = map[net.Conn]bool{}
		}
		p.tunnels[c] = true
	}
	p.wg.Add(1)
	return true
}

// ServeHTTP serves one request to the proxy: a CONNECT opens a tunnel; any
// other is made as it is.
func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.enter(nil) {
		http.Error(w, "airlock proxy: closing", http.StatusServiceUnavailable)
		return
	}
	defer p.wg.Done()
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "airlock proxy: a request to the proxy must name an absolute URL", http.StatusBadRequest)
		return
	}
	p.forward(w, r, r.URL.String())
}

// connect answers a CONNECT: a host the policy refuses is refused at
// once; otherwise the client's TLS is ended here with a certificate for
// the host, and the requests in it are made as https requests to it.
func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil || host == "" || port == "" {
		http.Error(w, "airlock proxy: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	authority := net.JoinHostPort(host, port)
	if port == "443" {
		authority = strings.TrimSuffix(authority, ":443")
	}
	if err := p.f.allowed(r.Context(), &url.URL{Scheme: "https", Host: authority}); err != nil {
		p.f.record(Record{Method: "CONNECT", Host: authority, Error: err.Error()})
		http.Error(w, "airlock proxy: "+err.Error(), http.StatusForbidden)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "airlock proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	conn.SetDeadline(time.Time{}) // the tunnel's server sets its own

	if !p.enter(conn) {
		conn.Close()
		return
	}
	go func() {
		defer p.wg.Done()
		defer p.untrack(conn)
		defer conn.Close()
		if _, err := rw.WriteString("HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil || rw.Flush() != nil {
			return
		}
		tconn := tls.Server(&bufferedConn{Conn: conn, r: rw.Reader}, &tls.Config{
			NextProtos: []string{"http/1.1"},
			GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
				return p.ca.leaf(host) // the host checked, whatever the SNI says
			},
		})
		inner := p.server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Inside a tunnel, a request names a path of the tunnel's
			// host (origin form), nothing else.
			if !strings.HasPrefix(r.RequestURI, "/") {
				http.Error(w, "airlock proxy: inside a tunnel, a request must name a path (origin form)", http.StatusBadRequest)
				return
			}
			u := url.URL{Scheme: "https", Host: authority, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
			p.forward(w, r, u.String())
		}))
		inner.Serve(&oneConn{c: tconn, done: make(chan struct{})})
	}()
}

// forward makes the request r as target with the Fetcher and writes its
// answer.
func (p *proxy) forward(w http.ResponseWriter, r *http.Request, target string) {
	// The slot is held while the body is read: what the proxy buffers is
	// bounded by the Fetcher's requests in flight.
	if err := p.f.acquire(r.Context()); err != nil {
		http.Error(w, "airlock proxy: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer p.f.release()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.f.policy.MaxRequestBytes))
	if err != nil {
		http.Error(w, fmt.Sprintf("airlock proxy: the request body is past the policy's %d bytes", p.f.policy.MaxRequestBytes), http.StatusRequestEntityTooLarge)
		return
	}
	req := Request{Method: r.Method, URL: target, Body: body, Redirect: "manual"}
	hop := hopHeaders(r.Header)
	for name, values := range r.Header {
		if hop[http.CanonicalHeaderKey(name)] {
			continue
		}
		for _, v := range values {
			req.Headers = append(req.Headers, [2]string{name, v})
		}
	}
	resp, err := p.f.do(r.Context(), req)
	if err != nil {
		status := http.StatusBadGateway
		var refused *errRefused
		if errors.As(err, &refused) {
			status = http.StatusForbidden
		}
		http.Error(w, "airlock proxy: "+err.Error(), status)
		return
	}
	h, got := w.Header(), http.Header{}
	for _, kv := range resp.Headers {
		got.Add(kv[0], kv[1])
	}
	hop = hopHeaders(got)
	for name, values := range got {
		if !hop[name] {
			h[name] = values
		}
	}
	switch {
	case r.Method == http.MethodHead: // the length a GET would have, as the host said
		if n := got.Get("Content-Length"); n != "" {
			h.Set("Content-Length", n)
		}
	case resp.Status == http.StatusNoContent || resp.Status == http.StatusNotModified || resp.Status < 200:
	default:
		h.Set("Content-Length", fmt.Sprint(len(resp.Body)))
	}
	w.WriteHeader(resp.Status)
	if r.Method != http.MethodHead {
		w.Write(resp.Body)
	}
}

// hopByHop are the headers of one connection (RFC 9110 §7.6.1), never
// passed on, with the proxy's own.
var hopByHop = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Host": true, "Content-Length": true,
}

// hopHeaders are the headers of h not to pass on: hopByHop's and those
// its Connection names.
func hopHeaders(h http.Header) map[string]bool {
	out := map[string]bool{}
	for k := range hopByHop {
		out[k] = true
	}
	for _, v := range h.Values("Connection") {
		for _, n := range strings.Split(v, ",") {
			out[http.CanonicalHeaderKey(strings.TrimSpace(n))] = true
		}
	}
	return out
}

func (p *proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnels, c)
	p.mu.Unlock()
}

// close lets no handler or tunnel start, and closes the tunnels'
// connections, which the server's Close does not know.
func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
}

// discardLog keeps the servers' complaints about clients (a bad TLS
// handshake, a broken request) out of the server's log.
var discardLog = log.New(io.Discard, "", 0)

// bufferedConn is a hijacked connection with what its reader had read.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// oneConn is a listener of one connection: Accept gives it, then waits
// until the connection is closed (an http.Server serves it to its end).
type oneConn struct {
	c    net.Conn
	once sync.Once
	done chan struct{}
	used bool
}

func (l *oneConn) Accept() (net.Conn, error) {
	if !l.used {
		l.used = true
		return &closeNotify{Conn: l.c, l: l}, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// closeNotify ends its listener's Accept when the connection is closed.
type closeNotify struct {
	net.Conn
	l *oneConn
}

func (c *closeNotify) Close() error {
	err := c.Conn.Close()
	c.l.Close()
	return err
}

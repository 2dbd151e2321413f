// Package gateway is airlock gateway: a stateless front for `airlock
// serve` pods on Kubernetes, placed by kubernetes-sigs/agent-sandbox. A
// request that names a session (session_id in its JSON body or query,
// X-Session-ID, or an MCP session's Mcp-Session-Id) gets a SandboxClaim
// named after a hash of its tenant (its token) and the session, from the
// warm pool the gateway is
// given; once the claim is Ready the request goes through agent-sandbox's
// router to the claimed pod. Creating the claim is idempotent (an
// AlreadyExists is the claim another request or replica made), so any
// number of gateways agree without talking to each other, and a gateway
// that restarts finds the same claims. A request without a session goes
// to the stateless Service (an ordinary Deployment of `airlock serve`).
//
// The package lives in a module of its own, so that the library and the
// CLI do not depend on client-go or controller-runtime.
package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

// Config configures a Gateway.
type Config struct {
	// Client reaches the cluster's API server (controller-runtime's
	// client, with agent-sandbox's extensions in its scheme). Its
	// credentials need create and get on sandboxclaims, and list and
	// watch when its reads come from an informer (airlock-gateway's do),
	// nothing more.
	Client client.Client
	// Namespace holds the claims, the warm pool and the pods.
	Namespace string
	// WarmPool is the SandboxWarmPool the claims draw from (its template
	// runs `airlock serve`).
	WarmPool string
	// Router is agent-sandbox's sandbox router (its Service's URL).
	Router *url.URL
	// Stateless is the Service of the ordinary `airlock serve` Deployment
	// that serves requests without a session; nil refuses them (400).
	Stateless *url.URL
	// Port is the port `airlock serve` listens on in the pods
	// (X-Sandbox-Port); 0 means 8888, the router's default.
	Port int
	// ReadyTimeout bounds the wait for a claim to become Ready; 0 means
	// one minute (a pod starts in seconds; a warm one at once).
	ReadyTimeout time.Duration
	// SessionTTL, when positive, is a new claim's lifetime: its
	// Lifecycle.ShutdownTime, with the Delete policy (the session's
	// workspace goes with its pod).
	SessionTTL time.Duration
	// MaxBodyBytes bounds a request body the gateway reads to find its
	// session; 0 means 32 MiB, `airlock serve`'s own default.
	MaxBodyBytes int64
	// MaxBuffered bounds the requests whose bodies the gateway holds at
	// once (each up to MaxBodyBytes, for as long as the request is sent
	// on); past it a request is a 503. 0 means 64.
	MaxBuffered int
	// Tokens are the bearer tokens clients must send (Authorization:
	// Bearer): each is a tenant, and a session is the tenant's (its claim
	// is named after both), so one tenant cannot reach another's session by
	// naming it. The pods behind the router run without a token (the router
	// strips Authorization) and must be reachable only through it.
	Tokens []string
	// AllowNoToken lets a gateway without Tokens serve: anyone who reaches
	// it is one tenant, for a network that decides who connects.
	AllowNoToken bool
	// Log receives what the gateway does not tell clients (the API
	// server's errors); nil discards it.
	Log *slog.Logger
}

// A Gateway is an http.Handler.
type Gateway struct {
	cfg       Config
	router    *httputil.ReverseProxy
	stateless *httputil.ReverseProxy
	buffered  chan struct{} // a request holding its body holds one
}

// New returns a Gateway.
func New(cfg Config) (*Gateway, error) {
	if cfg.Client == nil || cfg.Router == nil || cfg.WarmPool == "" || cfg.Namespace == "" {
		return nil, errors.New("gateway: Client, Namespace, WarmPool and Router are required")
	}
	if len(cfg.Tokens) == 0 && !cfg.AllowNoToken {
		return nil, errors.New("gateway: no Tokens: anyone who reaches the gateway could use every session; give tokens, or AllowNoToken where the network decides who connects")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Port == 0 {
		cfg.Port = 8888
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = time.Minute
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 32 << 20
	}
	if cfg.MaxBuffered <= 0 {
		cfg.MaxBuffered = 64
	}
	g := &Gateway{cfg: cfg, router: httputil.NewSingleHostReverseProxy(cfg.Router), buffered: make(chan struct{}, cfg.MaxBuffered)}
	if cfg.Stateless != nil {
		g.stateless = httputil.NewSingleHostReverseProxy(cfg.Stateless)
	}
	return g, nil
}

// ClaimName is the SandboxClaim of a tenant's session: a DNS label made
// of a hash of both, the same in every gateway. The tenant is "" without
// tokens, else Tenant of the caller's token.
func ClaimName(tenant, session string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + session))
	return "airlock-" + hex.EncodeToString(sum[:])[:20]
}

// Tenant is the tenant of a token: a hash of it, so that a tenant keeps
// its sessions whatever the order of the gateway's tokens, and no claim
// name carries a token.
func Tenant(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:16])
}

// tenant is the caller's tenant, or ok false when it has no valid token.
func (g *Gateway) tenant(r *http.Request) (string, bool) {
	if len(g.cfg.Tokens) == 0 {
		return "", true
	}
	tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return "", false
	}
	for _, t := range g.cfg.Tokens {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(t)) == 1 {
			return Tenant(t), true
		}
	}
	return "", false
}

// ServeHTTP routes a request: by its session to the session's pod, or to
// the stateless Service.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	toRouter, status, err := g.route(r)
	defer g.release(r)
	switch {
	case err != nil:
		writeError(w, status, err.Error())
	case toRouter:
		g.router.ServeHTTP(w, r)
	default:
		g.stateless.ServeHTTP(w, r)
	}
}

// route finds r's session and, for one, its claim, and sets the router's
// headers on r: toRouter says where r goes (else the stateless Service);
// a failure is the status to answer and why.
func (g *Gateway) route(r *http.Request) (toRouter bool, status int, err error) {
	// Where a request goes is the gateway's to say: the router's headers
	// a client sent (X-Sandbox-Pod-IP would pick any address the router
	// allows) never pass.
	for name := range r.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Sandbox-") {
			r.Header.Del(name)
		}
	}
	tenant, ok := g.tenant(r)
	if !ok {
		return false, http.StatusUnauthorized, errors.New("a valid bearer token is required (Authorization: Bearer <token>)")
	}
	r.Header.Del("Authorization") // the router strips it too; the pods have no token
	session, err := g.session(r)
	if errors.Is(err, errBusy) {
		return false, http.StatusServiceUnavailable, err
	}
	if err != nil {
		return false, http.StatusRequestEntityTooLarge, err
	}
	if session == "" {
		if g.stateless == nil {
			return false, http.StatusBadRequest, errors.New("a session is required (session_id, X-Session-ID or Mcp-Session-Id): this gateway has no stateless service")
		}
		return false, 0, nil
	}
	claim, err := g.Claim(r.Context(), tenant, session)
	if err != nil {
		g.cfg.Log.Warn("claim", "claim", ClaimName(tenant, session), "error", err)
		return false, http.StatusServiceUnavailable, errors.New("the session's sandbox is not available; try again")
	}
	r.Header.Set("X-Sandbox-ID", claim.Status.SandboxStatus.Name)
	r.Header.Set("X-Sandbox-Namespace", g.cfg.Namespace)
	r.Header.Set("X-Sandbox-Port", strconv.Itoa(g.cfg.Port))
	if ips := claim.Status.SandboxStatus.PodIPs; len(ips) > 0 {
		r.Header.Set("X-Sandbox-Pod-IP", ips[0])
	}
	if r.Header.Get("X-Session-ID") == "" {
		r.Header.Set("X-Session-ID", session) // for the files API, which reads no body
	}
	return true, 0, nil
}

// Transport is the gateway in a client's process: an http.RoundTripper
// that sends each request where the gateway would (the session's pod
// through the router, or the stateless Service), whatever URL the request
// names, over base (nil: http.DefaultTransport). With the service client
// (runner.NewHTTPRunner(any, runner.WithHTTPClient(&http.Client{Transport:
// g.Transport(nil)}))) one client targets the pool as it targets a single
// `airlock serve`.
func (g *Gateway) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{g, base}
}

type roundTripper struct {
	g    *Gateway
	base http.RoundTripper
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context()) // a RoundTripper leaves the caller's request as it was
	toRouter, _, err := t.g.route(req)
	defer t.g.release(req)
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on an error
		}
		return nil, fmt.Errorf("gateway: %w", err)
	}
	target := t.g.cfg.Stateless
	if toRouter {
		target = t.g.cfg.Router
	}
	req.URL.Scheme, req.URL.Host, req.Host = target.Scheme, target.Host, ""
	return t.base.RoundTrip(req)
}

// session is the session a request names, as `airlock serve` reads it:
// an execution's session_id in its JSON body (read, bounded, put back, and
// decoded as the server decodes it, whatever its Content-Type), else
// session_id in the query, else the X-Session-ID or Mcp-Session-Id header.
func (g *Gateway) session(r *http.Request) (string, error) {
	if r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
		select {
		case g.buffered <- struct{}{}:
			r.Body = &heldBody{ReadCloser: r.Body} // marks the slot as r's (release)
		default:
			return "", errBusy
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, g.cfg.MaxBodyBytes+1))
		r.Body.Close()
		if int64(len(body)) > g.cfg.MaxBodyBytes {
			return "", fmt.Errorf("request body larger than %d bytes", g.cfg.MaxBodyBytes)
		}
		if err != nil {
			return "", err
		}
		r.Body = &heldBody{ReadCloser: io.NopCloser(bytes.NewReader(body))}
		r.ContentLength = int64(len(body))
		var v struct {
			SessionID string `json:"session_id"`
		}
		if json.NewDecoder(bytes.NewReader(body)).Decode(&v) == nil && v.SessionID != "" {
			return v.SessionID, nil
		}
	}
	if s := r.URL.Query().Get("session_id"); s != "" {
		return s, nil
	}
	for _, h := range []string{"X-Session-ID", "Mcp-Session-Id"} {
		if s := r.Header.Get(h); s != "" {
			return s, nil
		}
	}
	return "", nil
}

// Claim makes sure the tenant's session's SandboxClaim exists (creating
// it, or finding the one another gateway made) and waits until it is
// Ready. It reads the claim first: with a client whose reads come from an
// informer's cache (as airlock-gateway's do), a session's requests cost
// the API server nothing once its claim exists.
func (g *Gateway) Claim(ctx context.Context, tenant, session string) (*extensionsv1beta1.SandboxClaim, error) {
	name := ClaimName(tenant, session)
	claim := &extensionsv1beta1.SandboxClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.cfg.Namespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "airlock-gateway"}},
		Spec: extensionsv1beta1.SandboxClaimSpec{WarmPoolRef: extensionsv1beta1.SandboxWarmPoolRef{Name: g.cfg.WarmPool}},
	}
	if g.cfg.SessionTTL > 0 {
		t := metav1.NewTime(time.Now().Add(g.cfg.SessionTTL))
		claim.Spec.Lifecycle = &extensionsv1beta1.Lifecycle{ShutdownTime: &t, ShutdownPolicy: extensionsv1beta1.ShutdownPolicyDelete}
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.ReadyTimeout)
	defer cancel()
	wait := 20 * time.Millisecond
	for {
		got := &extensionsv1beta1.SandboxClaim{}
		err := g.cfg.Client.Get(ctx, client.ObjectKey{Namespace: g.cfg.Namespace, Name: name}, got)
		switch {
		case err == nil && got.DeletionTimestamp != nil: // going: wait for it to be gone, then make it again
		case apierrors.IsNotFound(err): // new, or deleted (its TTL, an operator): made
			if err := g.cfg.Client.Create(ctx, claim.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("the session's claim %s could not be made: %w", name, err)
			}
		case err != nil:
			return nil, fmt.Errorf("the session's claim %s: %w", name, err)
		case meta.IsStatusConditionTrue(got.Status.Conditions, "Ready") && got.Status.SandboxStatus.Name != "":
			return got, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the session's claim %s is not ready after %s", name, g.cfg.ReadyTimeout)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// errBusy is a request's error when MaxBuffered bodies are held already.
var errBusy = errors.New("the gateway holds as many request bodies as it may; try again")

// heldBody is a body the gateway buffered: its request holds a slot of
// MaxBuffered until release.
type heldBody struct{ io.ReadCloser }

// release gives back r's slot, if it holds one.
func (g *Gateway) release(r *http.Request) {
	if _, ok := r.Body.(*heldBody); ok {
		<-g.buffered
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

package service

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
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/fetch"
)

// File is a file on the wire: base64 data.
type File struct {
	Name string `json:"name"`
	Data []byte `json:"data"` // base64 in JSON
	MIME string `json:"mime,omitempty"`
	// Size is set (and Data left out) for a returned file over the cap.
	Size int64 `json:"size,omitempty"`
}

// ExecuteRequest is the body of POST /execute (the reference protocol).
type ExecuteRequest struct {
	ExecutionID string `json:"execution_id"`
	CallbackURL string `json:"callback_url"`
	Code        string `json:"code"`
	Runtime     string `json:"runtime"`
	SessionID   string `json:"session_id"`
	Timeout     int    `json:"timeout"` // seconds; ≤ 0 means 30, at most 300
	Files       []File `json:"files"`
	// Command, in place of Code and Runtime, is a shell command run in the
	// jail (/bin/sh -c), the body of agent-sandbox's legacy python-runtime
	// (README, "The legacy python-runtime API"): POST /execute answers it
	// as {stdout, stderr, exit_code}.
	Command string `json:"command,omitempty"`
	// Credential is who asks, for the ownership of sessions: the HTTP
	// handler sets it from the bearer token; never read from the wire.
	Credential string `json:"-"`
	// Log, when set, is given each line of the code's output (without its
	// newline) as it is written, within the output cap, from the run's own
	// goroutines, one call at a time: it must return at once. A line over
	// 16 KiB comes in pieces. The handler sets it for a streaming request;
	// never read from the wire. nil, the zero value, calls nothing.
	Log func(line string) `json:"-"`
}

// ExecuteResponse is the answer of POST /execute.
type ExecuteResponse struct {
	// Output is the JSON of the value given to set_result / setResult.
	Output   string `json:"output"`
	Logs     string `json:"logs"`
	ExitCode int    `json:"exit_code"` // -1 on timeout
	Error    string `json:"error,omitempty"`
	Files    []File `json:"files,omitempty"`
}

// V1Response is the answer of POST /v1/execute: the reference's fields and
// what it lacks.
type V1Response struct {
	ExecuteResponse
	// Status is the core sandbox's status for javascript/typescript
	// (success, error, memory, terminated, link_error); for a subprocess,
	// success, error or terminated (timeout).
	Status     string               `json:"status"`
	ScriptErr  *airlock.ScriptError `json:"scriptError,omitempty"`
	DurationMs float64              `json:"durationMs"`
	// stdout and stderr are a command's (ExecuteRequest.Command), apart.
	stdout, stderr string
}

// A Server runs code for clients.
type Server struct {
	cfg  Config
	ws   *workspaces
	jail *jail
	sem  chan struct{}
	log  *slog.Logger
	// js runs javascript and typescript; made on first use, so that a
	// server that runs none starts no worker process.
	js       *airlock.Runtime
	jsOnce   sync.Once
	jsConfig airlock.RuntimeConfig
	closed   atomic.Bool
	client   *http.Client
	metrics  *metrics
	nextID   atomic.Int64
	stop     chan struct{}

	tokens        [][32]byte // SHA-256 of each token
	creds         []string   // the credential each token stands for
	callbackHosts map[string]bool
	reading       chan struct{} // bodies being read
	started       time.Time     // when New made it (/v1/health's uptime)
}

// New checks the configuration and returns a server. Without bwrap on the
// machine, Python and Node are refused unless cfg.Insecure is set.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	cfg.defaults()
	if logger == nil {
		logger = slog.Default()
	}
	if len(cfg.Tokens) == 0 && !cfg.AllowNoToken && !loopback(cfg.Addr) {
		return nil, fmt.Errorf("refusing to listen on %s without a token: anyone who reaches it could run code and read every session; set a token (--token, SANDBOX_TOKENS), listen on loopback (--addr 127.0.0.1:9000), or say --allow-no-token", cfg.Addr)
	}
	if u, err := url.Parse(cfg.PipIndexURL); cfg.PipIndexURL != "" && (err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
		return nil, fmt.Errorf("pip index %q: want an http or https URL", cfg.PipIndexURL)
	}
	ws, err := newWorkspaces(cfg.Workspace, cfg.SessionTTL)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	j := &jail{memory: cfg.MemoryLimitBytes, procs: cfg.MaxProcesses, install: cfg.AllowInstall,
		maxOut: cfg.MaxOutput, inFlight: cfg.MaxCallsInFlight, installTimeout: cfg.InstallTimeout, pipIndex: cfg.PipIndexURL, fileSize: min(max(cfg.MaxFileBytes*4, 64<<20), cfg.WorkspaceQuotaBytes)}
	if j.memory <= 0 {
		j.memory = 512 << 20
	}
	if p, err := exec.LookPath("prlimit"); err == nil {
		j.prlimit = p
	}
	if !cfg.Insecure {
		if p, err := exec.LookPath(cfg.BwrapBin); err == nil {
			j.bwrap = p
		}
	}
	if cfg.Fetch != nil {
		if j.bwrap == "" {
			logger.Warn("--allow-net: python and node run without bubblewrap, with the host's network: the proxy is not used")
		} else {
			ca, err := fetch.NewCA()
			if err != nil {
				return nil, fmt.Errorf("the fetch proxy's certificate authority: %w", err)
			}
			j.proxy = &jailProxy{policy: fetch.Policy(*cfg.Fetch), ca: ca, log: logger}
		}
	}
	if j.bwrap != "" && os.Geteuid() == 0 {
		// The code never runs as root: the jail becomes an unprivileged
		// user, which the workspaces belong to. RLIMIT_NPROC, counted for
		// that user, is shared by the executions running at once.
		j.user = &jailUser{uid: cfg.JailUID, gid: cfg.JailUID}
		j.procs *= cfg.MaxConcurrent
		ws.owner = j.user
		if p, err := exec.LookPath("setpriv"); err == nil && strings.HasPrefix(p, "/usr/") {
			j.setpriv = p
		} else if p, err := exec.LookPath("/usr/bin/setpriv"); err == nil {
			j.setpriv = p
		} else {
			logger.Warn("setpriv not found under /usr (util-linux): python and node are refused, since the server runs as root")
			j.bwrap, j.user, ws.owner = "", nil, nil
			j.rootWithoutSetpriv = true
		}
	}
	var prefixes []string
	for _, rt := range []struct {
		name string
		bin  string
		dst  *string
	}{{"python", cfg.PythonBin, &j.python}, {"node", cfg.NodeBin, &j.node}} {
		p, err := exec.LookPath(rt.bin)
		if err != nil {
			logger.Warn("runtime unavailable", "runtime", rt.name, "binary", rt.bin, "err", err)
			continue
		}
		bin, prefix := realBinary(p, rt.name)
		*rt.dst = bin
		prefixes = append(prefixes, prefix)
	}
	j.mounts = jailRoot(prefixes, cfg.JailProc)
	switch {
	case j.bwrap != "":
	case j.rootWithoutSetpriv:
	case cfg.Insecure:
		logger.Warn("INSECURE: python and node run WITHOUT bubblewrap: the code can read the machine, use the network and see other workspaces")
	default:
		logger.Warn("bwrap not found: python and node are refused (install bubblewrap, or start with --insecure-no-bwrap)")
	}
	memJS := cfg.MemoryLimitBytes
	if memJS <= 0 {
		memJS = 64 << 20
	}
	s := &Server{
		cfg: cfg, ws: ws, jail: j, sem: make(chan struct{}, cfg.MaxConcurrent), log: logger,
		jsConfig: airlock.RuntimeConfig{MemoryLimitBytes: memJS, MaxDuration: 301 * time.Second, Workers: cfg.Workers},
		client:   callbackClient(),
		metrics:  newMetrics(), stop: make(chan struct{}),
		reading: make(chan struct{}, 2*cfg.MaxConcurrent), callbackHosts: map[string]bool{}, started: time.Now(),
	}
	for _, t := range cfg.Tokens {
		if t == "" {
			return nil, errors.New("an empty token")
		}
		sum := sha256.Sum256([]byte(t))
		cred := sha256.Sum256(append([]byte("airlock credential\x00"), sum[:]...))
		s.tokens = append(s.tokens, sum)
		s.creds = append(s.creds, hex.EncodeToString(cred[:16]))
	}
	for _, h := range cfg.CallbackHosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			s.callbackHosts[h] = true
		}
	}
	go s.evictLoop()
	return s, nil
}

// Close stops the eviction loop and the javascript runtime (its workers
// too, with Config.Workers). It is idempotent.
func (s *Server) Close() {
	if !s.closed.CompareAndSwap(false, true) {
		return
	}
	close(s.stop)
	s.jsOnce.Do(func() {}) // none made from now on
	if s.js != nil {
		s.js.Close()
	}
}

// jsRuntime is the javascript runtime, made on first use.
func (s *Server) jsRuntime() *airlock.Runtime {
	s.jsOnce.Do(func() { s.js = airlock.NewRuntime(s.jsConfig) })
	return s.js
}

func (s *Server) evictLoop() {
	every := min(max(s.cfg.SessionTTL/4, time.Second), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			for _, id := range s.ws.evict(now) {
				s.metrics.workspaceGone(id)
				s.log.Info("workspace evicted", "session", id)
			}
		}
	}
}

// Evict removes the workspaces idle past the TTL now (the server also does
// it periodically).
func (s *Server) Evict() []string {
	gone := s.ws.evict(time.Now())
	for _, id := range gone {
		s.metrics.workspaceGone(id)
	}
	return gone
}

// Handler serves the API. With tokens configured, every endpoint but
// /health, /v1/health, the legacy runtime's GET / and /openapi.json wants
// one of them as a bearer token.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.HandleFunc(rt.pattern, rt.handler)
	}
	return s.withRequestID(mux)
}

// A route is an endpoint of the API: its ServeMux pattern and handler.
// openapi.json describes each (TestOpenAPIRoutes holds them together).
type route struct {
	pattern string
	handler http.HandlerFunc
}

// routes are the API's endpoints.
func (s *Server) routes() []route {
	return append([]route{
		{"/execute", func(w http.ResponseWriter, r *http.Request) { s.execute(w, r, false) }},
		{"/v1/execute", func(w http.ResponseWriter, r *http.Request) { s.execute(w, r, true) }},
		{"/health", func(w http.ResponseWriter, r *http.Request) { // any method, as the reference
			writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		}},
		{"/workspace/{session_id...}", s.deleteWorkspace},
		{"/metrics", func(w http.ResponseWriter, r *http.Request) {
			if !allowMethod(w, r, http.MethodGet) {
				return
			}
			if _, ok := s.authorize(w, r); ok {
				s.metrics.ServeHTTP(w, r)
			}
		}},
		{"/openapi.json", serveOpenAPI},
		{"/v1/files/{path...}", s.files},
		{"/v1/health", s.health},
		{"/v1/metadata", s.metadata},
	}, s.legacyRoutes()...)
}

// allowMethod answers 405 to a request of another method.
func allowMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return false
	}
	return true
}

// deleteWorkspace serves DELETE /workspace/{session_id}.
func (s *Server) deleteWorkspace(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r, http.MethodDelete) {
		return
	}
	cred, ok := s.authorize(w, r)
	if !ok {
		return
	}
	id := strings.TrimPrefix(r.URL.Path, "/workspace/")
	if id == "" {
		writeError(w, http.StatusBadRequest, "session_id is required")
		return
	}
	if err := s.ws.remove(id, cred); err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	s.metrics.workspaceGone(dirName(id))
	w.WriteHeader(http.StatusNoContent)
}

// authorize checks a request's bearer token against the configured ones,
// in constant time, and gives the credential it stands for (a hash of the
// token; "" when the server has no tokens). A refused request is answered.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) (string, bool) {
	if len(s.tokens) == 0 {
		return "", true
	}
	given, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sum := sha256.Sum256([]byte(given))
	match := -1
	for i, t := range s.tokens {
		if subtle.ConstantTimeCompare(sum[:], t[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="airlock"`)
		writeError(w, http.StatusUnauthorized, "a valid bearer token is required (Authorization: Bearer <token>)")
		return "", false
	}
	return s.creds[match], true
}

func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if id == "" {
			id = fmt.Sprintf("req-%d", s.nextID.Add(1))
		}
		w.Header().Set("X-Request-ID", id)
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		next.ServeHTTP(rec, r)
		s.log.Info("request", "id", id, "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", time.Since(start))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

// Unwrap gives http.ResponseController the connection's writer: flushes
// and deadlines reach it.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // JSON, not HTML: <, > and & as themselves, not six bytes each
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func (s *Server) execute(w http.ResponseWriter, r *http.Request, v1 bool) {
	if !allowMethod(w, r, http.MethodPost) {
		return
	}
	cred, ok := s.authorize(w, r)
	if !ok {
		return
	}
	// The body is bounded before it is read, and bodies are read a few at
	// a time, each within a deadline.
	limit := s.cfg.MaxRequestBytes
	tooLarge := func() {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes (the server's --max-request)", limit))
	}
	if r.ContentLength > limit {
		tooLarge()
		return
	}
	select {
	case s.reading <- struct{}{}:
	default:
		s.metrics.reject()
		writeError(w, http.StatusServiceUnavailable, ErrBusy.Msg)
		return
	}
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
	var req ExecuteRequest
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(&req)
	<-s.reading
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			tooLarge()
			return
		}
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	if err := s.allowCallback(req.CallbackURL); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req.Credential = cred
	if req.Command != "" { // the legacy python-runtime's body
		if v1 {
			writeError(w, http.StatusBadRequest, "a command is answered on /execute (agent-sandbox's legacy python-runtime), not /v1/execute")
			return
		}
		s.executeCommand(w, r, req)
		return
	}
	if kind := streamType(r.Header.Get("Accept")); kind != "" {
		s.executeStream(w, r, req, v1, kind)
		return
	}
	resp, err := s.Execute(requestContext(r), req, s.dispatcher(req.ExecutionID, req.CallbackURL))
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	if v1 {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	writeJSON(w, http.StatusOK, resp.ExecuteResponse)
}

// bodyReadTimeout bounds the reading of a request's body.
const bodyReadTimeout = time.Minute

// allowCallback refuses a callback URL that goes anywhere but loopback or
// a host the operator listed (Config.CallbackHosts): the server posts to
// it and hands the answer to the code.
func (s *Server) allowCallback(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("callback_url %q is refused: want an http or https URL", raw)
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || s.callbackHosts[host] {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
		return nil
	}
	return fmt.Errorf("callback_url %q is refused: callbacks go only to loopback and to the hosts the operator lists (--callback-hosts, SANDBOX_CALLBACK_HOSTS)", raw)
}

// A RequestError is a request the server refuses: Status is the HTTP
// status (400, or 503 when busy).
type RequestError struct {
	Status int
	Msg    string
}

func (e *RequestError) Error() string { return e.Msg }

// errorStatus is the HTTP status that answers err: a RequestError's own,
// else 500.
func errorStatus(err error) int {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Status
	}
	return http.StatusInternalServerError
}

func badRequest(format string, args ...any) error {
	return &RequestError{Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...)}
}

// ErrBusy is the error of an execution refused at the concurrency cap.
var ErrBusy = &RequestError{Status: http.StatusServiceUnavailable, Msg: "server busy"}

// A Dispatcher calls a tool for the code and returns its data (a string the
// preludes parse as JSON when it is JSON).
type Dispatcher func(ctx context.Context, name string, args json.RawMessage) (data string, err error)

// Execute runs a request, with dispatch answering its tool calls; it is
// what POST /execute does, callable in process. A refused request is a
// *RequestError.
func (s *Server) Execute(ctx context.Context, req ExecuteRequest, dispatch Dispatcher) (_ *V1Response, err error) {
	if ctx, span := startExecute(ctx, &req); span != nil { // trace.go
		var resp *V1Response
		defer func() { endExecute(span, resp, err) }()
		resp, err = s.executeUntraced(ctx, req, traceCalls(dispatch))
		return resp, err
	}
	return s.executeUntraced(ctx, req, dispatch)
}

// executeUntraced is Execute without its span.
func (s *Server) executeUntraced(ctx context.Context, req ExecuteRequest, dispatch Dispatcher) (*V1Response, error) {
	rt := strings.ToLower(req.Runtime)
	if rt == "command" { // a command comes as Command, on /execute only
		return nil, badRequest("unsupported runtime %q (python, node, javascript or typescript)", req.Runtime)
	}
	if req.Command != "" {
		if req.Code != "" || req.Runtime != "" {
			return nil, badRequest("a request has code (and a runtime) or a command, not both")
		}
		rt, req.Code = "command", req.Command
	}
	if strings.TrimSpace(req.Code) == "" {
		return nil, badRequest("code is empty")
	}
	switch rt {
	case "python", "node", "javascript", "typescript", "command":
	case "": // as the reference client documents
		rt = "python"
	default:
		return nil, badRequest("unsupported runtime %q (python, node, javascript or typescript)", req.Runtime)
	}
	if err := s.unavailable(rt); err != nil {
		return nil, err
	}
	for _, f := range req.Files {
		if _, err := cleanName(f.Name); err != nil {
			return nil, badRequest("%v", err)
		}
	}
	if err := s.ws.check(req.SessionID, req.Credential); err != nil {
		return nil, err
	}
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	default:
		s.metrics.reject()
		return nil, ErrBusy
	}
	defer s.metrics.running(rt)()
	dispatch = s.metrics.countCalls(rt, dispatch)
	timeout := time.Duration(req.Timeout) * time.Second
	if req.Timeout <= 0 {
		timeout = 30 * time.Second
	}
	timeout = min(timeout, 300*time.Second)

	wd := &workdir{ws: s.ws, session: req.SessionID, cred: req.Credential}
	defer wd.release()
	var room int64
	if req.SessionID != "" || len(req.Files) > 0 || rt == "python" || rt == "node" || rt == "command" {
		dir, err := wd.get()
		if err != nil {
			var re *RequestError
			if errors.As(err, &re) {
				return nil, err
			}
			return nil, badRequest("%v", err)
		}
		// A workspace already over the quota runs nothing; what is left
		// bounds any one file a subprocess writes.
		var inputs int64
		for _, f := range req.Files {
			inputs += int64(len(f.Data))
		}
		if room, err = s.quota().room(dir, inputs, len(req.Files)); err != nil {
			return &V1Response{ExecuteResponse: ExecuteResponse{ExitCode: -1, Error: err.Error()}, Status: "error"}, nil
		}
		if err := writeInputs(dir, req.Files, s.jail.user); err != nil {
			if errors.Is(err, errBadPath) {
				return nil, badRequest("%v", err)
			}
			return nil, err
		}
	}
	start := time.Now()
	var resp V1Response
	if rt == "javascript" || rt == "typescript" {
		resp = s.runJS(ctx, req, rt, wd, timeout, dispatch)
		if req.SessionID != "" && wd.id != "" {
			// What it held at the start, inputs included, unless the code
			// wrote (then it is measured again).
			bytes := s.quota().bytes - room
			if wd.wrote.Load() {
				bytes, _, _ = s.quota().usage(wd.dir)
			}
			s.metrics.workspace(wd.id, bytes)
		}
	} else {
		dir, _ := wd.get()
		out, err := s.jail.run(ctx, runRequest{runtime: rt, code: req.Code, dir: dir, timeout: timeout, dispatch: dispatch, quota: s.quota(), room: room, log: req.Log})
		if err != nil {
			return nil, err
		}
		resp.Output, resp.Logs, resp.ExitCode, resp.Error = out.output, out.logs, out.exitCode, out.err
		resp.stdout, resp.stderr = out.stdout, out.logs
		resp.Status = "success"
		switch {
		case out.timedOut:
			resp.Status = "terminated"
		case out.err != "":
			resp.Status = "error"
		}
		resp.Files = collectFiles(dir, out.files, s.cfg.MaxFileBytes, &resp.Error, &resp.Logs)
		if out.overQuota {
			resp.Status = "error"
		}
		if req.SessionID != "" {
			s.metrics.workspace(wd.id, out.workspaceBytes)
		}
	}
	resp.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	s.metrics.observe(rt, resp.Status, time.Since(start))
	s.log.Info("execution", "runtime", rt, "status", resp.Status, "exit_code", resp.ExitCode, "duration", time.Since(start), "session", req.SessionID)
	return &resp, nil
}

// loopback says whether a listen address reaches this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// callbackClient posts the code's tool calls: no proxy from the
// environment, no redirect followed (a 3xx is an answer, and an error).
func callbackClient() *http.Client {
	return &http.Client{
		Timeout:       5 * time.Minute,
		Transport:     &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext, MaxIdleConnsPerHost: 8},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (s *Server) quota() quota {
	return quota{bytes: s.cfg.WorkspaceQuotaBytes, entries: s.cfg.WorkspaceMaxEntries}
}

// dispatcher makes the code's tool calls callbacks to the client.
func (s *Server) dispatcher(executionID, callbackURL string) Dispatcher {
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		if callbackURL == "" {
			return "", errors.New("no callback_url was given: tools are unavailable")
		}
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		body, _ := json.Marshal(map[string]any{"execution_id": executionID, "name": name, "args": args})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, callbackURL, bytes.NewReader(body))
		if err != nil {
			return "", fmt.Errorf("callback: %v", err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.client.Do(req)
		if err != nil {
			return "", fmt.Errorf("callback: %v", err)
		}
		defer resp.Body.Close()
		var out struct {
			Data  *string `json:"data"`
			Error string  `json:"error"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&out); err != nil {
			return "", fmt.Errorf("callback answered %s with no valid JSON", resp.Status)
		}
		if out.Error != "" {
			return "", errors.New(out.Error)
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("callback answered %s", resp.Status)
		}
		if out.Data == nil {
			return "", nil
		}
		return *out.Data, nil
	}
}

// writeInputs puts the request's files in the workspace, refusing any path
// that leaves it (symbolic links included) and anything there that is not
// a regular file (a FIFO the code left would block the write).
func writeInputs(dir string, files []File, owner *jailUser) error {
	if len(files) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range files {
		name, err := cleanName(f.Name)
		if err != nil {
			return err
		}
		if d := filepath.Dir(name); d != "." {
			if err := mkdirAll(root, d, owner); err != nil {
				return fmt.Errorf("%w: %q: %v", errBadPath, f.Name, err)
			}
		}
		if err := writeWorkspaceFile(root, name, f.Data, owner); err != nil {
			return fmt.Errorf("%w: %q: %v", errBadPath, f.Name, err)
		}
	}
	return nil
}

// unavailable says why a runtime cannot run on this server, or nil.
func (s *Server) unavailable(rt string) error {
	if rt != "python" && rt != "node" && rt != "command" {
		return nil
	}
	switch {
	case s.jail.rootWithoutSetpriv:
		return badRequest("runtime %s is disabled: the server runs as root and setpriv (util-linux) is not installed under /usr", rt)
	case s.jail.bwrap == "" && !s.cfg.Insecure:
		return badRequest("runtime %s is disabled: bubblewrap (bwrap) is not installed on the server", rt)
	case (rt == "python" && s.jail.python == "") || (rt == "node" && s.jail.node == ""):
		return badRequest("runtime %s is not installed on the server", rt)
	}
	return nil
}

// mkdirAll makes the directories of a path in the workspace, given to
// owner when it is set.
func mkdirAll(root *os.Root, dir string, owner *jailUser) error {
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if owner == nil {
		return nil
	}
	for d := dir; d != "." && d != "/"; d = filepath.Dir(d) {
		if err := root.Lchown(d, owner.uid, owner.gid); err != nil {
			return err
		}
	}
	return nil
}

// collectFiles reads the declared output files from the workspace. Each
// comes back under its base name, as the reference returns it, once
// however often it was declared. A declared file that does not exist is
// left out with a note in the logs (it does not fail the run, as with the
// reference); one that leaves the workspace or is not a regular file is
// reported in errText; one over the cap comes back as metadata. Files are
// opened without blocking (openFile). The notes and the problems name
// maxNotes files each, the rest counted, each name cut to maxNoteName
// bytes.
func collectFiles(dir string, names []string, maxBytes int64, errText, logs *string) []File {
	if len(names) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	var out []File
	var problems []string
	var notes strings.Builder
	missing, failed := 0, 0
	seen := map[string]bool{}
	problem := func(format string, args ...any) {
		if failed++; failed <= maxNotes {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for _, n := range names {
		name, err := cleanName(n)
		if err != nil {
			problem("%v: %q", errBadPath, noteName(n)) // cleanName's error, with the name cut
			continue
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		f, err := openFile(root, name, os.O_RDONLY, 0)
		if errors.Is(err, os.ErrNotExist) {
			if _, lerr := root.Lstat(name); errors.Is(lerr, os.ErrNotExist) {
				if missing++; missing <= maxNotes {
					fmt.Fprintf(&notes, "[airlock] declared file %q was not found in the workspace\n", noteName(n))
				}
				continue
			}
		}
		if err != nil {
			if !errors.Is(err, errNotRegular) {
				err = fmt.Errorf("%q: not a regular file in the workspace", noteName(n))
			}
			problem("declared file %v", err)
			continue
		}
		file := File{Name: filepath.Base(name), MIME: mimeOf(name)}
		info, err := f.Stat()
		if err == nil && info.Size() > maxBytes {
			file.Size = info.Size()
		} else if err == nil {
			file.Data, err = io.ReadAll(io.LimitReader(f, maxBytes+1))
			if int64(len(file.Data)) > maxBytes { // it grew meanwhile
				file.Size, file.Data = int64(len(file.Data)), nil
			}
		}
		f.Close()
		if err != nil {
			problem("declared file %q: %v", noteName(n), err)
			continue
		}
		if file.MIME == "" {
			file.MIME = sniffMIME(file.Data)
		}
		out = append(out, file)
	}
	if missing > maxNotes {
		fmt.Fprintf(&notes, "[airlock] %d more declared files were not found in the workspace\n", missing-maxNotes)
	}
	*logs += notes.String()
	if failed > maxNotes {
		problems = append(problems, fmt.Sprintf("%d more declared files could not be returned", failed-maxNotes))
	}
	if len(problems) > 0 && *errText == "" {
		*errText = strings.Join(problems, "; ")
	}
	return out
}

// The notes and problems collectFiles writes name at most maxNotes files
// each, and at most maxNoteName bytes of each name (noteName).
const (
	maxNotes    = 10
	maxNoteName = 200
)

// noteName is a declared name for a note: its first maxNoteName bytes.
func noteName(n string) string {
	if len(n) <= maxNoteName {
		return n
	}
	i := maxNoteName
	for i > 0 && !utf8.RuneStart(n[i]) {
		i--
	}
	return n[:i] + "…"
}

// mimeTypes are the types of returned files by extension: a fixed table,
// as the reference's, so that answers do not depend on the host's
// /etc/mime.types.
var mimeTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".svg": "image/svg+xml", ".pdf": "application/pdf", ".csv": "text/csv", ".json": "application/json",
	".html": "text/html", ".htm": "text/html", ".txt": "text/plain", ".log": "text/plain", ".md": "text/markdown",
	".zip": "application/zip",
}

// mimeOf is a file's type by its extension, "" when the table lacks it.
func mimeOf(name string) string { return mimeTypes[strings.ToLower(filepath.Ext(name))] }

// sniffMIME types the data of a file the table does not know.
func sniffMIME(data []byte) string { return http.DetectContentType(data[:min(len(data), 512)]) }

// realBinary is the interpreter a command name runs, and the tree it is
// installed in (which the jail shows): the symbolic links followed and,
// for Python, the executable itself rather than a wrapper script such as a
// pyenv shim (which would cost every execution its own start and need more
// of the machine inside the jail), with its base prefix.
func realBinary(path, runtime string) (bin, prefix string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path, ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	prefix = filepath.Dir(filepath.Dir(abs))
	if runtime != "python" {
		return abs, prefix
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, abs, "-c", "import sys; print(sys.executable); print(sys.base_prefix)").Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err == nil && len(lines) == 2 && filepath.IsAbs(lines[0]) && filepath.IsAbs(lines[1]) {
		exe := lines[0]
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		return exe, lines[1]
	}
	return abs, prefix
}

// PythonBinary is the Python executable the server runs, for comparisons.
func (s *Server) PythonBinary() string { return s.jail.python }

// NodeBinary is the Node.js executable the server runs.
func (s *Server) NodeBinary() string { return s.jail.node }

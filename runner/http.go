package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DispatchPath is where the sandbox posts tool calls, kept from the
// reference protocol.
const DispatchPath = "/_oasis/dispatch"

// HTTPRunner runs code on a remote sandbox service. Tool calls come back
// to its callback server, which it starts on first use (or which the
// application mounts: WithCallbackExternal and Handler).
type HTTPRunner struct {
	url         string
	timeout     time.Duration
	maxOutput   int
	maxFileSize int64
	retries     int
	delay       time.Duration
	blocked     map[string]bool
	client      *http.Client
	token       string

	cbAddr     string
	cbExternal string
	startOnce  sync.Once
	startErr   error
	srv        *http.Server
	cbURL      string

	mu    sync.Mutex
	execs map[string]*execution
}

type execution struct {
	ctx      context.Context
	dispatch DispatchFunc
}

// Option configures an HTTPRunner.
type Option func(*HTTPRunner)

// WithTimeout sets the default execution timeout (30 s).
func WithTimeout(d time.Duration) Option { return func(r *HTTPRunner) { r.timeout = d } }

// WithMaxOutput truncates Output and Logs beyond this many bytes (64 KiB).
func WithMaxOutput(n int) Option { return func(r *HTTPRunner) { r.maxOutput = n } }

// WithCallbackAddr is the listen address of the auto-started callback
// server (127.0.0.1:0).
func WithCallbackAddr(addr string) Option { return func(r *HTTPRunner) { r.cbAddr = addr } }

// WithCallbackExternal is the base URL at which the application serves
// Handler(); no callback server is started.
func WithCallbackExternal(url string) Option { return func(r *HTTPRunner) { r.cbExternal = url } }

// WithMaxFileSize: a returned file larger than this comes back as metadata
// only (10 MB).
func WithMaxFileSize(n int64) Option { return func(r *HTTPRunner) { r.maxFileSize = n } }

// WithMaxRetries is the total number of POST attempts (2; 1 means no retry).
func WithMaxRetries(n int) Option { return func(r *HTTPRunner) { r.retries = n } }

// WithRetryDelay is the first backoff delay, doubling each retry (500 ms).
func WithRetryDelay(d time.Duration) Option { return func(r *HTTPRunner) { r.delay = d } }

// WithHTTPClient sets the client used to reach the service.
func WithHTTPClient(c *http.Client) Option { return func(r *HTTPRunner) { r.client = c } }

// WithToken sends a bearer token to the service (its --token).
func WithToken(token string) Option { return func(r *HTTPRunner) { r.token = token } }

// WithBlockedTools are tools code may not call (execute_code, so that code
// cannot run code).
func WithBlockedTools(names ...string) Option {
	return func(r *HTTPRunner) {
		for _, n := range names {
			r.blocked[n] = true
		}
	}
}

// NewHTTPRunner returns a runner for the service at url.
func NewHTTPRunner(url string, opts ...Option) *HTTPRunner {
	r := &HTTPRunner{
		url: strings.TrimRight(url, "/"), timeout: 30 * time.Second, maxOutput: 64 << 10, maxFileSize: 10 << 20,
		retries: 2, delay: 500 * time.Millisecond, blocked: map[string]bool{"execute_code": true},
		client: &http.Client{}, cbAddr: "127.0.0.1:0", execs: map[string]*execution{},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Handler serves the tool callbacks, for an application that mounts it at
// DispatchPath (with WithCallbackExternal).
func (r *HTTPRunner) Handler() http.Handler { return http.HandlerFunc(r.serveCallback) }

// Close stops the callback server, if it started one.
func (r *HTTPRunner) Close() error {
	if r.srv != nil {
		return r.srv.Close()
	}
	return nil
}

func (r *HTTPRunner) callbackURL() (string, error) {
	r.startOnce.Do(func() {
		if r.cbExternal != "" {
			r.cbURL = strings.TrimRight(r.cbExternal, "/") + DispatchPath
			return
		}
		ln, err := net.Listen("tcp", r.cbAddr)
		if err != nil {
			r.startErr = fmt.Errorf("callback server: %w", err)
			return
		}
		mux := http.NewServeMux()
		mux.Handle(DispatchPath, r.Handler())
		r.srv = &http.Server{Handler: mux}
		go r.srv.Serve(ln)
		r.cbURL = "http://" + ln.Addr().String() + DispatchPath
	})
	return r.cbURL, r.startErr
}

type callbackBody struct {
	ExecutionID string          `json:"execution_id"`
	Name        string          `json:"name"`
	Args        json.RawMessage `json:"args"`
}

func (r *HTTPRunner) serveCallback(w http.ResponseWriter, req *http.Request) {
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	if req.Method != http.MethodPost {
		reply(http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
		return
	}
	var body callbackBody
	if err := json.NewDecoder(io.LimitReader(req.Body, 64<<20)).Decode(&body); err != nil {
		reply(http.StatusBadRequest, map[string]string{"error": "invalid JSON: " + err.Error()})
		return
	}
	r.mu.Lock()
	ex := r.execs[body.ExecutionID]
	r.mu.Unlock()
	if ex == nil {
		reply(http.StatusNotFound, map[string]string{"error": fmt.Sprintf("execution %q is not running (it finished, was cancelled, or is unknown)", body.ExecutionID)})
		return
	}
	if r.blocked[body.Name] {
		reply(http.StatusOK, map[string]string{"error": fmt.Sprintf("code cannot call %s", body.Name)})
		return
	}
	data, err := ex.dispatch(ex.ctx, ToolCall{ExecutionID: body.ExecutionID, Name: body.Name, Args: body.Args})
	if err != nil {
		reply(http.StatusOK, map[string]string{"error": err.Error()})
		return
	}
	reply(http.StatusOK, map[string]string{"data": data})
}

type wireFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
	MIME string `json:"mime,omitempty"`
	Size int64  `json:"size,omitempty"`
}

// Run sends the code to the service and waits for its result, answering
// its tool calls with dispatch meanwhile (concurrently).
func (r *HTTPRunner) Run(ctx context.Context, req CodeRequest, dispatch DispatchFunc) (CodeResult, error) {
	cb, err := r.callbackURL()
	if err != nil {
		return CodeResult{}, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := "exec_" + hex.EncodeToString(b[:])
	if dispatch == nil {
		dispatch = func(context.Context, ToolCall) (string, error) { return "", errors.New("no tools are available") }
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	r.execs[id] = &execution{ctx: runCtx, dispatch: dispatch}
	r.mu.Unlock()
	defer func() { r.mu.Lock(); delete(r.execs, id); r.mu.Unlock() }()

	timeout := req.Timeout
	if timeout <= 0 {
		timeout = r.timeout
	}
	files := make([]wireFile, len(req.Files))
	for i, f := range req.Files {
		files[i] = wireFile{Name: f.Name, Data: f.Data, MIME: f.MIME}
	}
	body, err := json.Marshal(map[string]any{
		"execution_id": id, "callback_url": cb, "code": req.Code, "runtime": req.Runtime,
		"session_id": req.SessionID, "timeout": int(math.Ceil(timeout.Seconds())), "files": files,
	})
	if err != nil {
		return CodeResult{}, err
	}
	var resp struct {
		Output   string     `json:"output"`
		Logs     string     `json:"logs"`
		ExitCode int        `json:"exit_code"`
		Error    string     `json:"error"`
		Files    []wireFile `json:"files"`
	}
	if err := r.post(ctx, "/execute", body, timeout+30*time.Second, &resp, req.Log); err != nil {
		return CodeResult{}, err
	}
	res := CodeResult{Output: truncate(resp.Output, r.maxOutput), Logs: truncate(resp.Logs, r.maxOutput), ExitCode: resp.ExitCode, Error: resp.Error}
	for _, f := range resp.Files {
		file := File{Name: f.Name, MIME: f.MIME, Data: f.Data, Size: f.Size}
		if int64(len(f.Data)) > r.maxFileSize {
			file.Size, file.Data = int64(len(f.Data)), nil
		}
		if file.Size == 0 {
			file.Size = int64(len(file.Data))
		}
		res.Files = append(res.Files, file)
	}
	return res, nil
}

func truncate(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	return s[:n] + "\n...[truncated]"
}

// A ServiceError is an error answer of the service.
type ServiceError struct {
	Status  int
	Message string
}

func (e *ServiceError) Error() string {
	return fmt.Sprintf("sandbox service: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// post sends a request, retrying 5xx answers, timeouts and connection
// errors with exponential backoff. With onLine, it asks for a stream and
// gives onLine each line of output as it comes; a stream that breaks after
// its first event is not retried (the code ran).
func (r *HTTPRunner) post(ctx context.Context, path string, body []byte, timeout time.Duration, out any, onLine func(string)) error {
	attempts := max(r.retries, 1)
	delay := r.delay
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return ctx.Err()
			}
			delay *= 2
		}
		reqCtx, cancel := context.WithTimeout(ctx, timeout)
		req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, r.url+path, bytes.NewReader(body))
		if err != nil {
			cancel()
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if r.token != "" {
			req.Header.Set("Authorization", "Bearer "+r.token)
		}
		if onLine != nil {
			req.Header.Set("Accept", streamType)
		}
		resp, err := r.client.Do(req)
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			last = err
			continue
		}
		if resp.StatusCode == http.StatusOK && onLine != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), streamType) {
			err := readStream(resp.Body, out, onLine)
			resp.Body.Close()
			cancel()
			if err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			last = err
			continue
		}
		if resp.StatusCode != http.StatusOK {
			var e struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(data, &e)
			last = &ServiceError{Status: resp.StatusCode, Message: e.Error}
			if resp.StatusCode >= 500 {
				continue
			}
			return last
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("sandbox service: invalid response: %v", err)
		}
		return nil
	}
	return last
}

// streamType is the stream HTTPRunner asks for when a request has Log.
const streamType = "application/x-ndjson"

// readStream reads a stream of the service's events (service.StreamEvent):
// each log line to onLine, the result into out; an error event is a
// *ServiceError.
func readStream(body io.Reader, out any, onLine func(string)) error {
	dec := json.NewDecoder(body)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Text   string          `json:"text"`
			Result json.RawMessage `json:"result"`
			Status int             `json:"status"`
			Error  string          `json:"error"`
		}
		if err := dec.Decode(&ev); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("sandbox service: the stream ended without a result: %v", err)
		}
		switch ev.Type {
		case "log":
			onLine(ev.Text)
		case "result":
			if err := json.Unmarshal(ev.Result, out); err != nil {
				return fmt.Errorf("sandbox service: invalid response: %v", err)
			}
			return nil
		case "error":
			return &ServiceError{Status: ev.Status, Message: ev.Error}
		}
	}
}

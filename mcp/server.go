// Package mcp serves Airlock as an MCP server (github.com/modelcontextprotocol/go-sdk):
// a run_code tool that runs a program in a fresh sandbox, and, given other
// MCP servers, a code-mode proxy that exposes their tools inside the sandbox
// as async functions namespaced by server (github.createIssue({...})), so
// that a model writes one program that calls many tools instead of making
// many round trips.
//
// run_code answers with the run's text (values as airlock.Inspect shows
// them) and the Result JSON as structured content, both bounded by
// Options.MaxOutput (20,000 characters by default): the text keeps its head
// and tail around "... [truncated N characters] ...", the structured
// content the status, the error and the fields that fit whole, naming the
// others in "truncated". Neither ever fails to encode. When the call asks
// for progress (a progressToken), the report() values and console lines
// are sent as progress notifications while the program runs, one entry a
// line of the message ("report: " and the value, or the console level, ": "
// and the line, as in "log: hi"; each cut to 2,000 characters). They are
// batched, so that a flood of lines does not flood the client: a
// notification carries what came since the one before, at most 16 KiB (the
// rest is dropped until it is sent, and its last line says how many), at
// most one goes out per 100 ms while the program runs (the last at its
// end), and at most 1 MiB in a call; the program never waits for the
// client, and the result has every line. The progress value counts the
// entries so far.
//
// The upstream servers are connected in the background, each on its own
// with a timeout per stage (connect and initialize, tools/list, each call),
// so the server answers initialize at once and nothing an upstream does
// holds run_code: a program waits only for the upstreams it names, and
// calling one that is not ready throws an error that says what it is
// doing. An upstream that fails or goes away is retried, and list_apis
// says which are ready. run_code's description gives the upstreams' TypeScript
// declarations while they are short and only the function names past
// that, with list_apis giving the declarations, of one server if asked.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// Options configure a server.
type Options struct {
	// Runtime runs the programs; nil means a default one.
	Runtime *airlock.Runtime
	// MemoryLimitBytes caps a program's heap; 0 means 64 MiB.
	MemoryLimitBytes int64
	// Timeout of a program that asks for none; 0 means 30 s.
	Timeout time.Duration
	// MaxTimeout bounds what a program may ask for with timeout_ms; 0
	// means 5 minutes.
	MaxTimeout time.Duration
	// Upstreams are MCP servers to proxy; nil means none.
	Upstreams *Config
	// Version is reported to clients as the server's; "" means the
	// module's version from the build information.
	Version string
	// ConnectTimeout bounds starting or reaching an upstream and its
	// answer to initialize; 0 means 30 s. Each upstream is connected on
	// its own, in the background: the server answers at once, an upstream
	// appears when it is ready, and one that fails or goes away is retried
	// (after 1 s, doubling to at most RetryMax). A server's "timeouts" in
	// the config override this and the next two.
	ConnectTimeout time.Duration
	// ListTimeout bounds an upstream's answer to tools/list; 0 means 30 s.
	ListTimeout time.Duration
	// CallTimeout bounds one call of an upstream tool (the program's time
	// limit bounds it too); past it the call throws in the program. A
	// command that has not read a message of ours for this long is killed
	// and connected again. 0 means 1 minute.
	CallTimeout time.Duration
	// FirstWait is how long a run_code call waits for the upstreams its
	// program names that are still on their first attempt to connect (a
	// client's first call often comes right after initialize); past it
	// the program runs, and its calls of an upstream that is not ready
	// throw an error that names the upstream and what it is doing
	// (`upstream "fs" is not ready: initialize has not answered after
	// 10s`). A program never waits for an upstream it does not name. 0
	// means 10 s; negative, no wait.
	FirstWait time.Duration
	// RetryMax is the longest wait between two attempts to connect an
	// upstream; 0 means 1 minute.
	RetryMax time.Duration
	// Workers, when positive and Runtime is nil, runs the programs in that
	// many worker processes (airlock.RuntimeConfig.Workers).
	Workers int
	// Fetch, when set, gives every program fetch under this policy
	// (airlock.Fetch: the hosts it allows, the secrets the host adds that
	// no program sees); run_code's description names the hosts. Nil
	// means no network.
	Fetch *airlock.FetchPolicy
	// MaxOutput bounds what run_code gives back to the model, in
	// characters: its text keeps its head and tail around a marker that
	// says how much was cut (agent.ClipText), and its structured
	// content keeps the status, the error (message and stack cut) and as
	// many of result, reports and logs as fit, whole, naming the others
	// in "truncated". 0 means agent.DefaultMaxOutput (20,000); negative
	// means no bound.
	MaxOutput int
}

// A Server is Airlock's MCP server.
type Server struct {
	opts   Options
	server *sdk.Server
	client *sdk.Client
	ctx    context.Context // ends at Close: stops the connecting
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	links  []*link    // by name
	regMu  sync.Mutex // register: a description and its registration at once
}

// RunCodeArgs are the input of run_code.
type RunCodeArgs struct {
	Code      string `json:"code" jsonschema:"the program: an ES module; export default its result, or call report(value) to stream values"`
	Language  string `json:"language,omitempty" jsonschema:"typescript (the default) or javascript"`
	TimeoutMS int    `json:"timeout_ms,omitempty" jsonschema:"time limit in milliseconds"`
}

// NewServer returns the server at once and connects to the upstream
// servers, if any, in the background, each on its own with its own timeout
// (Options.ConnectTimeout): an upstream's tools appear in run_code when it
// is ready (clients are told the tool list changed); one that fails to
// start, to list its tools, or later goes away is reported (Failures,
// list_apis, the run_code description) and retried. Ready waits for the
// first attempts. ctx, or Close, ends the connecting.
func NewServer(ctx context.Context, opts Options) (*Server, error) {
	if opts.MemoryLimitBytes < 0 || opts.Timeout < 0 || opts.MaxTimeout < 0 || opts.ConnectTimeout < 0 || opts.ListTimeout < 0 || opts.CallTimeout < 0 || opts.RetryMax < 0 {
		return nil, errors.New("mcp: negative limit")
	}
	if opts.MemoryLimitBytes == 0 {
		opts.MemoryLimitBytes = 64 << 20
	}
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxTimeout == 0 {
		opts.MaxTimeout = 5 * time.Minute
	}
	if opts.MaxOutput == 0 {
		opts.MaxOutput = agent.DefaultMaxOutput
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 30 * time.Second
	}
	if opts.ListTimeout == 0 {
		opts.ListTimeout = 30 * time.Second
	}
	if opts.CallTimeout == 0 {
		opts.CallTimeout = time.Minute
	}
	if opts.FirstWait == 0 {
		opts.FirstWait = 10 * time.Second
	}
	if opts.RetryMax == 0 {
		opts.RetryMax = time.Minute
	}
	if opts.Runtime == nil {
		opts.Runtime = airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: opts.MaxTimeout + time.Second, Workers: opts.Workers})
	}
	if opts.Version == "" {
		opts.Version = ModuleVersion()
	}
	s := &Server{
		opts: opts,
		server: sdk.NewServer(&sdk.Implementation{Name: "airlock", Title: "Airlock", Version: opts.Version},
			&sdk.ServerOptions{Instructions: instructions}),
		client: sdk.NewClient(&sdk.Implementation{Name: "airlock", Version: opts.Version}, nil),
	}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
			s.cancel()
		case <-s.ctx.Done():
		}
	}()
	if opts.Upstreams != nil {
		taken := map[string]string{}
		for _, name := range slices.Sorted(maps.Keys(opts.Upstreams.MCPServers)) {
			l := &link{name: name, ns: identifier(name), cfg: opts.Upstreams.MCPServers[name], state: stateConnecting, first: make(chan struct{})}
			s.links = append(s.links, l)
			if other, ok := taken[l.ns]; ok {
				l.state, l.err = stateFailed, fmt.Errorf("its sandbox name %s is taken by server %q", l.ns, other)
				close(l.first)
				continue
			}
			if err := l.cfg.check(); err != nil {
				l.state, l.err = stateFailed, err
				close(l.first)
				continue
			}
			taken[l.ns] = name
			s.wg.Add(1)
			go s.keep(l)
		}
	}
	s.register()
	return s, nil
}

// Ready waits until every upstream has been tried once (connected or
// failed), or ctx ends.
func (s *Server) Ready(ctx context.Context) error {
	for _, l := range s.links {
		select {
		case <-l.first:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// SDK is the underlying MCP server, to serve on any transport:
// s.SDK().Run(ctx, &mcp.StdioTransport{}), or mcp.NewStreamableHTTPHandler.
func (s *Server) SDK() *sdk.Server { return s.server }

// Failures are the upstream servers that cannot be used now: those that
// failed to connect (and are being retried, unless their configuration is
// wrong) and those that went away.
func (s *Server) Failures() []UpstreamFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	var fs []UpstreamFailure
	for _, l := range s.links {
		if l.state == stateFailed {
			fs = append(fs, UpstreamFailure{Server: l.name, Err: l.err})
		}
	}
	return fs
}

// connected are the upstreams ready now.
func (s *Server) connected() []*upstream {
	s.mu.Lock()
	defer s.mu.Unlock()
	var us []*upstream
	for _, l := range s.links {
		if l.state == stateReady {
			us = append(us, l.u)
		}
	}
	return us
}

// Close ends the upstream sessions (and stops their commands: a command
// that does not exit when its input is closed is killed after 2 s) and the
// connecting.
func (s *Server) Close() error {
	s.cancel()
	s.mu.Lock()
	var sessions []*sdk.ClientSession
	for _, l := range s.links {
		if l.u != nil {
			sessions = append(sessions, l.u.session)
		}
	}
	s.mu.Unlock()
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() { errs[i] = cs.Close() })
	}
	wg.Wait()
	s.wg.Wait()
	return errors.Join(errs...)
}

func (s *Server) register() {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	in, err := jsonschema.For[RunCodeArgs](nil)
	if err != nil {
		panic(err) // a fixed type: cannot fail
	}
	in.Properties["language"].Enum = []any{"typescript", "javascript"}
	min := 1
	in.Properties["code"].MinLength = &min
	in.Properties["timeout_ms"].Minimum = ptr(1.0)
	sdk.AddTool(s.server, &sdk.Tool{
		Name:         "run_code",
		InputSchema:  in,
		Description:  s.RunCodeDescription(),
		OutputSchema: resultSchema,
		Annotations:  &sdk.ToolAnnotations{Title: "Run code in the Airlock sandbox", OpenWorldHint: ptr(len(s.links) > 0)},
	}, s.runCode)
	if len(s.links) > 0 {
		sdk.AddTool(s.server, &sdk.Tool{
			Name: "list_apis",
			Description: "The TypeScript declarations of the upstream servers' functions that run_code programs call, " +
				"and which upstream servers are ready. Give server to see one.",
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		}, s.listAPIs)
	}
}

// ListAPIsArgs are the input of list_apis.
type ListAPIsArgs struct {
	Server string `json:"server,omitempty" jsonschema:"the upstream server (its name in the sandbox or as configured); all when empty"`
}

func (s *Server) listAPIs(_ context.Context, _ *sdk.CallToolRequest, in ListAPIsArgs) (*sdk.CallToolResult, any, error) {
	// The status is read before the declarations: an upstream said to be
	// ready has its declarations here (it was said ready, declarations
	// missing, when it became ready between the two).
	status := s.status()
	var decls []string
	found := in.Server == ""
	for _, u := range s.connected() {
		if in.Server == "" || in.Server == u.ns || in.Server == u.name {
			decls = append(decls, u.declarations())
			found = true
		}
	}
	text := "```typescript\n" + strings.Join(decls, "\n") + "```\n\nUpstream servers:\n" + status
	if !found {
		text = fmt.Sprintf("no ready upstream server is named %q.\n\nUpstream servers:\n%s", in.Server, status)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: true}, nil, nil
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
}

func ptr[T any](v T) *T { return &v }

// resultSchema describes the Result JSON, run_code's structured content.
var resultSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"status":          {Type: "string", Enum: []any{"success", "error", "memory", "terminated", "link_error"}},
		"result":          {Description: "the value of the default export"},
		"reports":         {Type: "array", Description: "the values given to report()"},
		"logs":            {Type: "array", Description: "console calls: {level, args}"},
		"error":           {Type: "object", Description: "name, message, stack, specifier, filename, line, column"},
		"durationMs":      {Type: "number"},
		"memoryUsedBytes": {Type: "integer"},
		"truncated": {Type: "object", Description: "set when the content passed the server's bound: omitted names the fields left out " +
			"(the text content shows them, cut), characters is the length of the whole"},
	},
	Required: []string{"status"},
}

const rules = `Run a program in a fresh, isolated JavaScript sandbox and get its result.

The program is an ES module in TypeScript (types are erased, not checked) or JavaScript. Its result is its default export (export default value; if that is a function, it is called and awaited). Call report(value) to emit values as it goes. console.log/info/warn/error/debug are captured and returned. Top-level await works.

The sandbox has no file system, no timers, no process, no require, no eval: only the ECMAScript built-ins, the web platform's APIs that compute (URL, URLSearchParams, TextEncoder, TextDecoder, atob, btoa, crypto, Headers, Request, Response, Blob, AbortController, Event, EventTarget, performance.now), structuredClone, queueMicrotask`

// noNetwork and withFetch say what network the programs have.
const (
	noNetwork = "\n\nNetwork: none (no fetch)."
	withFetch = "\n\nNetwork: fetch (the web's, returning a Response) to these hosts only: %s. A request to any other host is refused with a TypeError. Credentials the hosts need are added outside the sandbox: send none."
)

// instructions are the server's instructions to clients.
const instructions = `Airlock runs JavaScript and TypeScript programs in an isolated sandbox (run_code). ` +
	`Prefer one program that does a whole task, with loops, conditions and many calls, over many tool calls. ` +
	`Values the program passes to report(), and its console lines, arrive as progress notifications while it runs, when the request asks for progress. ` +
	`When upstream servers are configured, their tools are async functions in the sandbox, grouped by server; list_apis gives their TypeScript declarations and which servers are ready.`

// maxInlineDeclarations is how long the upstreams' declarations may be and
// still be given whole in run_code's description; longer, the description
// names the functions and list_apis gives the declarations.
const maxInlineDeclarations = 6000

// RunCodeDescription is run_code's description: the sandbox's rules, and
// the upstream functions the programs can call: their declarations when
// they are short, else their names (list_apis gives the declarations).
func (s *Server) RunCodeDescription() string {
	var b strings.Builder
	b.WriteString(rules)
	us := s.connected()
	if len(us) == 0 {
		b.WriteString(".")
	} else {
		b.WriteString(", and the upstream functions below. Each is an async function taking one input object, grouped by server; an upstream error is thrown with its message, a structured result arrives as an object, a text result as a string. Call many in one program (await Promise.all([...]) runs them concurrently) instead of one tool call at a time.\n\n")
		var decls []string
		total := 0
		for _, u := range us {
			d := u.declarations()
			decls = append(decls, d)
			total += len(d)
		}
		if total <= maxInlineDeclarations {
			b.WriteString("```typescript\n" + strings.Join(decls, "\n") + "```")
		} else {
			for _, u := range us {
				names := make([]string, len(u.tools))
				for i, t := range u.tools {
					names[i] = t.fn
				}
				fmt.Fprintf(&b, "- %s: %s\n", u.ns, strings.Join(names, ", "))
			}
			b.WriteString("\nCall list_apis (with server) for their TypeScript declarations before using them.")
		}
	}
	if s.opts.Fetch != nil {
		fmt.Fprintf(&b, withFetch, strings.Join(s.opts.Fetch.Allow, ", "))
	} else {
		b.WriteString(noNetwork)
	}
	b.WriteString(fmt.Sprintf("\n\nLimits: %d MiB of memory; %s unless timeout_ms asks for another (at most %s).", s.opts.MemoryLimitBytes>>20, s.opts.Timeout, s.opts.MaxTimeout))
	b.WriteString(s.failureText())
	return b.String()
}

// Declarations are the TypeScript declarations of the ready upstreams'
// functions.
func (s *Server) Declarations() string {
	var parts []string
	for _, u := range s.connected() {
		parts = append(parts, u.declarations())
	}
	return strings.Join(parts, "\n")
}

func (s *Server) failureText() string {
	s.mu.Lock()
	var waiting []string
	for _, l := range s.links {
		if l.state != stateReady {
			waiting = append(waiting, l.name)
		}
	}
	s.mu.Unlock()
	if len(waiting) == 0 {
		return ""
	}
	return "\n\nThese upstream servers are not available yet (list_apis tells why): " + strings.Join(waiting, ", ") + "."
}

// runCode runs a program. Errors in the program are results with isError,
// not protocol errors.
func (s *Server) runCode(ctx context.Context, req *sdk.CallToolRequest, in RunCodeArgs) (*sdk.CallToolResult, any, error) {
	lang := airlock.TypeScript
	switch strings.ToLower(in.Language) {
	case "", "typescript", "ts":
	case "javascript", "js":
		lang = airlock.JavaScript
	default:
		return nil, nil, fmt.Errorf("language must be typescript or javascript, not %q", in.Language)
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, nil, errors.New("code is empty")
	}
	timeout := s.opts.Timeout
	if in.TimeoutMS > 0 {
		timeout = min(time.Duration(in.TimeoutMS)*time.Millisecond, s.opts.MaxTimeout)
	}
	named := s.named(in.Code)
	if s.opts.FirstWait > 0 && len(named) > 0 {
		wait, cancel := context.WithTimeout(ctx, s.opts.FirstWait)
		for _, l := range named {
			select {
			case <-l.first:
			case <-wait.Done():
			}
		}
		cancel()
	}
	globals := map[string]any{}
	if s.opts.Fetch != nil { // a Fetcher a program: its records and its requests at once are its own
		globals["fetch"] = airlock.Fetch(*s.opts.Fetch)
	}
	s.mu.Lock()
	for _, l := range s.links {
		if l.tools != nil {
			globals[l.ns] = s.module(l, l.tools)
		}
	}
	s.mu.Unlock()
	var report func(any) // the values are kept in the Result's reports either way
	var logf func(airlock.Log)
	if req != nil && req.Session != nil && req.Params != nil {
		if tok := req.Params.GetProgressToken(); tok != nil {
			p := newProgress(ctx, req.Session, tok)
			defer p.close()
			report, logf = p.report, p.log
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ex, err := s.opts.Runtime.Run(runCtx, in.Code, airlock.Options{
		Language:         lang,
		Filename:         "program." + map[airlock.Language]string{airlock.TypeScript: "ts", airlock.JavaScript: "js"}[lang],
		Globals:          globals,
		MemoryLimitBytes: s.opts.MemoryLimitBytes,
		Report:           report,
		Log:              logf,
	})
	if err != nil {
		return nil, nil, err
	}
	res := ex.Wait()
	if res.Error != nil {
		switch {
		case res.Status == airlock.StatusTerminated && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
			res.Error.Message = fmt.Sprintf("stopped after %s (timeout_ms asks for up to %s)", timeout, s.opts.MaxTimeout)
		case res.Status == airlock.StatusMemory:
			res.Error.Message = fmt.Sprintf("the program needed more than its memory limit of %s", mib(s.opts.MemoryLimitBytes))
		}
	}
	s.explainMissing(res, named)
	text := res.Text(in.Code)
	return &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: agent.ClipText(text, s.opts.MaxOutput)}},
		IsError: res.Status != airlock.StatusSuccess,
	}, structuredContent(res, s.opts.MaxOutput), nil
}

// named are the upstreams whose sandbox names code has as a word not
// after a dot: those a program may use, and waits for on their first
// attempt.
func (s *Server) named(code string) []*link {
	var ls []*link
	for _, l := range s.links {
		if l.cfg.check() == nil && hasWord(code, l.ns) {
			ls = append(ls, l)
		}
	}
	return ls
}

// hasWord reports whether code has id as a whole identifier, not as a
// property (after a dot).
func hasWord(code, id string) bool {
	part := func(c byte) bool {
		return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	for off := 0; ; {
		i := strings.Index(code[off:], id)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(id)
		if (i == 0 || !part(code[i-1]) && code[i-1] != '.') && (j == len(code) || !part(code[j])) {
			return true
		}
		off = i + 1
	}
}

// explainMissing adds to a program's ReferenceError for the name of an
// upstream that has not been ready yet (its namespace is then not bound:
// its functions are not known) what the upstream is doing.
func (s *Server) explainMissing(res *airlock.Result, named []*link) {
	if res.Error == nil || res.Error.Name != "ReferenceError" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range named {
		if l.tools == nil && res.Error.Message == l.ns+" is not defined" {
			res.Error.Message += ": " + s.notReadyLocked(l)
			return
		}
	}
}

// clipJSON is s clipped by agent.ClipText so that its JSON takes at most
// n characters (an escaped control character takes six).
func clipJSON(s string, n int) string {
	for k := n; ; {
		c := agent.ClipText(s, k)
		b, _ := json.Marshal(c)
		if len(b)-2 <= n || k == 0 {
			return c
		}
		k = max(min(k*n/(len(b)-2), k-1), 0)
	}
}

// structuredContent is the Result JSON, within max characters (negative:
// no bound) when it is longer: the status, the duration, the memory and the
// error (its message and stack cut) are kept, then the result, the reports
// and the logs, each whole if it fits in the room left, and "truncated"
// names what was left out. It never fails: a run whose tools were called
// always answers.
func structuredContent(res *airlock.Result, max int) json.RawMessage {
	full, err := json.Marshal(res)
	if err == nil && (max < 0 || len(full) <= max) {
		return full
	}
	parts := map[string]json.RawMessage{}
	if err == nil {
		_ = json.Unmarshal(full, &parts)
	}
	out := map[string]any{"status": res.Status, "reports": []any{}, "logs": []any{}}
	for _, k := range []string{"durationMs", "memoryUsedBytes"} {
		if v, ok := parts[k]; ok {
			out[k] = v
		}
	}
	if res.Error != nil {
		e := *res.Error
		e.Name = clipJSON(e.Name, max/16)
		e.Specifier = clipJSON(e.Specifier, max/16)
		e.Filename = clipJSON(e.Filename, max/16)
		e.Message = clipJSON(e.Message, max/4)
		e.Stack = clipJSON(e.Stack, max/4)
		out["error"] = &e
	}
	base, _ := json.Marshal(out)
	room := max - len(base) - 200 // the "truncated" object
	omitted := []string{}
	for _, k := range []string{"result", "reports", "logs"} {
		v, ok := parts[k]
		switch {
		case !ok && k == "result" && (err == nil || res.Status != airlock.StatusSuccess):
		case ok && len(v)+len(k)+4 <= room:
			out[k] = v
			room -= len(v) + len(k) + 4
		default:
			omitted = append(omitted, k)
		}
	}
	out["truncated"] = map[string]any{"omitted": omitted, "characters": len(full)}
	b, _ := json.Marshal(out)
	return b
}

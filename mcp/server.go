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
// others in "truncated". Neither ever fails to encode.
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
	// Version is reported to clients.
	Version string
	// Workers, when positive and Runtime is nil, runs the programs in that
	// many worker processes (airlock.RuntimeConfig.Workers).
	Workers int
	// MaxOutput bounds what run_code gives back to the model, in
	// characters: its text keeps its head and tail around a marker that
	// says how much was cut (airlock.ClipText), and its structured
	// content keeps the status, the error (message and stack cut) and as
	// many of result, reports and logs as fit, whole, naming the others
	// in "truncated". 0 means airlock.DefaultMaxOutput (20,000); negative
	// means no bound.
	MaxOutput int
}

// A Server is Airlock's MCP server.
type Server struct {
	opts      Options
	server    *sdk.Server
	client    *sdk.Client
	mu        sync.Mutex
	upstreams []*upstream
	failures  []UpstreamFailure
}

// RunCodeArgs are the input of run_code.
type RunCodeArgs struct {
	Code      string `json:"code" jsonschema:"the program: an ES module; export default its result, or call report(value) to stream values"`
	Language  string `json:"language,omitempty" jsonschema:"typescript (the default) or javascript"`
	TimeoutMS int    `json:"timeout_ms,omitempty" jsonschema:"time limit in milliseconds"`
}

// NewServer connects to the upstream servers, if any, and returns the
// server. An upstream that fails to start or to list its tools is left out
// and reported (Failures, and in the run_code description); the others
// work. The context bounds the connecting.
func NewServer(ctx context.Context, opts Options) (*Server, error) {
	if opts.MemoryLimitBytes < 0 || opts.Timeout < 0 || opts.MaxTimeout < 0 {
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
		opts.MaxOutput = airlock.DefaultMaxOutput
	}
	if opts.Runtime == nil {
		opts.Runtime = airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: opts.MaxTimeout + time.Second, Workers: opts.Workers})
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := &Server{
		opts:   opts,
		server: sdk.NewServer(&sdk.Implementation{Name: "airlock", Version: version}, nil),
		client: sdk.NewClient(&sdk.Implementation{Name: "airlock", Version: version}, nil),
	}
	if opts.Upstreams != nil {
		for _, name := range slices.Sorted(maps.Keys(opts.Upstreams.MCPServers)) {
			u, err := connect(ctx, s.client, name, opts.Upstreams.MCPServers[name])
			s.add(name, u, err)
		}
	}
	s.register()
	return s, nil
}

// add records a connected upstream, or its failure.
func (s *Server) add(name string, u *upstream, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		for _, o := range s.upstreams {
			if o.ns == u.ns {
				err = fmt.Errorf("its sandbox name %s is taken by server %q", u.ns, o.name)
				u.session.Close()
			}
		}
	}
	if err != nil {
		s.failures = append(s.failures, UpstreamFailure{Server: name, Err: err})
		return
	}
	s.upstreams = append(s.upstreams, u)
}

// SDK is the underlying MCP server, to serve on any transport:
// s.SDK().Run(ctx, &mcp.StdioTransport{}), or mcp.NewStreamableHTTPHandler.
func (s *Server) SDK() *sdk.Server { return s.server }

// Failures are the upstream servers that could not be used.
func (s *Server) Failures() []UpstreamFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]UpstreamFailure(nil), s.failures...)
}

// Close ends the upstream sessions (and stops their commands).
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, u := range s.upstreams {
		errs = append(errs, u.session.Close())
	}
	s.upstreams = nil
	return errors.Join(errs...)
}

func (s *Server) register() {
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
		Annotations:  &sdk.ToolAnnotations{Title: "Run code in the Airlock sandbox", OpenWorldHint: ptr(len(s.upstreams) > 0)},
	}, s.runCode)
	if len(s.upstreams) > 0 || len(s.failures) > 0 {
		sdk.AddTool(s.server, &sdk.Tool{
			Name:        "list_apis",
			Description: "List the TypeScript declarations of the upstream tools that run_code programs can call.",
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s.Declarations() + s.failureText()}}}, nil, nil
		})
	}
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

The sandbox has no network, no file system, no timers, no process, no require, no eval: only the ECMAScript built-ins, structuredClone, queueMicrotask`

// RunCodeDescription is run_code's description: the sandbox's rules, and
// the declarations of the upstream tools, if any.
func (s *Server) RunCodeDescription() string {
	var b strings.Builder
	b.WriteString(rules)
	s.mu.Lock()
	n := len(s.upstreams)
	s.mu.Unlock()
	if n == 0 {
		b.WriteString(".")
	} else {
		b.WriteString(", and the upstream tools below. Each is an async function taking one input object, grouped by server; an upstream error is thrown with its message, a structured result arrives as an object, a text result as a string. Call many in one program (await Promise.all([...]) runs them concurrently) instead of one tool call at a time.\n\n")
		b.WriteString("```typescript\n" + s.Declarations() + "```")
	}
	b.WriteString(fmt.Sprintf("\n\nLimits: %d MiB of memory; %s unless timeout_ms asks for another (at most %s).", s.opts.MemoryLimitBytes>>20, s.opts.Timeout, s.opts.MaxTimeout))
	b.WriteString(s.failureText())
	return b.String()
}

// Declarations are the TypeScript declarations of the upstream tools.
func (s *Server) Declarations() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, u := range s.upstreams {
		parts = append(parts, u.declarations())
	}
	return strings.Join(parts, "\n")
}

func (s *Server) failureText() string {
	fs := s.Failures()
	if len(fs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nThese upstream servers are unavailable:")
	for _, f := range fs {
		b.WriteString("\n- " + f.Error())
	}
	return b.String()
}

// runCode runs a program. Errors in the program are results with isError,
// not protocol errors.
func (s *Server) runCode(ctx context.Context, _ *sdk.CallToolRequest, in RunCodeArgs) (*sdk.CallToolResult, any, error) {
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
	globals := map[string]any{}
	s.mu.Lock()
	for _, u := range s.upstreams {
		globals[u.ns] = u.module()
	}
	s.mu.Unlock()
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ex, err := s.opts.Runtime.Run(runCtx, in.Code, airlock.Options{
		Language:         lang,
		Filename:         "program." + map[airlock.Language]string{airlock.TypeScript: "ts", airlock.JavaScript: "js"}[lang],
		Globals:          globals,
		MemoryLimitBytes: s.opts.MemoryLimitBytes,
		Report:           func(any) {}, // kept in the Result's reports
	})
	if err != nil {
		return nil, nil, err
	}
	res := ex.Wait()
	text := res.Text(in.Code)
	if res.Status == airlock.StatusTerminated && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		text = fmt.Sprintf("timed out after %s\n", timeout) + text
	}
	return &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: airlock.ClipText(text, s.opts.MaxOutput)}},
		IsError: res.Status != airlock.StatusSuccess,
	}, structuredContent(res, s.opts.MaxOutput), nil
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
		e.Message = airlock.ClipText(e.Message, max/4)
		e.Stack = airlock.ClipText(e.Stack, max/4)
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

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
	"github.com/airlockrun/airlock/internal/nesting"
)

// An upstream is a connected MCP server whose tools the sandbox calls as
// async functions of one object, named by the server.
type upstream struct {
	name    string // as configured
	ns      string // the sandbox's name for it
	session *sdk.ClientSession
	stdio   *stdioTransport // for a command: its process
	tools   []upstreamTool
	more    bool // it listed more than maxTools tools
}

type upstreamTool struct {
	fn   string // the function's name in the namespace
	tool *sdk.Tool
}

// Bounds of what one upstream lists.
const (
	// maxTools is how many tools of one upstream are offered; the rest
	// are left out (list_apis says so).
	maxTools = 1000
	// maxToolDescription bounds a tool's description in the declarations.
	maxToolDescription = 2000
)

// An UpstreamFailure is a configured server that could not be used.
type UpstreamFailure struct {
	Server string
	Err    error
}

func (f UpstreamFailure) Error() string { return fmt.Sprintf("%s: %v", f.Server, f.Err) }

// transport is how to reach an upstream: a command's process (returned as
// well, to say how it exited) or a streamable HTTP endpoint.
func transport(cfg ServerConfig, writeTimeout time.Duration) (sdk.Transport, *stdioTransport, error) {
	switch {
	case cfg.Command != "" && cfg.URL != "":
		return nil, nil, errors.New("give either command or url, not both")
	case cfg.Command != "":
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Env = os.Environ()
		for k, v := range cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		t := newStdioTransport(cmd, writeTimeout)
		return t, t, nil
	case cfg.URL != "":
		hc := http.DefaultClient
		if len(cfg.Headers) > 0 {
			hc = &http.Client{Transport: headerTransport{cfg.Headers, http.DefaultTransport}}
		}
		return &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: -1}, nil, nil
	default:
		return nil, nil, errors.New("no command and no url")
	}
}

// connect starts or reaches l's server, each stage bounded by its timeout
// and recorded in l (for the "not ready" errors), and lists its tools.
func (s *Server) connect(l *link) (*upstream, error) {
	tm := s.timeouts(l)
	t, stdio, err := transport(l.cfg, tm.call)
	if err != nil {
		return nil, err
	}
	// exited adds how a command ended to an error that its end caused.
	exited := func(err error) error {
		if stdio != nil {
			if how := stdio.exit(time.Second); how != "" {
				return errors.New(how)
			}
		}
		return err
	}
	s.setStage(l, stageInitialize)
	ctx, cancel := context.WithTimeout(s.ctx, tm.connect)
	session, err := s.client.Connect(ctx, t, nil)
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded) && s.ctx.Err() == nil
	cancel()
	if err != nil {
		if stdio != nil {
			stdio.kill()
		}
		if timedOut {
			return nil, fmt.Errorf("initialize did not answer within %s (the connect timeout)", tm.connect)
		}
		return nil, exited(fmt.Errorf("connect: %w", err))
	}
	s.setStage(l, stageList)
	u := &upstream{name: l.name, ns: l.ns, session: session, stdio: stdio}
	ctx, cancel = context.WithTimeout(s.ctx, tm.list)
	defer cancel()
	taken := map[string]bool{}
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded) && s.ctx.Err() == nil
			go session.Close() // a command that will not exit is killed after stopGrace
			if timedOut {
				return nil, fmt.Errorf("tools/list did not answer within %s (the list timeout)", tm.list)
			}
			return nil, exited(fmt.Errorf("list tools: %w", err))
		}
		if len(u.tools) == maxTools {
			u.more = true
			break
		}
		fn := identifier(tool.Name)
		for base, i := fn, 2; taken[fn]; i++ {
			fn = fmt.Sprintf("%s%d", base, i)
		}
		taken[fn] = true
		if len(tool.Description) > maxToolDescription {
			t := *tool
			t.Description = strings.ToValidUTF8(t.Description[:maxToolDescription], "") + "…"
			tool = &t
		}
		u.tools = append(u.tools, upstreamTool{fn: fn, tool: tool})
	}
	if stdio != nil {
		stdio.ready.Store(true)
	}
	return u, nil
}

type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// identifier is the sandbox's name for a server or a tool: its camelCase
// (agent.FunctionName), kept off the sandbox's own globals.
func identifier(name string) string {
	id := agent.FunctionName(name)
	if id == "console" || id == "report" {
		return id + "_"
	}
	return id
}

// module is the namespace object the sandbox gets for l: an async function
// per tool it listed when last ready, taking one input object. Each call
// goes to the upstream's session of the moment, or fails at once with what
// the upstream is doing when it is not ready.
func (s *Server) module(l *link, tools []upstreamTool) map[string]any {
	m := make(map[string]any, len(tools))
	for _, t := range tools {
		name := t.tool.Name
		m[t.fn] = airlock.Async(airlock.JSONFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			return s.call(ctx, l, name, args)
		}))
	}
	return m
}

// call calls an upstream tool with the first argument of an argument list:
// an upstream error is thrown with its message; a structured result arrives
// as the object, a text result as a string. The call is bounded by the
// upstream's call timeout, and returns when ctx ends whatever the upstream
// does.
func (s *Server) call(ctx context.Context, l *link, tool string, args json.RawMessage) (json.RawMessage, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(args, &list); err != nil {
		return nil, err
	}
	var input any = map[string]any{}
	if len(list) > 0 && string(list[0]) != "null" {
		input = list[0]
	}
	u, why := s.current(l)
	if u == nil {
		return nil, errors.New(why)
	}
	limit := s.timeouts(l).call
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := u.session.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: input})
		done <- answer{res, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-cctx.Done():
		// The SDK's call returns when its context ends, unless it is
		// stuck writing to a command that does not read: then the
		// command's write timeout ends it.
	}
	res, err := a.res, a.err
	if res == nil && err == nil {
		err = cctx.Err()
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("upstream %q: %s did not answer within %s (the call timeout)", l.name, tool, limit)
		case u.stdio != nil:
			if how := u.stdio.exit(time.Second); how != "" {
				return nil, fmt.Errorf("upstream %q went away during the call to %s: it %s", l.name, tool, how)
			}
		}
		return nil, fmt.Errorf("%s.%s: %v", u.ns, tool, err)
	}
	text := contentText(res.Content)
	if res.IsError {
		if text == "" {
			text = "the tool failed"
		}
		return nil, errors.New(text)
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	return json.Marshal(text)
}

// contentText joins a result's text; other content is named, not inlined.
func contentText(content []sdk.Content) string {
	parts := make([]string, 0, len(content))
	for _, c := range content {
		switch x := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, x.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", x.MIMEType, len(x.Data)))
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// declarations are the TypeScript declarations of the upstream's tools.
func (u *upstream) declarations() string {
	docs := make([]agent.FunctionDoc, 0, len(u.tools))
	for _, t := range u.tools {
		docs = append(docs, agent.FunctionDoc{
			Name: t.fn, Description: t.tool.Description, Async: true,
			Input: schemaOf(t.tool.InputSchema), Output: schemaOf(t.tool.OutputSchema), Returns: "string",
		})
	}
	return agent.NamespaceDeclarations(u.ns, docs)
}

// schemaOf reads a schema the client received as JSON. One nested deeper
// than nesting.MaxSchemaDepth is not decoded (the decoder's time grows with
// the square of the depth, and the declarations show 32 levels at most): it
// is shown as unknown.
func schemaOf(v any) *jsonschema.Schema {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || nesting.CheckSchema(b) != nil {
		return nil
	}
	var s jsonschema.Schema
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

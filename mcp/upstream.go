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
	tools   []upstreamTool
}

type upstreamTool struct {
	fn   string // the function's name in the namespace
	tool *sdk.Tool
}

// An UpstreamFailure is a configured server that could not be used.
type UpstreamFailure struct {
	Server string
	Err    error
}

func (f UpstreamFailure) Error() string { return fmt.Sprintf("%s: %v", f.Server, f.Err) }

// connect starts or reaches an upstream server and lists its tools.
func connect(ctx context.Context, client *sdk.Client, name string, cfg ServerConfig) (*upstream, error) {
	var transport sdk.Transport
	switch {
	case cfg.Command != "" && cfg.URL != "":
		return nil, errors.New("give either command or url, not both")
	case cfg.Command != "":
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Env = os.Environ()
		for k, v := range cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		transport = &sdk.CommandTransport{Command: cmd}
	case cfg.URL != "":
		hc := http.DefaultClient
		if len(cfg.Headers) > 0 {
			hc = &http.Client{Transport: headerTransport{cfg.Headers, http.DefaultTransport}}
		}
		transport = &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: -1}
	default:
		return nil, errors.New("no command and no url")
	}
	return connectTransport(ctx, client, name, transport)
}

func connectTransport(ctx context.Context, client *sdk.Client, name string, t sdk.Transport) (*upstream, error) {
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	u := &upstream{name: name, ns: identifier(name), session: session}
	taken := map[string]bool{}
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			session.Close()
			return nil, fmt.Errorf("list tools: %w", err)
		}
		fn := identifier(tool.Name)
		for base, i := fn, 2; taken[fn]; i++ {
			fn = fmt.Sprintf("%s%d", base, i)
		}
		taken[fn] = true
		u.tools = append(u.tools, upstreamTool{fn: fn, tool: tool})
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

// module is the namespace object the sandbox gets: an async function per
// tool, taking one input object.
func (u *upstream) module() map[string]any {
	m := make(map[string]any, len(u.tools))
	for _, t := range u.tools {
		name := t.tool.Name
		m[t.fn] = airlock.Async(airlock.JSONFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			return u.call(ctx, name, args)
		}))
	}
	return m
}

// call calls an upstream tool with the first argument of an argument list:
// an upstream error is thrown with its message; a structured result arrives
// as the object, a text result as a string.
func (u *upstream) call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(args, &list); err != nil {
		return nil, err
	}
	var input any = map[string]any{}
	if len(list) > 0 && string(list[0]) != "null" {
		input = list[0]
	}
	res, err := u.session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: input})
	if err != nil {
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

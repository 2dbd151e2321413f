package mcp_test

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestMain doubles as an upstream MCP server on stdio when the test binary
// is started with AIRLOCK_TEST_UPSTREAM=1: the command transport's test.
func TestMain(m *testing.M) {
	switch mode := os.Getenv("AIRLOCK_TEST_UPSTREAM"); {
	case strings.HasPrefix(mode, "script:"):
		scriptedUpstream(strings.TrimPrefix(mode, "script:"))
		os.Exit(0)
	case mode == "1":
		if err := upstreamServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case mode == "hang": // starts and never answers
		select {}
	case mode == "mortal": // the calc server with a tool that ends its process
		s := upstreamServer()
		sdk.AddTool(s, &sdk.Tool{Name: "die"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			os.Exit(0)
			return nil, nil, nil
		})
		s.Run(context.Background(), &sdk.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type addIn struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type greetIn struct {
	Name string `json:"name"`
}

// upstreamServer is a small MCP server: add (with an output schema),
// greet (a text result) and explode (always fails).
func upstreamServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Add two numbers"},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			time.Sleep(50 * time.Millisecond)
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "greet_person", Description: "Greet someone, as text"},
		func(_ context.Context, _ *sdk.CallToolRequest, in greetIn) (*sdk.CallToolResult, any, error) {
			time.Sleep(50 * time.Millisecond)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello, " + in.Name}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "explode", Description: "Always fails"},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errAngry
		})
	return s
}

var errAngry = &angry{}

type angry struct{}

func (*angry) Error() string { return "the upstream is angry" }

// httpUpstream serves upstreamServer over streamable HTTP.
func httpUpstream(t *testing.T) string {
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return upstreamServer() }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// client connects the SDK's own client to s over in-memory transports.
func client(t *testing.T, s *mcp.Server) *sdk.ClientSession { return clientWith(t, s, nil) }

// clientWith is client with the client's options (its notification
// handlers).
func clientWith(t *testing.T, s *mcp.Server, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := s.SDK().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func newServer(t *testing.T, opts mcp.Options) *mcp.Server {
	t.Helper()
	s, err := mcp.NewServer(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

type runResult struct {
	text       string
	isError    bool
	structured map[string]any
}

func runCode(t *testing.T, cs *sdk.ClientSession, args map[string]any) runResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	return resultOf(res)
}

// resultOf is a run_code answer's text, error flag and structured content.
func resultOf(res *sdk.CallToolResult) runResult {
	var r runResult
	r.isError = res.IsError
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			r.text += tc.Text
		}
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &r.structured)
	return r
}

func TestRunCode(t *testing.T) {
	cs := client(t, newServer(t, mcp.Options{MemoryLimitBytes: 16 << 20}))
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "run_code" {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	rc := tools.Tools[0]
	schema, _ := json.Marshal(rc.InputSchema)
	for _, want := range []string{`"code"`, `"language"`, `"enum":["typescript","javascript"]`, `"timeout_ms"`, `"required":["code"]`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema lacks %s: %s", want, schema)
		}
	}
	for _, want := range []string{"ES module", "export default", "report(value)", "console.log", "Network: none (no fetch)"} {
		if !strings.Contains(rc.Description, want) {
			t.Errorf("description lacks %q", want)
		}
	}

	r := runCode(t, cs, map[string]any{"code": "const n: number = 21;\nconsole.log('doubling');\nreport(n);\nexport default { answer: n * 2 };"})
	if r.isError || r.text != "{ answer: 42 }\n[log] doubling\n[report] 21\n" || r.structured["status"] != "success" ||
		r.structured["result"].(map[string]any)["answer"] != 42.0 {
		t.Fatalf("%+v", r)
	}

	r = runCode(t, cs, map[string]any{"code": "const a = 1;\nthrow new RangeError('too far: ' + a);", "language": "javascript"})
	if !r.isError || r.structured["status"] != "error" || !strings.Contains(r.text, "error: RangeError: too far: 1") ||
		!strings.Contains(r.text, "at program.js:2:") || !strings.Contains(r.text, "throw new RangeError('too far: ' + a);") {
		t.Fatalf("%+v", r)
	}

	start := time.Now()
	r = runCode(t, cs, map[string]any{"code": "while (true) {}", "timeout_ms": 150})
	if !r.isError || r.structured["status"] != "terminated" || !strings.Contains(r.text, "stopped after 150ms (timeout_ms asks for up to 5m0s)") || time.Since(start) > 25*time.Second { // the default is 30 s
		t.Fatalf("%+v", r)
	}

	r = runCode(t, cs, map[string]any{"code": "const a = []; while (true) a.push('x'.repeat(1000) + a.length);"})
	if !r.isError || r.structured["status"] != "memory" {
		t.Fatalf("%+v", r)
	}

	// Bad input is a tool error the model can read, not a crash.
	for _, args := range []map[string]any{{"code": ""}, {"code": "1", "language": "python"}, {"language": "js"}} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_code", Arguments: args})
		if err == nil && !res.IsError {
			t.Errorf("%v: accepted", args)
		}
	}
}

func TestProxy(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &mcp.Config{MCPServers: map[string]mcp.ServerConfig{
		"calc":      {Command: exe, Env: map[string]string{"AIRLOCK_TEST_UPSTREAM": "1"}},
		"web-calc":  {URL: httpUpstream(t) + "/"},
		"broken":    {Command: filepath.Join(t.TempDir(), "no-such-server")},
		"ambiguous": {},
	}}
	s := newServer(t, mcp.Options{Upstreams: cfg})
	if fs := s.Failures(); len(fs) != 2 || fs[0].Server != "ambiguous" || fs[1].Server != "broken" {
		t.Fatalf("failures = %v", fs)
	}
	cs := client(t, s)
	tools, _ := cs.ListTools(context.Background(), nil)
	if len(tools.Tools) != 2 || tools.Tools[0].Name != "list_apis" && tools.Tools[1].Name != "list_apis" {
		t.Fatalf("tools = %v", tools.Tools)
	}
	var desc string
	for _, tl := range tools.Tools {
		if tl.Name == "run_code" {
			desc = tl.Description
		}
	}
	for _, want := range []string{"declare namespace calc {", "declare namespace webCalc {", "function add(input: {", "Promise<{", "function greetPerson(", "not available yet (list_apis tells why): ambiguous, broken."} {
		if !strings.Contains(desc, want) {
			t.Errorf("run_code description lacks %q:\n%s", want, desc)
		}
	}

	// One program calls both upstream tools of both servers, concurrently.
	start := time.Now()
	r := runCode(t, cs, map[string]any{"code": `
const [sum, greeting, sum2] = await Promise.all([
  calc.add({ a: 2, b: 3 }),
  calc.greetPerson({ name: "Ada" }),
  webCalc.add({ a: 10, b: 20 }),
]);
let failure = "";
try { await calc.explode({}); } catch (e) { failure = e.message; }
export default { sum: sum.sum, greeting, sum2: sum2.sum, failure };`})
	if r.isError {
		t.Fatalf("%+v", r)
	}
	got := r.structured["result"].(map[string]any)
	if got["sum"] != 5.0 || got["greeting"] != "hello, Ada" || got["sum2"] != 30.0 || got["failure"] != "the upstream is angry" {
		t.Fatalf("result = %v", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}

	// An uncaught upstream error fails the program with the upstream's message.
	r = runCode(t, cs, map[string]any{"code": "await calc.explode({});", "language": "javascript"})
	if !r.isError || !strings.Contains(r.text, "the upstream is angry") {
		t.Fatalf("%+v", r)
	}

	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_apis", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_apis: %+v, %v", res, err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	for _, want := range []string{"declare namespace calc", "- calc (calc): ready, 3 tools", "- ambiguous (ambiguous): unavailable, no command and no url (not retried: fix the configuration)",
		"- broken (broken): unavailable, connect: ", "(retried in "} {
		if !strings.Contains(text, want) {
			t.Errorf("list_apis lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Network: none") {
		t.Errorf("list_apis repeats run_code's description:\n%s", text)
	}
}

func TestGolden_Declarations(t *testing.T) {
	s := newServer(t, mcp.Options{Upstreams: &mcp.Config{MCPServers: map[string]mcp.ServerConfig{"calc-server": {URL: httpUpstream(t)}}}})
	got := s.Declarations()
	path := filepath.Join("testdata", "upstream.d.ts")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, []byte(got), 0o644)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != got {
		t.Fatalf("declarations differ from %s (go test -update rewrites it); got:\n%s", path, got)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	os.WriteFile(path, []byte(`{"mcpServers": {"gh": {"command": "gh-mcp", "args": ["stdio"], "env": {"T": "x"}}, "docs": {"url": "http://localhost:1/mcp"}}}`), 0o644)
	c, err := mcp.LoadConfig(path)
	if err != nil || c.MCPServers["gh"].Args[0] != "stdio" || c.MCPServers["docs"].URL == "" {
		t.Fatalf("%+v, %v", c, err)
	}
	os.WriteFile(path, []byte(`{"servers": {}}`), 0o644)
	if _, err := mcp.LoadConfig(path); err == nil {
		t.Fatal("a config without mcpServers loaded")
	}
	if _, err := mcp.LoadConfig(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("a missing file loaded")
	}
}

// The declarations are TypeScript: esbuild parses them.
func TestDeclarationsParse(t *testing.T) {
	s := newServer(t, mcp.Options{Upstreams: &mcp.Config{MCPServers: map[string]mcp.ServerConfig{"calc": {URL: httpUpstream(t)}, "class": {URL: httpUpstream(t)}}}})
	decls := s.Declarations()
	if !strings.Contains(decls, "declare namespace class_ {") {
		t.Fatalf("a reserved word as a server name:\n%s", decls)
	}
	res := api.Transform(decls, api.TransformOptions{Loader: api.LoaderTS})
	if len(res.Errors) > 0 || strings.TrimSpace(string(res.Code)) != "" {
		t.Fatalf("esbuild: %v\n%s\n%s", res.Errors, decls, res.Code)
	}
}

// The README's example proxy config loads.
func TestExampleConfig(t *testing.T) {
	c, err := mcp.LoadConfig("../examples/mcp/proxy.json")
	if err != nil || c.MCPServers["fs"].Command != "npx" {
		t.Fatalf("%+v, %v", c, err)
	}
}

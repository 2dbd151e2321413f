package agent_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/airlockrun/airlock/agent"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", name, got)
	}
}

// docTools are tools whose schemas use what the generators must handle:
// nested objects, arrays, enums, optional fields, unions, records,
// descriptions, examples and errors.
func docTools() []agent.Tool {
	search := agent.Tool{
		ID:          "crm.search-contacts",
		Description: "Search contacts by name or tag.\nResults are sorted by relevance.",
		InputSchema: &jsonschema.Schema{
			Type:          "object",
			PropertyOrder: []string{"query", "tags", "limit", "status", "filters"},
			Required:      []string{"query"},
			Properties: map[string]*jsonschema.Schema{
				"query":  {Type: "string", Description: "Free text matched against names"},
				"tags":   {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
				"limit":  {Type: "integer", Description: "At most this many results"},
				"status": {Type: "string", Enum: []any{"active", "archived"}},
				"filters": {Type: "object", Description: "Exact matches on custom fields",
					AdditionalProperties: &jsonschema.Schema{Types: []string{"string", "number"}}},
				"created-after": {Type: "string", Description: "ISO date */ with a comment end"},
			},
		},
		OutputSchema: &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{
			Type: "object", Required: []string{"id", "name"},
			Properties: map[string]*jsonschema.Schema{
				"id":    {Type: "string"},
				"name":  {Type: "string"},
				"email": {Types: []string{"string", "null"}},
				"owner": {AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "object", Properties: map[string]*jsonschema.Schema{"team": {Type: "string"}}}}},
			},
		}},
		Examples: []agent.Example{{Description: "active contacts named Ada", Input: map[string]any{"query": "Ada", "status": "active"},
			Output: []any{map[string]any{"id": "c1", "name": "Ada Lovelace", "email": nil}}}},
		Errors:  []string{"the CRM is unreachable", "the query is empty"},
		Handler: func(context.Context, json.RawMessage) (any, error) { return []any{}, nil },
	}
	return append([]agent.Tool{search, weatherTool(0)}, todoTools()...)
}

func TestGolden_Markdown(t *testing.T) {
	golden(t, "api.md", agent.MarkdownDocs(docTools(), agent.Helpers...))
}

func TestGolden_TypeScript(t *testing.T) {
	golden(t, "api.d.ts", agent.TypeScriptDeclarations(docTools(), append(agent.Helpers, agent.ArtifactHelpers...)...))
}

// The declarations are TypeScript: esbuild parses them without an error.
func TestTypeScriptDeclarationsParse(t *testing.T) {
	assertTypeScript(t, agent.TypeScriptDeclarations(append(docTools(), agent.ArtifactTools(nil)...), append(agent.Helpers, agent.ArtifactHelpers...)...))
}

// assertTypeScript fails unless esbuild parses decls as TypeScript
// declarations that compile to no code.
func assertTypeScript(t *testing.T, decls string) {
	t.Helper()
	res := api.Transform(decls, api.TransformOptions{Loader: api.LoaderTS})
	for _, m := range res.Errors {
		line := ""
		if m.Location != nil {
			line = m.Location.LineText
		}
		t.Errorf("esbuild: %s: %s", m.Text, line)
	}
	// Declarations only: nothing is left after type erasure.
	if strings.TrimSpace(string(res.Code)) != "" {
		t.Errorf("the declarations compile to code: %s", res.Code)
	}
}

func TestGolden_ToolListing(t *testing.T) {
	got := agent.ToolListing(docTools())
	golden(t, "listing.md", got)
	// The seed's example lines.
	for _, line := range []string{
		"**weather**: weatherGetWeather — Get current weather\n",
		"**todo**: todoCreate — Create a todo item | todoList — List all todos\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("listing lacks %q", line)
		}
	}
}

func TestGolden_CodeModePrompt(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{Timeout: 20 * time.Second})
	if err := agent.RegisterArtifacts(it, nil); err != nil {
		t.Fatal(err)
	}
	if err := it.AddSourceModule("lodash", "export default {}"); err != nil {
		t.Fatal(err)
	}
	golden(t, "prompt_codemode.md", it.Prompt(toolbox(t, docTools()...), "Answer in English."))
	// Without modules the prompt forbids imports.
	p := agent.CodeModePrompt(agent.PromptOptions{Tools: docTools()})
	golden(t, "prompt_codemode_nomodules.md", p)
	for _, want := range []string{"parallel(", "llm(prompt)", "llmJson(prompt)", "toolSchema(", "Do not use `import`", "30 seconds"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
}

func TestGolden_RunCodeTool(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	tool := agent.RunCodeTool(it, toolbox(t, docTools()...), nil)
	schema, _ := json.MarshalIndent(tool.InputSchema, "", "  ")
	golden(t, "run_code_tool.md", "ID: "+tool.ID+"\n\n"+tool.Description+"\n\n"+string(schema)+"\n")
}

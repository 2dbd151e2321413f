package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// renderHandlebars renders a text of seed 001's Appendix D, kept verbatim
// in testdata, as its template loader would: placeholders substituted, the
// custom_instructions block on its own lines kept or dropped.
func renderHandlebars(t *testing.T, file string, vals map[string]string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/prompt/" + file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	block := "{{#if custom_instructions}}\n{{custom_instructions}}\n{{/if}}\n"
	if vals["custom_instructions"] != "" {
		s = strings.Replace(s, block, vals["custom_instructions"]+"\n", 1)
	} else {
		s = strings.Replace(s, block, "", 1)
	}
	for k, v := range vals {
		s = strings.ReplaceAll(s, "{{{"+k+"}}}", v)
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

// The prompt is §14.2's text, and, unless NoExamples, §14.3's examples
// with the code block delimiters substituted, after the paragraph on
// final_answer.
func TestCodeAgentPrompt(t *testing.T) {
	tools := []agent.ToolDoc{
		{Name: "web_search", Description: "Searches the web.", Params: []agent.ToolParam{{Name: "query", Type: "string", Description: "what to search"}}, Returns: "string", Async: true},
		{Name: "add", Description: "Adds two numbers.", Params: []agent.ToolParam{{Name: "a", Type: "number"}, {Name: "b", Type: "number", Optional: true}}, Returns: "number"},
	}
	for _, custom := range []string{"", "Answer in French."} {
		vals := map[string]string{
			"code_block_opening_tag": "<code>", "code_block_closing_tag": "</code>",
			"tools_prompt": agent.ToolsPrompt(tools), "authorized_imports": `"x-ok"`,
			"custom_instructions": custom,
		}
		want := renderHandlebars(t, "seed_system_prompt.hbs", vals)
		opts := agent.CodeAgentPromptOptions{
			CodeBlockOpeningTag: "<code>", CodeBlockClosingTag: "</code>",
			Tools: tools, AuthorizedImports: []string{"x-ok"}, CustomInstructions: custom, NoExamples: true,
		}
		got, err := agent.RenderCodeAgentPrompt(opts)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("custom %q, no examples:\n got %q\nwant %q", custom, got, want)
		}
		opts.NoExamples = false
		got, err = agent.RenderCodeAgentPrompt(opts)
		if err != nil {
			t.Fatal(err)
		}
		examples := strings.TrimSpace(renderHandlebars(t, "seed_examples.txt", vals))
		anchor := "This is the only valid way to provide the final answer.\n"
		want = strings.Replace(want, anchor, anchor+"\nHere are a few examples using notional tools:\n---\n"+examples+
			"\n---\nThe examples above use notional tools that might not exist for you.\n", 1)
		if got != want {
			t.Errorf("custom %q, examples:\n got %q\nwant %q", custom, got, want)
		}
	}
	tp := agent.ToolsPrompt(tools)
	for _, s := range []string{
		"async function web_search(query: string): Promise<string>;",
		"function add(a: number, b?: number): number;",
		"function final_answer(value: any): never;",
		" * @param query what to search",
	} {
		if !strings.Contains(tp, s) {
			t.Errorf("tools prompt lacks %q:\n%s", s, tp)
		}
	}
	got, _ := agent.RenderCodeAgentPrompt(agent.CodeAgentPromptOptions{})
	for _, s := range []string{"write JavaScript only", "You may import only from: no module (imports are not allowed).", "final_answer(value)", "Now Begin!",
		"```js\nconst result = 5 + 3 + 1294.678;\nfinal_answer(result);\n```"} {
		if !strings.Contains(got, s) {
			t.Errorf("prompt lacks %q", s)
		}
	}
}

// A CodeAgent's system prompt declares its tools with their input and
// output types and doc comments, has §14.3's examples with its code
// delimiters, and names the helpers.
func TestCodeAgentSystemPrompt_SignaturesAndExamples(t *testing.T) {
	h := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	search := agent.Tool{
		ID: "crm.search-contacts", Description: "Search contacts by name.",
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"query"}, PropertyOrder: []string{"query", "limit"},
			Properties: map[string]*jsonschema.Schema{
				"query": {Type: "string", Description: "Free text"},
				"limit": {Type: "integer", Maximum: ptr(50.0)},
			}},
		OutputSchema: &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "object", Required: []string{"id"},
			Properties: map[string]*jsonschema.Schema{"id": {Type: "string"}}}},
		Handler: h,
	}
	a := &agent.CodeAgent{Tools: toolbox(t, search), Executor: airlock.ExecutorOptions{AuthorizedImports: []string{"lodash"}}}
	p, err := a.SystemPrompt()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"function crmSearchContacts(input: {\n  /** Free text */\n  query: string;\n  /** @maximum 50 */\n  limit?: number;\n}): {\n  id: string;\n}[];",
		" * Search contacts by name.",
		"function final_answer(value: any): never;",
		"Here are a few examples using notional tools:",
		"```js\nconst answer = await document_qa({ document, question: \"Who is the oldest person mentioned?\" });",
		"```js\nconst gz = await web_search(\"Guangzhou population\");",
		"You may import only from: \"lodash\".",
		"llmJson(prompt, schema?)",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "{{") {
		t.Errorf("a placeholder is left:\n%s", p)
	}
}

func ptr[T any](v T) *T { return &v }

// Registered functions appear with their signatures, not as name(): in the
// code-mode prompt and in run_code's description, which a model that has
// only run_code reads instead of a prompt. The signature is Document's, or
// derived from the Go function's type.
func TestPrompts_RegisteredFunctionSignatures(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	if err := agent.RegisterArtifacts(it, nil); err != nil {
		t.Fatal(err)
	}
	type point struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(it.Register("slugify", func(s string) string { return s }))
	must(it.Register("distance", func(ctx context.Context, a, b point) (float64, error) { return 0, nil }))
	must(it.Register("sum", func(xs ...int) int { return 0 }))
	must(it.Register("raw", airlock.JSONFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })))
	must(it.Register("fetchRate", airlock.Async(func(string) float64 { return 1 })))
	must(it.Document(agent.Helper{Name: "fetchRate", Signature: "fetchRate(currency: string): number", Description: "Returns today's rate of a currency against the euro."}))
	if err := it.Document(agent.Helper{Name: "x", Signature: "y(): void"}); err == nil {
		t.Error("a signature of another name was accepted")
	}
	sigs := []string{
		"storeArtifact(data: unknown, description?: string): string",
		"getArtifact(id: string): unknown",
		"slugify(arg1: string): string",
		"distance(arg1: {\n  x: number;\n  y: number;\n}, arg2: {\n  x: number;\n  y: number;\n}): number",
		"sum(...arg1: number[]): number",
		"raw(...args: unknown[]): unknown",
		"fetchRate(currency: string): number",
	}
	prompt := it.Prompt(toolbox(t, docTools()...), "")
	desc := agent.RunCodeTool(it, toolbox(t, docTools()...), nil).Description
	for _, sig := range sigs {
		if !strings.Contains(prompt, "- `"+oneLine(sig)+"`") {
			t.Errorf("code-mode prompt lacks %q:\n%s", sig, prompt)
		}
		if !strings.Contains(desc, "declare function "+sig+";") {
			t.Errorf("run_code description lacks %q:\n%s", sig, desc)
		}
	}
	for _, want := range []string{
		"- `fetchRate(currency: string): number` — Returns today's rate of a currency against the euro.",
		"- `distance(arg1: { x: number; y: number; }, arg2: { x: number; y: number; }): number`",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("code-mode prompt lacks %q", want)
		}
	}
	// The tools, with their types, and the helpers.
	for _, want := range []string{
		"declare function crmSearchContacts(input: CrmSearchContactsInput): CrmSearchContactsOutput;",
		"declare function parallel(calls: { tool: string; input?: unknown }[]): unknown[];",
		"declare function toolSchema(toolId: string): object;",
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("run_code description lacks %q:\n%s", want, desc)
		}
	}
	if strings.Contains(desc, "declare function complete(") {
		t.Error("run_code description declares complete(), which only code mode has")
	}
	// The declarations parse as TypeScript.
	body := desc[strings.Index(desc, "```typescript\n")+len("```typescript\n"):]
	assertTypeScript(t, body[:strings.Index(body, "```")])
}

// With more tools than fit in the bound, run_code's description lists them
// compactly (toolSchema() gives their schemas) and still declares the
// helpers and functions.
func TestRunCodeDescription_ManyTools(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	if err := it.Register("slugify", func(s string) string { return s }); err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	var tools []agent.Tool
	long := strings.Repeat("A long description of what this tool does. ", 20)
	for i := range 60 {
		tools = append(tools, agent.Tool{ID: "bulk.tool-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Description: long, Handler: h})
	}
	desc := agent.RunCodeTool(it, toolbox(t, tools...), nil).Description
	for _, want := range []string{"**bulk**: bulkToolA — A long description of what this tool does.", "toolSchema(toolId) gives a tool's input schema",
		"declare function slugify(arg1: string): string;", "declare function parallel("} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q", want)
		}
	}
	if strings.Contains(desc, "declare function bulkToolA(") || len(desc) > 40000 {
		t.Errorf("the tools are declared in full (%d characters)", len(desc))
	}
}

// oneLine is a signature as code mode's prompt lists it, on one line.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

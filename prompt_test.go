package airlock_test

import (
	"os"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
)

// renderHandlebars renders the contract's prompt, kept verbatim in
// testdata, as its template loader would: placeholders substituted, the
// custom_instructions block on its own lines kept or dropped.
func renderHandlebars(t *testing.T, vals map[string]string) string {
	b, err := os.ReadFile("testdata/prompt/seed_system_prompt.hbs")
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

func TestCodeAgentPrompt(t *testing.T) {
	tools := []airlock.ToolDoc{
		{Name: "web_search", Description: "Searches the web.", Params: []airlock.ToolParam{{Name: "query", Type: "string", Description: "what to search"}}, Returns: "string", Async: true},
		{Name: "add", Description: "Adds two numbers.", Params: []airlock.ToolParam{{Name: "a", Type: "number"}, {Name: "b", Type: "number", Optional: true}}, Returns: "number"},
	}
	for _, custom := range []string{"", "Answer in French."} {
		got, err := airlock.RenderCodeAgentPrompt(airlock.PromptOptions{
			Tools: tools, AuthorizedImports: []string{"x-ok"}, CustomInstructions: custom,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := renderHandlebars(t, map[string]string{
			"code_block_opening_tag": "```js", "code_block_closing_tag": "```",
			"tools_prompt": airlock.ToolsPrompt(tools), "authorized_imports": `"x-ok"`,
			"custom_instructions": custom,
		})
		if got != want {
			t.Errorf("custom %q:\n got %q\nwant %q", custom, got, want)
		}
	}
	tp := airlock.ToolsPrompt(tools)
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
	got, _ := airlock.RenderCodeAgentPrompt(airlock.PromptOptions{})
	for _, s := range []string{"write JavaScript only", "You may import only from: no module (imports are not allowed).", "final_answer(value)", "Now Begin!"} {
		if !strings.Contains(got, s) {
			t.Errorf("prompt lacks %q", s)
		}
	}
}

package agent

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"text/template"
	"time"
)

//go:embed prompt_codemode.tmpl
var codeModeTemplate string

var codeModePrompt = template.Must(template.New("codemode").Parse(codeModeTemplate))

// PromptOptions are what the code-mode system prompt tells the model.
type PromptOptions struct {
	// Tools are listed compactly, grouped by namespace.
	Tools []Tool
	// FunctionDocs are the registered functions (Interpreter.FunctionDocs),
	// listed with their signatures and descriptions.
	FunctionDocs []Helper
	// Functions are more registered functions, by name only
	// (Interpreter.FunctionNames), for which FunctionDocs has no entry;
	// they are listed as taking and returning unknown values.
	Functions []string
	// Modules are the modules code may import (Interpreter.ModuleNames);
	// without any, the prompt forbids import statements.
	Modules []string
	// Timeout of an execution; 0 means DefaultTimeout.
	Timeout time.Duration
	// Instructions are appended at the end.
	Instructions string
}

// CodeModePrompt is the system prompt of code mode (seed 002): the rules,
// parallel(), llm() and llmJson(), toolSchema(), the compact grouped tool
// listing, the registered functions, and the modules, if any.
func CodeModePrompt(opts PromptOptions) string {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var b strings.Builder
	_ = codeModePrompt.Execute(&b, map[string]any{
		"Tools":          strings.TrimRight(ToolListing(opts.Tools), "\n"),
		"Functions":      functionList(opts.FunctionDocs, opts.Functions),
		"Modules":        opts.Modules,
		"TimeoutSeconds": int(timeout.Seconds()),
		"Instructions":   strings.TrimSpace(opts.Instructions),
	})
	return b.String() + "\n"
}

// Prompt is the code-mode system prompt for this interpreter, with its
// registered functions and modules and the given tools.
func (it *Interpreter) Prompt(tools *Toolbox, instructions string) string {
	return CodeModePrompt(PromptOptions{
		Tools:        tools.Tools(),
		FunctionDocs: it.FunctionDocs(),
		Modules:      it.ModuleNames(),
		Timeout:      it.cfg.Timeout,
		Instructions: instructions,
	})
}

// functionList lists functions one a line, "- `signature` — what it does",
// sorted by name.
func functionList(docs []Helper, names []string) string {
	all := append([]Helper(nil), docs...)
	have := map[string]bool{}
	for _, h := range docs {
		have[h.Name] = true
	}
	for _, n := range names {
		if !have[n] {
			all = append(all, Helper{Name: n, Signature: n + "(...args: unknown[]): unknown"})
			have[n] = true
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	var b strings.Builder
	for _, h := range all {
		fmt.Fprintf(&b, "- `%s`", oneLine(h.Signature))
		if d := firstSentence(h.Description); d != "" {
			b.WriteString(" — " + d)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLine folds a multi-line signature (an object type's members) onto one
// line, for a list item.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

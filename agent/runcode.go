package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/google/jsonschema-go/jsonschema"
)

// RunCodeID is the ID of the run-code tool.
const RunCodeID = "interpreter.run-code"

// RunCodeInput is the input of the run-code tool.
type RunCodeInput struct {
	Code    string `json:"code"`
	Input   any    `json:"input,omitempty"`
	Timeout int    `json:"timeout,omitempty"` // milliseconds
}

// RunCodeTool is the tool a classic tool-calling model uses to run code
// (seed 002's interpreter.run-code, seed 003's execute_javascript): its
// sandbox has the interpreter's registered functions and modules, every
// tool of the toolbox as a camelCase function (the conversation's tools),
// and the helpers. Its description lists them. Its result is text for the
// model, formatted by FormatExecution. state, if not nil, is shared by its
// executions (store/recall).
//
// A failed execution is the tool's error (a *RunCodeError), whose message
// is the same text, so that a tool-calling loop reports it to the model as
// a failed call.
func RunCodeTool(it *Interpreter, tools *Toolbox, state *State) Tool {
	return runCodeTool(it, tools, state, nil)
}

// A RunCodeError is the error of a run_code call whose code failed: its
// message is FormatExecution's text, and Execution the outcome.
type RunCodeError struct {
	Text      string
	Execution *Execution
}

func (e *RunCodeError) Error() string { return e.Text }

func runCodeTool(it *Interpreter, tools *Toolbox, state *State, run *tracker) Tool {
	min := 1
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"code":  {Type: "string", MinLength: &min, Description: "JavaScript or TypeScript to run as a script, as in Node's REPL (top-level await works). The value of the last expression is the result. Tools and helpers return values directly."},
			"input": {Description: "A JSON value the code reads as `input`."},
			"timeout": {Type: "integer", Minimum: ptr(1.0), Maximum: ptr(float64(10 * time.Minute / time.Millisecond)),
				Description: fmt.Sprintf("Time limit in milliseconds; default %d.", timeoutOf(it).Milliseconds())},
		},
		PropertyOrder:        []string{"code", "input", "timeout"},
		Required:             []string{"code"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	return Tool{
		ID:          RunCodeID,
		Description: runCodeDescription(it, tools),
		InputSchema: schema,
		Handler: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var in RunCodeInput
			if err := json.Unmarshal(raw, &in); err != nil {
				return nil, fmt.Errorf("invalid input: %v", err)
			}
			e := it.Execute(ctx, in.Code, ExecuteOptions{
				Tools: tools, Input: in.Input, State: state,
				Timeout: time.Duration(in.Timeout) * time.Millisecond, run: run,
			})
			text := ClipText(FormatExecution(e), outputLimit(it.cfg.MaxOutput))
			if !e.OK() {
				return nil, &RunCodeError{Text: text, Execution: e}
			}
			return text, nil
		},
	}
}

func ptr[T any](v T) *T { return &v }

func timeoutOf(it *Interpreter) time.Duration {
	if it.cfg.Timeout > 0 {
		return it.cfg.Timeout
	}
	return DefaultTimeout
}

// runCodeDocsLimit bounds the TypeScript declarations in run_code's
// description, in characters: with more tools than fit, the description
// lists them compactly and the code reads a tool's schema with
// toolSchema().
const runCodeDocsLimit = 30000

// runCodeHelpers are the helpers run_code's description declares: those
// of Helpers that make sense in a tool call (complete, output and done end
// a code-mode turn).
var runCodeHelpers = map[string]bool{"parallel": true, "llm": true, "llmJson": true, "toolSchema": true, "log": true, "store": true, "recall": true}

// runCodeDescription is the tool's description: what it does and what the
// code can call, declared in TypeScript (the tools with their input and
// output types, the registered functions and the helpers with their
// signatures), since a model that has only this tool sees nothing else.
func runCodeDescription(it *Interpreter, tools *Toolbox) string {
	var b strings.Builder
	b.WriteString("Run JavaScript in an isolated sandbox (no network, files or timers) and get its result and console output. ")
	b.WriteString("Use it to call several tools in one step (parallel() runs them concurrently), or to process or compute over data.\n")
	if mods := it.ModuleNames(); len(mods) > 0 {
		fmt.Fprintf(&b, "Modules you may import: %s.\n", strings.Join(mods, ", "))
	}
	var helpers []Helper
	for _, h := range Helpers {
		if runCodeHelpers[h.Name] {
			helpers = append(helpers, h)
		}
	}
	helpers = append(helpers, it.FunctionDocs()...)
	decls := TypeScriptDeclarations(tools.Tools(), helpers...)
	if len(decls) <= runCodeDocsLimit {
		b.WriteString("\nThe code can call these functions, tools by their camelCase names with one input object:\n```typescript\n")
		b.WriteString(decls)
		b.WriteString("```")
		return b.String()
	}
	b.WriteString("\nThe code can call these functions:\n```typescript\n")
	b.WriteString(TypeScriptDeclarations(nil, helpers...))
	b.WriteString("```\nTools, as camelCase functions taking one input object (toolSchema(toolId) gives a tool's input schema):\n")
	b.WriteString(ToolListing(tools.Tools()))
	return strings.TrimRight(b.String(), "\n")
}

// FormatExecution formats an execution for the model, as seed 003 does:
// the duration, then the result and the console output, or the error and
// the console output before it. Values are shown as airlock.Inspect shows
// them, as Node's console.log would. The text is not bounded: RunCodeTool
// clips it to Config.MaxOutput with ClipText.
func FormatExecution(e *Execution) string {
	ms := e.Duration.Milliseconds()
	console := consoleText(e)
	var b strings.Builder
	if e.OK() {
		fmt.Fprintf(&b, "Execution completed successfully in %dms\n\n=== Result ===\n%s\n", ms, airlock.Inspect(e.Result))
		if e.Output != "" {
			fmt.Fprintf(&b, "\n=== Output ===\n%s\n", e.Output)
		}
		fmt.Fprintf(&b, "\n=== Console Output ===\n%s", console)
		return b.String()
	}
	fmt.Fprintf(&b, "Execution failed after %dms\n\n=== Error ===\n%s\n", ms, e.Error)
	if e.Line > 0 {
		fmt.Fprintf(&b, "at line %d, column %d: %s\n", e.Line, e.Column, e.Context)
	}
	fmt.Fprintf(&b, "\n=== Console Output (before error) ===\n%s", console)
	return b.String()
}

func consoleText(e *Execution) string {
	if len(e.Logs) == 0 {
		return "(no output)"
	}
	var b strings.Builder
	for i, l := range e.Logs {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l.Level != "log" && l.Level != "info" {
			fmt.Fprintf(&b, "[%s] ", l.Level)
		}
		b.WriteString(l.Message())
	}
	return b.String()
}

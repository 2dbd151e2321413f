package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/airlockrun/airlock"
)

// DefaultMaxSteps is how many steps a loop takes when none is set.
const DefaultMaxSteps = 10

// A CodeAgent solves a task in the Thought → Code → Observation loop of
// seed 001's Appendix D: the model writes JavaScript, one executor runs it
// (state persists from step to step), the logs and the value or the error
// go back to the model, until the code calls final_answer(value).
type CodeAgent struct {
	// Model answers; NewOpenAI for any OpenAI-compatible endpoint.
	Model *OpenAI
	// Tools are the functions the code calls, by camelCase name, with one
	// input object.
	Tools *Toolbox
	// MaxSteps bounds the loop; 0 means DefaultMaxSteps.
	MaxSteps int
	// Instructions are added to the system prompt.
	Instructions string
	// Executor configures the sandbox (MaxOperations, Timeout, memory);
	// RunConcurrency is irrelevant: the loop runs one step at a time.
	Executor airlock.ExecutorOptions
	// OnStep is called after each step.
	OnStep func(Step)
	// Logger receives a record per step; nil means slog.Default().
	Logger *slog.Logger
	// MaxOutput bounds each observation the model reads, in characters:
	// a longer one keeps its head and tail around a marker that says how
	// much was cut (airlock.ClipText). 0 means airlock.DefaultMaxOutput
	// (20,000); negative means no bound.
	MaxOutput int
}

// SystemPrompt is the agent's system prompt: Appendix D's text with the
// tools' declarations.
func (a *CodeAgent) SystemPrompt() (string, error) {
	return airlock.RenderCodeAgentPrompt(airlock.PromptOptions{
		Tools:              toolDocs(a.Tools.Tools()),
		AuthorizedImports:  a.Executor.AuthorizedImports,
		CustomInstructions: a.Instructions,
	})
}

// toolDocs describes tools for the executor's prompt: one input object,
// typed from the schema.
func toolDocs(tools []Tool) []airlock.ToolDoc {
	docs := make([]airlock.ToolDoc, 0, len(tools))
	for _, t := range tools {
		in := t.InputSchema
		if in == nil {
			in = &objectSchema
		}
		returns := "any"
		if t.OutputSchema != nil {
			returns = tsType(t.OutputSchema, "")
		}
		docs = append(docs, airlock.ToolDoc{
			Name: FunctionName(t.ID), Description: t.Description, Returns: returns,
			Params: []airlock.ToolParam{{Name: "input", Type: tsType(in, "")}},
		})
	}
	return docs
}

// Run solves the task. It returns the transcript, complete or as far as it
// got; the error is set when the loop could not go on (the model failed,
// the context ended, the sandbox could not start).
func (a *CodeAgent) Run(ctx context.Context, task string) (*Transcript, error) {
	start := time.Now()
	tr := &Transcript{Task: task, Mode: "code", Steps: []Step{}}
	defer func() { tr.Duration = time.Since(start) }()
	system, err := a.SystemPrompt()
	if err != nil {
		return a.fail(tr, err)
	}
	opts := a.Executor
	opts.RunConcurrency = airlock.RunReject
	ex, err := airlock.NewExecutor(opts)
	if err != nil {
		return a.fail(tr, err)
	}
	defer func() { ex.Cleanup(context.WithoutCancel(ctx)) }() // the last executor: a dirty step replaces it
	tools := a.executorTools()
	if err := a.startExecutor(ctx, ex, tools); err != nil {
		return a.fail(tr, err)
	}
	messages := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage("Task: " + task)}
	hooks := loopHooks{onStep: a.OnStep, logger: a.Logger}
	maxSteps := stepLimit(a.MaxSteps)
	maxOutput := outputLimit(a.MaxOutput)
	for i := 1; i <= maxSteps; i++ {
		stepStart := time.Now()
		step := Step{Index: i}
		resp, err := a.Model.chat(ctx, openai.ChatCompletionNewParams{Messages: messages})
		if err != nil {
			return a.fail(tr, fmt.Errorf("step %d: the model failed: %w", i, err))
		}
		step.Usage = usageOf(resp)
		tr.Usage.add(step.Usage)
		step.ModelReply = resp.Choices[0].Message.Content
		messages = append(messages, openai.AssistantMessage(step.ModelReply))
		code, ok := ExtractCode(step.ModelReply)
		if !ok {
			step.Error = "no code block in the reply"
			step.Observation = "Error: your reply had no code block. Reply with \"Thought:\" and then one JavaScript code block that starts with ```js and ends with ```, and call final_answer(value) when you have the answer."
		} else {
			step.Code = code
			out, err := ex.Run(ctx, code)
			switch {
			case err == nil && out.IsFinalAnswer:
				step.Final = true
				step.Observation = observation(out.Logs, out.Output)
				tr.FinalAnswer, tr.Outcome = out.Output, OutcomeFinalAnswer
			case err == nil:
				step.Observation = observation(out.Logs, out.Output)
			default:
				if ctx.Err() != nil {
					return a.fail(tr, ctx.Err())
				}
				step.Error = err.Error()
				step.Observation = errorObservation(err, code)
				if ex.State() == airlock.StateDirty || ex.State() == airlock.StateDead {
					step.Observation += "\nThe sandbox was reset after this error: variables from earlier steps are gone."
					_ = ex.Cleanup(ctx)
					if ex, err = airlock.NewExecutor(opts); err == nil {
						err = a.startExecutor(ctx, ex, tools)
					}
					if err != nil {
						return a.fail(tr, err)
					}
				}
			}
		}
		step.Observation = airlock.ClipText(step.Observation, maxOutput)
		step.Duration = time.Since(stepStart)
		tr.Steps = append(tr.Steps, step)
		hooks.emit("code", step)
		if step.Final {
			return tr, nil
		}
		messages = append(messages, openai.UserMessage("Observation:\n"+step.Observation))
	}
	tr.Outcome = OutcomeMaxSteps
	tr.Error = fmt.Sprintf("no final answer after %d steps", maxSteps)
	return tr, nil
}

var objectSchema = jsonschema.Schema{Type: "object"}

func (a *CodeAgent) fail(tr *Transcript, err error) (*Transcript, error) {
	tr.Outcome, tr.Error = OutcomeError, err.Error()
	return tr, err
}

func (a *CodeAgent) executorTools() map[string]any {
	tools := map[string]any{}
	for _, t := range a.Tools.Tools() {
		e := a.Tools.lookup(t.ID)
		tools[FunctionName(t.ID)] = airlock.JSONFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			return e.callArgs(ctx, args)
		})
	}
	return tools
}

func (a *CodeAgent) startExecutor(ctx context.Context, ex *airlock.Executor, tools map[string]any) error {
	if err := ex.Init(ctx); err != nil {
		return err
	}
	if len(tools) == 0 {
		return nil
	}
	return ex.SendTools(ctx, tools)
}

// codeBlock matches a fenced code block, with or without a language tag.
var codeBlock = regexp.MustCompile("(?s)```[ \t]*([A-Za-z]*)[ \t]*\r?\n(.*?)```")

// ExtractCode finds the code in a model's reply: the fenced code blocks
// (```js, ```javascript, ```ts, ```typescript or no tag; prose such as a
// leading "Thought:" is ignored), joined if there are several, or
// <code>…</code>. It reports false when there is none.
func ExtractCode(reply string) (string, bool) {
	var parts []string
	for _, m := range codeBlock.FindAllStringSubmatch(reply, -1) {
		switch strings.ToLower(m[1]) {
		case "", "js", "javascript", "ts", "typescript", "mjs", "jsx":
			if c := strings.TrimSpace(m[2]); c != "" {
				parts = append(parts, c)
			}
		}
	}
	if len(parts) == 0 {
		if i := strings.Index(reply, "<code>"); i >= 0 {
			if j := strings.Index(reply[i:], "</code>"); j >= 0 {
				if c := strings.TrimSpace(reply[i+len("<code>") : i+j]); c != "" {
					parts = append(parts, c)
				}
			}
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, "\n\n"), true
}

// observation is what a step that ran tells the model: its logs and its
// value.
func observation(logs string, v any) string {
	var b strings.Builder
	if logs = strings.TrimRight(logs, "\n"); logs != "" {
		b.WriteString("Execution logs:\n" + logs + "\n")
	}
	b.WriteString("Last output from code snippet:\n" + valueText(v))
	return b.String()
}

// valueText is a value as the model reads it: as Node's console.log
// shows it, a string as it is.
func valueText(v any) string { return airlock.Inspect(v) }

// outputLimit is a MaxOutput field's bound.
func outputLimit(n int) int {
	if n == 0 {
		return airlock.DefaultMaxOutput
	}
	return n
}

// errorObservation tells the model what failed, where, and the line of its
// code there, with the logs before the failure.
func errorObservation(err error, code string) string {
	var b strings.Builder
	var ee *airlock.ExecutorError
	if errors.As(err, &ee) {
		if logs := strings.TrimRight(ee.Logs, "\n"); logs != "" {
			b.WriteString("Execution logs:\n" + logs + "\n")
		}
		fmt.Fprintf(&b, "Error (%s): %s", ee.Code, ee.Message)
		if line, col := errorPosition(ee); line > 0 {
			fmt.Fprintf(&b, "\nat line %d, column %d: %s", line, col, sourceLine(code, line))
		}
		return b.String()
	}
	return "Error: " + err.Error()
}

// errorPosition is the line and column of an executor error, if known.
func errorPosition(ee *airlock.ExecutorError) (int, int) {
	num := func(v any) int {
		switch n := v.(type) {
		case int:
			return n
		case float64:
			return int(n)
		}
		return 0
	}
	if l := num(ee.Details["line"]); l > 0 {
		return l, num(ee.Details["column"])
	}
	if ds, ok := ee.Details["diagnostics"].([]airlock.Diagnostic); ok {
		for _, d := range ds {
			if d.Severity == airlock.DiagnosticError && d.Location != nil {
				return d.Location.Line, d.Location.Column
			}
		}
	}
	return 0, 0
}

// chat asks the model, summing nothing: the caller counts usage.
func (o *OpenAI) chat(ctx context.Context, params openai.ChatCompletionNewParams) (*openai.ChatCompletion, error) {
	if params.Model == "" {
		params.Model = shared.ChatModel(o.Model)
	}
	resp, err := o.Client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("the model returned no choices")
	}
	return resp, nil
}

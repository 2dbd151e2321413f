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

	"github.com/airlockrun/airlock"
)

// DefaultMaxSteps is how many steps a loop takes when none is set.
const DefaultMaxSteps = 10

// A CodeAgent solves a task in the Thought → Code → Observation loop of
// seed 001's Appendix D: the model writes JavaScript, one executor runs it
// (state persists from step to step), the logs and the value or the error
// go back to the model, until the code calls final_answer(value).
type CodeAgent struct {
	// Model answers: NewOpenAI for any OpenAI-compatible endpoint, or any
	// Completer.
	Model Completer
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
	// Policy governs the code's tool calls: allow, deny, wait for an
	// approval, per-tool timeouts. Nil allows every call.
	Policy *Policy
	// Budget bounds the tokens and the llm()/llmJson() calls of one Run
	// (of each Session.Run); the zero Budget bounds nothing.
	Budget Budget
}

// SystemPrompt is the agent's system prompt: Appendix D's text with the
// tools' declarations.
func (a *CodeAgent) SystemPrompt() (string, error) {
	instructions := codeAgentHelpers
	if a.Instructions != "" {
		instructions += "\n\n" + a.Instructions
	}
	return RenderCodeAgentPrompt(CodeAgentPromptOptions{
		Tools:              toolDocs(a.Tools.Tools()),
		AuthorizedImports:  a.Executor.AuthorizedImports,
		CustomInstructions: instructions,
	})
}

// toolDocs describes tools for the executor's prompt: one input object,
// typed from the schema.
func toolDocs(tools []Tool) []ToolDoc {
	docs := make([]ToolDoc, 0, len(tools))
	for _, t := range tools {
		in := t.InputSchema
		if in == nil {
			in = &objectSchema
		}
		returns := "any"
		if t.OutputSchema != nil {
			returns = tsType(t.OutputSchema, "")
		}
		docs = append(docs, ToolDoc{
			Name: FunctionName(t.ID), Description: t.Description, Returns: returns,
			Params: []ToolParam{{Name: "input", Type: tsType(in, "")}},
		})
	}
	return docs
}

// Run solves the task. It returns the transcript, complete or as far as it
// got; the error is set when the loop could not go on (the model failed,
// the context ended, the budget ran out, the sandbox could not start).
func (a *CodeAgent) Run(ctx context.Context, task string) (*Transcript, error) {
	s := a.NewSession(nil)
	defer s.Close()
	return s.Run(ctx, task)
}

// A CodeSession is a conversation with a CodeAgent: each Run is one turn,
// which sees the messages of the turns before it and, as the executor
// lives from turn to turn, their variables. Close releases the executor.
// A session runs one turn at a time.
type CodeSession struct {
	a        *CodeAgent
	messages []Message
	ex       *airlock.Executor
	opts     airlock.ExecutorOptions
	state    *State
}

// NewSession starts a conversation. history, if not empty, is the messages
// of an earlier conversation (Transcript.Messages of its last turn): the
// model reads them, though the variables of their code are gone.
func (a *CodeAgent) NewSession(history []Message) *CodeSession {
	opts := a.Executor
	opts.RunConcurrency = airlock.RunReject
	return &CodeSession{a: a, messages: append([]Message(nil), history...), opts: opts, state: NewState()}
}

// Messages returns the conversation so far.
func (s *CodeSession) Messages() []Message { return append([]Message(nil), s.messages...) }

// Close releases the session's executor. It is idempotent.
func (s *CodeSession) Close() error {
	if s.ex == nil {
		return nil
	}
	err := s.ex.Cleanup(context.Background())
	s.ex = nil
	return err
}

// Run runs one turn: the task, or the follow-up, and the steps it takes.
// The transcript's Messages are the whole conversation after the turn and
// NewMessages the turn's own.
func (s *CodeSession) Run(ctx context.Context, task string) (*Transcript, error) {
	a := s.a
	tr, finish := beginTurn(task, "code", &s.messages)
	defer finish()
	if a.Model == nil {
		return tr.fail(errors.New("agent: CodeAgent.Model is nil"))
	}
	run := newTracker(a.Policy, a.Budget, nil)
	tools := a.executorTools(run, s.state)
	if len(s.messages) == 0 {
		system, err := a.SystemPrompt()
		if err != nil {
			return tr.fail(err)
		}
		s.messages = append(s.messages, Message{Role: "system", Content: system})
		s.messages = append(s.messages, Message{Role: "user", Content: "Task: " + task})
	} else {
		s.messages = append(s.messages, Message{Role: "user", Content: "New task: " + task})
	}
	if s.ex == nil {
		ex, err := airlock.NewExecutor(s.opts)
		if err != nil {
			return tr.fail(err)
		}
		s.ex = ex
		if err := a.startExecutor(ctx, ex, tools); err != nil {
			return tr.fail(err)
		}
	} else if err := s.ex.SendTools(ctx, tools); err != nil { // this turn's tracker
		return tr.fail(err)
	}
	hooks := loopHooks{onStep: a.OnStep, logger: a.Logger}
	maxSteps := stepLimit(a.MaxSteps)
	maxOutput := outputLimit(a.MaxOutput)
	for i := 1; i <= maxSteps; i++ {
		stepStart := time.Now()
		step := Step{Index: i}
		resp, err := a.Model.Complete(ctx, CompletionRequest{Messages: s.messages})
		if err != nil {
			return tr.fail(fmt.Errorf("step %d: the model failed: %w", i, err))
		}
		run.addUsage(resp.Usage, false)
		step.ModelReply = resp.Text
		s.messages = append(s.messages, Message{Role: "assistant", Content: step.ModelReply})
		code, ok := ExtractCode(step.ModelReply)
		if !ok {
			step.Error = "no code block in the reply"
			step.Observation = "Error: your reply had no code block. Reply with \"Thought:\" and then one JavaScript code block that starts with ```js and ends with ```, and call final_answer(value) when you have the answer."
		} else if err := run.exceeded(); err != nil {
			return tr.failStep(step, run, err)
		} else {
			step.Code = code
			src, edits := asyncSource(code, a.asyncable)
			out, err := s.ex.Run(ctx, src)
			switch {
			case err == nil && out.IsFinalAnswer:
				step.Final = true
				step.Observation = observation(out.Logs, out.Output)
				tr.FinalAnswer, tr.Outcome = out.Output, OutcomeFinalAnswer
			case err == nil:
				step.Observation = observation(out.Logs, out.Output)
			default:
				if ctx.Err() != nil {
					return tr.failStep(step, run, ctx.Err())
				}
				step.Error = err.Error()
				step.Observation = errorObservation(err, code, edits)
				if s.ex.State() == airlock.StateDirty || s.ex.State() == airlock.StateDead {
					step.Observation += "\nThe sandbox was reset after this error: variables from earlier steps are gone."
					_ = s.ex.Cleanup(ctx)
					s.ex = nil
					ex, err := airlock.NewExecutor(s.opts)
					if err == nil {
						s.ex = ex
						err = a.startExecutor(ctx, ex, tools)
					}
					if err != nil {
						return tr.fail(err)
					}
				}
			}
		}
		step.Observation = airlock.ClipText(step.Observation, maxOutput)
		tr.endStep(step, run, stepStart, hooks)
		if step.Final {
			return tr, nil
		}
		if err := run.exceeded(); err != nil {
			return tr.fail(err)
		}
		s.messages = append(s.messages, Message{Role: "user", Content: "Observation:\n" + step.Observation})
	}
	return tr.ranOut(maxSteps)
}

var objectSchema = jsonschema.Schema{Type: "object"}

// executorTools are the sandbox's functions: the tools, and the helpers
// parallel, llm and llmJson of code mode (store and recall over the
// session's state), governed and counted by run.
func (a *CodeAgent) executorTools(run *tracker, state *State) map[string]any {
	tools := map[string]any{}
	for _, t := range a.Tools.Tools() {
		tools[FunctionName(t.ID)] = airlock.JSONFunc(toolFunc(run, a.Tools.lookup(t.ID)))
	}
	x := &execution{it: NewInterpreter(Config{Completer: a.Model}), tools: a.Tools, state: state, tr: run}
	for name, fn := range map[string]func(context.Context, json.RawMessage) (json.RawMessage, error){
		"parallel": x.parallel, "llm": x.llm, "llmJson": x.llmJSON, "store": x.store, "recall": x.recall,
	} {
		tools[name] = airlock.JSONFunc(fn)
	}
	// The promise-returning twins, for the calls a step awaits or gives to
	// Promise.all (see asyncSource).
	twins := map[string]any{}
	for name, fn := range tools {
		if name != "store" && name != "recall" {
			twins[asyncPrefix+name] = airlock.Async(fn)
		}
	}
	for name, fn := range twins {
		tools[name] = fn
	}
	return tools
}

// asyncable reports whether a CodeAgent sandbox function has a twin.
func (a *CodeAgent) asyncable(name string) bool {
	switch name {
	case "parallel", "llm", "llmJson":
		return true
	}
	return a.Tools.lookup(name) != nil && a.Tools.lookup(name).name == name
}

// codeAgentHelpers tells the model of the helpers beside the tools.
const codeAgentHelpers = "Besides the tools, these functions are available: " +
	"parallel([{tool, input}]) runs tool calls (by tool ID) concurrently and returns their results in order, a failure as {error}; " +
	"await Promise.all([...]) over tool calls runs them concurrently too; " +
	"llm(prompt) asks a language model for text; llmJson(prompt, schema?) asks it for JSON; " +
	"store(key, value) and recall(key) keep values for later steps and turns."

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
	b.WriteString("Last output from code snippet:\n" + airlock.Inspect(v))
	return b.String()
}

// outputLimit is a MaxOutput field's bound.
func outputLimit(n int) int {
	if n == 0 {
		return airlock.DefaultMaxOutput
	}
	return n
}

// errorObservation tells the model what failed, where, and the line of its
// code there, with the logs before the failure.
func errorObservation(err error, code string, edits sourceEdits) string {
	var b strings.Builder
	var ee *airlock.ExecutorError
	if errors.As(err, &ee) {
		if logs := strings.TrimRight(ee.Logs, "\n"); logs != "" {
			b.WriteString("Execution logs:\n" + logs + "\n")
		}
		fmt.Fprintf(&b, "Error (%s): %s", ee.Code, ee.Message)
		if line, col := errorPosition(ee); line > 0 {
			fmt.Fprintf(&b, "\nat line %d, column %d: %s", line, edits.column(line, col), sourceLine(code, line))
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

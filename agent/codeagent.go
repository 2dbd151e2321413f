package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/instrument"
	"github.com/airlockrun/airlock/internal/source"
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
	// much was cut (ClipText). 0 means DefaultMaxOutput
	// (20,000); negative means no bound.
	MaxOutput int
	// Policy governs the code's tool calls: allow, deny, wait for an
	// approval, per-tool timeouts. Nil allows every call.
	Policy *Policy
	// Budget bounds the tokens and the llm()/llmJson() calls of one Run
	// (of each Session.Run); the zero Budget bounds nothing.
	Budget Budget
	// Interpreter gives the sandbox the functions registered on it (a
	// plugin's, such as the artifacts'), and its Config the limits of
	// parallel() and the Completer of llm() (Model when it has none). Nil
	// means none registered.
	Interpreter *Interpreter
}

// SystemPrompt is the agent's system prompt: Appendix D's text with the
// tools' declarations.
func (a *CodeAgent) SystemPrompt() (string, error) {
	instructions := codeAgentHelpers
	if a.Interpreter != nil {
		if docs := a.Interpreter.FunctionDocs(); len(docs) > 0 {
			instructions += "\n\nThese functions are available too:"
			for _, h := range docs {
				instructions += "\n- " + h.Signature
				if h.Description != "" {
					instructions += ": " + h.Description
				}
			}
		}
	}
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
	opts.Sloppy = true // plain scripts, as code mode's: x = 5 makes a global
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
	ctx, tr, finish := beginTurn(ctx, task, "code", &s.messages)
	defer finish()
	if a.Model == nil {
		return tr.fail(errors.New("agent: CodeAgent.Model is nil"))
	}
	run := newTracker(a.Policy, a.Budget, nil)
	run.watchFetches(a.Interpreter)
	x, tools, err := a.sandbox(run, s.state)
	if err != nil {
		return tr.fail(err)
	}
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
		ctx := tr.beginStep(ctx, i)
		step := Step{Index: i}
		resp, err := complete(ctx, a.Model, CompletionRequest{Messages: s.messages}, false)
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
			src, smap, edits := stepSource(code, x.asyncable)
			x.reset()
			out, err := s.ex.Run(ctx, src)
			output, done, logs := x.take()
			switch {
			case err == nil && out.IsFinalAnswer:
				step.Final = true
				step.Observation = observation(stepLogs(out, logs), out.Output)
				tr.FinalAnswer, tr.Outcome = out.Output, OutcomeFinalAnswer
			case err == nil && done:
				// complete() or done(): the text given to output() and
				// complete() is the answer, as in code mode.
				step.Final = true
				step.Observation = observation(stepLogs(out, logs), out.Output)
				tr.FinalAnswer, tr.Outcome = output, OutcomeFinalAnswer
			case err == nil:
				step.Observation = observation(stepLogs(out, logs), out.Output)
			default:
				if ctx.Err() != nil {
					return tr.failStep(step, run, ctx.Err())
				}
				step.Error = err.Error()
				step.Observation = errorObservation(err, code, smap, edits, x)
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
		step.Observation = ClipText(step.Observation, maxOutput)
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

// sandbox is what a turn's sandbox has: the tools, the functions
// registered on the agent's Interpreter and the helpers of code mode
// (parallel, llm, llmJson, complete, output, done, log, store, recall,
// toolSchema), with the promise-returning twins of those a step may await
// concurrently, governed and counted by run, store and recall over the
// session's state.
func (a *CodeAgent) sandbox(run *tracker, state *State) (*execution, map[string]any, error) {
	it := a.Interpreter
	if it == nil {
		it = NewInterpreter(Config{Completer: a.Model})
	} else if it.cfg.Completer == nil {
		it = it.Clone()
		it.cfg.Completer = a.Model
	}
	x := &execution{it: it, tools: a.Tools, state: state, tr: run}
	g, err := x.globals(nil)
	if err != nil {
		return nil, nil, err
	}
	delete(g, "input") // the CodeAgent's task is in the prompt
	return x, g, nil
}

// stepSource is the script a CodeAgent step runs: its TypeScript erased
// (the executor would erase it too, but the calls whose promise the code
// uses are found in JavaScript), and those calls made to call their
// twins, and each throw statement made to tell its position (as in code
// mode's scripts). smap and edits map positions back to the step.
func stepSource(code string, asyncable func(string) bool) (string, *source.StepMap, sourceEdits) {
	js, smap := code, (*source.StepMap)(nil)
	prog := instrument.Parse(code)
	if prog == nil {
		if erased, m, lf := source.EraseStep(code); lf == nil {
			if p := instrument.Parse(erased); p != nil {
				js, smap, prog = erased, m, p
			}
		}
	}
	src, edits := editSource(js, prog, asyncable, false)
	return src, smap, edits
}

// stepLogs are a step's console output and its log() calls, in time
// order, one line each.
func stepLogs(out *airlock.CodeOutput, logs []airlock.Log) string {
	if len(logs) == 0 {
		return out.Logs
	}
	all := mergeLogs(entryLogs(out.LogEntries), logs)
	lines := make([]string, len(all))
	for i, l := range all {
		lines[i] = l.Message()
	}
	return strings.Join(lines, "\n")
}

// codeAgentHelpers tells the model of the helpers beside the tools.
const codeAgentHelpers = "Besides the tools, these functions are available: " +
	"parallel([{tool, input}]) runs tool calls (by tool ID) concurrently and returns their results in order, a failure as {error}; " +
	"await Promise.all([...]) over tool calls runs them concurrently too (tools may be called with or without await); " +
	"llm(prompt) asks a language model for text; llmJson(prompt, schema?) asks it for JSON; " +
	"store(key, value) and recall(key) keep values for later steps and turns; " +
	"toolSchema(toolId) gives a tool's input schema; log(...values) writes to the logs as console.log does; " +
	"complete({ response, data?, followUp? }) gives the response as the final answer when the code ends, as output(text) and then done() do. " +
	"A step is a script, as in Node's REPL: TypeScript types are allowed, `x = 5` makes a global, and the value of the last expression is the step's output."

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
		return DefaultMaxOutput
	}
	return n
}

// errorObservation tells the model what failed, where, and the line of its
// code there, with the logs before the failure.
func errorObservation(err error, code string, smap *source.StepMap, edits sourceEdits, x *execution) string {
	var b strings.Builder
	var ee *airlock.ExecutorError
	if errors.As(err, &ee) {
		if logs := strings.TrimRight(ee.Logs, "\n"); logs != "" {
			b.WriteString("Execution logs:\n" + logs + "\n")
		}
		fmt.Fprintf(&b, "Error (%s): %s", ee.Code, ee.Message)
		if line, col := errorPosition(ee); line > 0 {
			line, col = smap.Position(line, edits.column(line, col))
			fmt.Fprintf(&b, "\nat line %d, column %d: %s", line, col, sourceLine(code, line))
		} else if line, col := x.thrownAt(); line > 0 && ee.Code == airlock.CodeRuntimeException {
			// A thrown value that is not an Error: its throw statement's.
			line, col = smap.Position(line, col)
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

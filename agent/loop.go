package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock"
)

// Usage counts the tokens of completions: the input (prompt) and the
// output (completion) apart, and how many completions, of which how many
// were llm()/llmJson() sub-calls.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	TotalTokens      int64 `json:"totalTokens"`
	// Completions is how many completions are counted.
	Completions int `json:"completions"`
	// SubCalls is how many of them were llm()/llmJson() calls.
	SubCalls int `json:"subCalls,omitempty"`
}

// Add counts o in u.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.TotalTokens += o.TotalTokens
	u.Completions += o.Completions
	u.SubCalls += o.SubCalls
}

// A Step is one turn of an agent loop: the model's reply and what came of
// it.
type Step struct {
	Index int `json:"index"`
	// ModelReply is the text of the model's reply.
	ModelReply string `json:"modelReply,omitempty"`
	// Code is the code the step ran (code mode).
	Code string `json:"code,omitempty"`
	// ToolCalls are the tools the model called (classic mode).
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Calls are all the tool calls of the step, in the order they started:
	// the model's own (classic mode) and those its code made.
	Calls []CallRecord `json:"calls,omitempty"`
	// Fetches are the requests the step's code made with a Fetcher
	// (airlock.Fetch) registered on the loop's Interpreter, allowed or
	// refused, in order.
	Fetches []airlock.FetchRecord `json:"fetches,omitempty"`
	// Observation is what the model is told next: the logs and the value,
	// or the error.
	Observation string `json:"observation,omitempty"`
	// Error is set when the step's code or reply failed.
	Error string `json:"error,omitempty"`
	// Final is set on the step that gave the final answer.
	Final    bool          `json:"final,omitempty"`
	Duration time.Duration `json:"durationNs"`
	// Usage is the step's: the loop's completion and the llm()/llmJson()
	// sub-calls of its code.
	Usage Usage `json:"usage"`
}

// A ToolCall is a tool the model called in classic mode, and its result.
type ToolCall struct {
	Tool   string `json:"tool"`
	Input  string `json:"input"`
	Result string `json:"result"`
	Error  bool   `json:"error,omitempty"`
}

// Outcome is how an agent run ended.
type Outcome string

const (
	// OutcomeFinalAnswer: the model gave its final answer.
	OutcomeFinalAnswer Outcome = "final_answer"
	// OutcomeMaxSteps: the steps ran out first.
	OutcomeMaxSteps Outcome = "max_steps"
	// OutcomeError: the model could not be reached, or the context ended.
	OutcomeError Outcome = "error"
)

// A Transcript is the record of an agent run.
type Transcript struct {
	Task        string  `json:"task"`
	Mode        string  `json:"mode"`
	Outcome     Outcome `json:"outcome"`
	FinalAnswer any     `json:"finalAnswer,omitempty"`
	Error       string  `json:"error,omitempty"`
	Steps       []Step  `json:"steps"`
	// Usage is the run's, summed over its steps.
	Usage    Usage         `json:"usage"`
	Duration time.Duration `json:"durationNs"`
	// Messages are the conversation after the run: pass them to
	// NewSession (or ClassicAgent.Continue) to go on from there.
	Messages []Message `json:"messages,omitempty"`
	// NewMessages are the messages this run added.
	NewMessages []Message `json:"-"`

	// span is the turn's span and stepSpan the current step's, while
	// traced (trace.go).
	span, stepSpan trace.Span
}

// beginTurn starts the transcript of one turn of a loop whose conversation
// is *messages; finish, deferred, records the turn's duration and the
// conversation after it: all of it, and the messages the turn added. The
// context returned carries the turn's span, when traced, which finish
// ends.
func beginTurn(ctx context.Context, task, mode string, messages *[]Message) (_ context.Context, tr *Transcript, finish func()) {
	start, before := time.Now(), len(*messages)
	tr = &Transcript{Task: task, Mode: mode, Steps: []Step{}}
	ctx, tr.span = startTurn(ctx, mode)
	return ctx, tr, func() {
		tr.Duration = time.Since(start)
		tr.Messages = append([]Message(nil), *messages...)
		tr.NewMessages = append([]Message(nil), (*messages)[min(before, len(*messages)):]...)
		if tr.span != nil {
			tr.closeStep(nil, nil)
			endTurn(tr.span, tr)
			tr.span = nil
		}
	}
}

// fail ends a turn with an error.
func (t *Transcript) fail(err error) (*Transcript, error) {
	t.closeStep(nil, err)
	t.Outcome, t.Error = OutcomeError, err.Error()
	return t, err
}

// failStep ends a turn with an error in step, which is kept with the
// calls and usage run recorded for it.
func (t *Transcript) failStep(step Step, run *tracker, err error) (*Transcript, error) {
	step.Calls, step.Usage = run.drain()
	step.Fetches = run.drainFetches()
	t.add(step)
	t.closeStep(&step, err)
	return t.fail(err)
}

// endStep records a finished step with the calls and usage run recorded
// for it and its duration since start, and reports it to hooks.
func (t *Transcript) endStep(step Step, run *tracker, start time.Time, hooks loopHooks) {
	step.Calls, step.Usage = run.drain()
	step.Fetches = run.drainFetches()
	step.Duration = time.Since(start)
	t.add(step)
	t.closeStep(&step, nil)
	hooks.emit(t.Mode, step)
}

// ranOut ends a turn whose maxSteps steps gave no final answer.
func (t *Transcript) ranOut(maxSteps int) (*Transcript, error) {
	t.Outcome = OutcomeMaxSteps
	t.Error = fmt.Sprintf("no final answer after %d steps", maxSteps)
	return t, nil
}

// add appends a step and counts its usage.
func (t *Transcript) add(s Step) {
	t.Steps = append(t.Steps, s)
	t.Usage.Add(s.Usage)
}

// MarshalJSON encodes the transcript with its final answer as
// js.JSONValue makes it, as Execution's MarshalJSON does: it does not
// fail on any answer a run gives.
func (t Transcript) MarshalJSON() ([]byte, error) {
	type plain Transcript
	p := plain(t)
	return marshalWithValue(&p, &p.FinalAnswer)
}

// loopInterpreter is the Interpreter a loop runs code in (a new one whose
// llm() uses model, if it is nil) and the Policy that governs the loop's
// tool calls (the Interpreter's, if policy is nil).
func loopInterpreter(it *Interpreter, model Completer, policy *Policy) (*Interpreter, *Policy) {
	if it == nil {
		it = NewInterpreter(Config{Completer: model})
	}
	if policy == nil {
		policy = it.cfg.Policy
	}
	return it, policy
}

// stepLimit is a loop's MaxSteps, or the default.
func stepLimit(n int) int {
	if n <= 0 {
		return DefaultMaxSteps
	}
	return n
}

// loopHooks are the observability of a loop: a callback per step and slog.
type loopHooks struct {
	onStep func(Step)
	logger *slog.Logger
}

func (h loopHooks) emit(mode string, s Step) {
	if h.onStep != nil {
		h.onStep(s)
	}
	l := h.logger
	if l == nil {
		l = slog.Default()
	}
	attrs := []any{"mode", mode, "step", s.Index, "duration", s.Duration, "tokens", s.Usage.TotalTokens, "final", s.Final}
	if s.Code != "" {
		attrs = append(attrs, "code", s.Code)
	}
	if len(s.ToolCalls) > 0 {
		names := make([]string, len(s.ToolCalls))
		for i, c := range s.ToolCalls {
			names[i] = c.Tool
		}
		attrs = append(attrs, "tools", names)
	}
	if s.Error != "" {
		attrs = append(attrs, "error", s.Error)
	}
	l.LogAttrs(context.Background(), slog.LevelInfo, "agent step", argsToAttrs(attrs)...)
}

func argsToAttrs(args []any) []slog.Attr {
	out := make([]slog.Attr, 0, len(args)/2)
	for i := 0; i+1 < len(args); i += 2 {
		out = append(out, slog.Any(args[i].(string), args[i+1]))
	}
	return out
}

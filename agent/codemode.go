package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// A CodeModeAgent is seed 002's code-mode loop: its system prompt is
// Interpreter.Prompt, each reply's code runs in a fresh sandbox of the
// Interpreter (Interpreter.Execute) with the tools and the helpers, and
// FormatExecution's text goes back to the model, until the code calls
// complete() or done(). What the code gave output() and complete() is the
// final answer. store()/recall() values live through the run (and the
// turns of a session). It differs from CodeAgent, Appendix D's loop, whose
// steps share one executor and end with final_answer(value).
type CodeModeAgent struct {
	// Model answers.
	Model Completer
	// Tools are the functions the code calls.
	Tools *Toolbox
	// Interpreter runs the code; nil means a new one whose llm() uses
	// Model.
	Interpreter *Interpreter
	// MaxSteps bounds the loop; 0 means DefaultMaxSteps.
	MaxSteps int
	// Instructions are added to the system prompt.
	Instructions string
	OnStep       func(Step)
	Logger       *slog.Logger
	// MaxOutput bounds each observation, as CodeAgent.MaxOutput does.
	MaxOutput int
	// Policy governs the tool calls in place of the Interpreter's
	// Config.Policy; nil leaves the Interpreter's.
	Policy *Policy
	// Budget bounds the tokens and sub-calls of one Run.
	Budget Budget
}

// Run solves the task; see CodeAgent.Run for the results.
func (a *CodeModeAgent) Run(ctx context.Context, task string) (*Transcript, error) {
	return a.NewSession(nil).Run(ctx, task)
}

// A CodeModeSession is a conversation with a CodeModeAgent; see
// CodeSession. Its turns share the store()/recall() state.
type CodeModeSession struct {
	a        *CodeModeAgent
	messages []Message
	state    *State
}

// NewSession starts a conversation; history, if not empty, is the
// messages of an earlier one.
func (a *CodeModeAgent) NewSession(history []Message) *CodeModeSession {
	return &CodeModeSession{a: a, messages: append([]Message(nil), history...), state: NewState()}
}

// Run runs one turn.
func (s *CodeModeSession) Run(ctx context.Context, task string) (*Transcript, error) {
	a := s.a
	ctx, tr, finish := beginTurn(ctx, task, "codemode", &s.messages)
	defer finish()
	if a.Model == nil {
		return tr.fail(errors.New("agent: CodeModeAgent.Model is nil"))
	}
	it, policy := loopInterpreter(a.Interpreter, a.Model, a.Policy)
	run := newTracker(policy, a.Budget, nil)
	run.watchFetches(it)
	if len(s.messages) == 0 {
		s.messages = append(s.messages, Message{Role: "system", Content: it.Prompt(a.Tools, a.Instructions)})
	}
	s.messages = append(s.messages, Message{Role: "user", Content: task})
	hooks := loopHooks{onStep: a.OnStep, logger: a.Logger}
	maxSteps := stepLimit(a.MaxSteps)
	for i := 1; i <= maxSteps; i++ {
		stepStart := time.Now()
		ctx := tr.beginStep(ctx, i)
		resp, err := complete(ctx, a.Model, CompletionRequest{Messages: s.messages}, false)
		if err != nil {
			return tr.fail(fmt.Errorf("step %d: the model failed: %w", i, err))
		}
		run.addUsage(resp.Usage, false)
		step := Step{Index: i, ModelReply: resp.Text}
		s.messages = append(s.messages, Message{Role: "assistant", Content: resp.Text})
		if err := run.exceeded(); err != nil {
			return tr.failStep(step, run, err)
		}
		code, ok := ExtractCode(resp.Text)
		if !ok {
			step.Error = "no code block in the reply"
			step.Observation = "Error: your reply had no code block. Reply with one ```javascript code block, and call complete({ response }) when you have the answer."
		} else {
			step.Code = code
			e := it.Execute(ctx, code, ExecuteOptions{Tools: a.Tools, State: s.state, run: run})
			if ctx.Err() != nil {
				return tr.failStep(step, run, ctx.Err())
			}
			step.Error = e.Error
			step.Observation = FormatExecution(e)
			if e.Done && e.OK() {
				step.Final = true
				tr.Outcome, tr.FinalAnswer = OutcomeFinalAnswer, e.Output
			}
		}
		step.Observation = ClipText(step.Observation, outputLimit(a.MaxOutput))
		tr.endStep(step, run, stepStart, hooks)
		if step.Final {
			return tr, nil
		}
		if err := run.exceeded(); err != nil {
			return tr.fail(err)
		}
		s.messages = append(s.messages, Message{Role: "user", Content: strings.TrimSpace(step.Observation)})
	}
	return tr.ranOut(maxSteps)
}

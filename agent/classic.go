package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// RunCodeAPIName is the run-code tool's name in the chat completions API.
const RunCodeAPIName = "run_code"

// APIName is a tool's name in the chat completions API, whose names allow
// no dots: the function name (weatherGetWeather), run_code for the
// run-code tool.
func APIName(id string) string {
	if id == RunCodeID {
		return RunCodeAPIName
	}
	return FunctionName(id)
}

// A ClassicAgent solves a task by tool calling (seed 002's classic mode):
// the model calls the conversation's tools directly, and run_code to run
// JavaScript that can itself call them (for parallel calls or data work),
// until it replies without calling a tool; that reply is the answer. The
// tool calls of one model message run concurrently.
type ClassicAgent struct {
	// Model answers: NewOpenAI for any OpenAI-compatible endpoint, or any
	// Completer that passes CompletionRequest.Tools on.
	Model Completer
	// Tools are the conversation's tools.
	Tools *Toolbox
	// Interpreter runs run_code; nil means a new one whose llm() uses Model.
	Interpreter *Interpreter
	// MaxSteps bounds the model calls; 0 means DefaultMaxSteps.
	MaxSteps int
	// Instructions are the system prompt's; a default says how to use
	// run_code.
	Instructions string
	OnStep       func(Step)
	Logger       *slog.Logger
	// MaxOutput bounds each tool result the model reads, in characters, as
	// CodeAgent.MaxOutput bounds observations (run_code's text is bounded
	// by the Interpreter's Config.MaxOutput as well). 0 means
	// DefaultMaxOutput (20,000); negative means no bound.
	MaxOutput int
	// Policy governs every tool call, the model's own and those of
	// run_code's code, in place of the Interpreter's Config.Policy. Nil
	// leaves the Interpreter's.
	Policy *Policy
	// Budget bounds the tokens and the llm()/llmJson() calls of one Run
	// (of each ClassicSession.Run); the zero Budget bounds nothing.
	Budget Budget
}

const classicInstructions = "You are a helpful assistant. Use the tools to solve the task. " +
	"To make several independent tool calls at once, or to compute over data, call run_code with JavaScript: " +
	"the tools are functions there (parallel() runs calls concurrently), and the value of the last expression is the result. " +
	"When you have the answer, reply with it and call no tool."

// Run solves the task; see CodeAgent.Run for the results.
func (a *ClassicAgent) Run(ctx context.Context, task string) (*Transcript, error) {
	return a.NewSession(nil).Run(ctx, task)
}

// A ClassicSession is a conversation with a ClassicAgent: each Run is one
// turn, which sees the messages of the turns before it and what run_code's
// store() kept in them. A session runs one turn at a time.
type ClassicSession struct {
	a        *ClassicAgent
	messages []Message
	state    *State
}

// NewSession starts a conversation; history, if not empty, is the
// messages of an earlier one (Transcript.Messages).
func (a *ClassicAgent) NewSession(history []Message) *ClassicSession {
	return &ClassicSession{a: a, messages: append([]Message(nil), history...), state: NewState()}
}

// Messages returns the conversation so far.
func (s *ClassicSession) Messages() []Message { return append([]Message(nil), s.messages...) }

// Run runs one turn; see CodeSession.Run.
func (s *ClassicSession) Run(ctx context.Context, task string) (*Transcript, error) {
	a := s.a
	ctx, tr, finish := beginTurn(ctx, task, "classic", &s.messages)
	defer finish()
	if a.Model == nil {
		return tr.fail(errors.New("agent: ClassicAgent.Model is nil"))
	}
	it, policy := loopInterpreter(a.Interpreter, a.Model, a.Policy)
	run := newTracker(policy, a.Budget, nil)
	run.watchFetches(it)
	all, err := NewToolbox(a.Tools.Tools()...)
	if err != nil {
		return tr.fail(err)
	}
	if err := all.Add(runCodeTool(it.Clone(), a.Tools, s.state, run)); err != nil {
		return tr.fail(err)
	}
	byAPIName := map[string]string{}
	var specs []ToolSpec
	for _, t := range all.Tools() {
		byAPIName[APIName(t.ID)] = t.ID
		params := json.RawMessage(`{"type":"object"}`)
		if t.InputSchema != nil {
			params, _ = json.Marshal(t.InputSchema)
		}
		specs = append(specs, ToolSpec{Name: APIName(t.ID), Description: t.Description, Parameters: params})
	}
	if len(s.messages) == 0 {
		instructions := a.Instructions
		if instructions == "" {
			instructions = classicInstructions
		}
		s.messages = append(s.messages, Message{Role: "system", Content: instructions})
	}
	s.messages = append(s.messages, Message{Role: "user", Content: task})
	hooks := loopHooks{onStep: a.OnStep, logger: a.Logger}
	maxSteps := stepLimit(a.MaxSteps)
	for i := 1; i <= maxSteps; i++ {
		stepStart := time.Now()
		ctx := tr.beginStep(ctx, i)
		resp, err := complete(ctx, a.Model, CompletionRequest{Messages: s.messages, Tools: specs}, false)
		if err != nil {
			return tr.fail(fmt.Errorf("step %d: the model failed: %w", i, err))
		}
		run.addUsage(resp.Usage, false)
		step := Step{Index: i, ModelReply: resp.Text}
		s.messages = append(s.messages, Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls})
		if len(resp.ToolCalls) == 0 {
			step.Final = true
			tr.Outcome, tr.FinalAnswer = OutcomeFinalAnswer, resp.Text
		}
		if err := run.exceeded(); err != nil && !step.Final {
			return tr.failStep(step, run, err)
		}
		// The calls of one message run concurrently; their results go
		// back in the order the model made them.
		step.ToolCalls = make([]ToolCall, len(resp.ToolCalls))
		var wg sync.WaitGroup
		for j, call := range resp.ToolCalls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				step.ToolCalls[j] = a.callTool(ctx, run, all, byAPIName, call)
			}()
		}
		wg.Wait()
		for j, call := range resp.ToolCalls {
			if byAPIName[call.Name] == RunCodeID && step.Code == "" {
				step.Code = codeOf(call.Arguments)
			}
			s.messages = append(s.messages, Message{Role: "tool", Content: step.ToolCalls[j].Result, ToolCallID: call.ID})
		}
		if len(step.ToolCalls) == 0 {
			step.ToolCalls = nil
		}
		tr.endStep(step, run, stepStart, hooks)
		if step.Final {
			return tr, nil
		}
		if err := ctx.Err(); err != nil {
			return tr.fail(err)
		}
		if err := run.exceeded(); err != nil {
			return tr.fail(err)
		}
	}
	return tr.ranOut(maxSteps)
}

// callTool runs one tool call of the model, governed and recorded.
func (a *ClassicAgent) callTool(ctx context.Context, run *tracker, all *Toolbox, byAPIName map[string]string, call ModelToolCall) ToolCall {
	tc := ToolCall{Tool: call.Name, Input: call.Arguments}
	var out json.RawMessage
	var err error
	if id, ok := byAPIName[call.Name]; !ok {
		err = notFound(call.Name)
	} else {
		out, err = run.callByID(ctx, all, id, json.RawMessage(call.Arguments))
	}
	if err != nil {
		tc.Result, tc.Error = "Error: "+err.Error(), true
	} else {
		tc.Result = resultForModel(out)
	}
	tc.Result = ClipText(tc.Result, outputLimit(a.MaxOutput))
	return tc
}

// resultForModel is a tool's JSON result as the model reads it: a string
// as its text, anything else as JSON.
func resultForModel(out json.RawMessage) string {
	var s string
	if json.Unmarshal(out, &s) == nil {
		return s
	}
	return string(out)
}

func codeOf(args string) string {
	var in RunCodeInput
	_ = json.Unmarshal([]byte(args), &in)
	return in.Code
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/airlockrun/airlock"
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
// until it replies without calling a tool; that reply is the answer.
type ClassicAgent struct {
	Model *OpenAI
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
	// airlock.DefaultMaxOutput (20,000); negative means no bound.
	MaxOutput int
}

const classicInstructions = "You are a helpful assistant. Use the tools to solve the task. " +
	"To make several independent tool calls at once, or to compute over data, call run_code with JavaScript: " +
	"the tools are functions there (parallel() runs calls concurrently), and the value of the last expression is the result. " +
	"When you have the answer, reply with it and call no tool."

// Run solves the task; see CodeAgent.Run for the results.
func (a *ClassicAgent) Run(ctx context.Context, task string) (*Transcript, error) {
	start := time.Now()
	tr := &Transcript{Task: task, Mode: "classic", Steps: []Step{}}
	defer func() { tr.Duration = time.Since(start) }()
	fail := func(err error) (*Transcript, error) {
		tr.Outcome, tr.Error = OutcomeError, err.Error()
		return tr, err
	}
	it := a.Interpreter
	if it == nil {
		it = NewInterpreter(Config{Completer: a.Model})
	}
	all, err := NewToolbox(a.Tools.Tools()...)
	if err != nil {
		return fail(err)
	}
	if err := all.Add(RunCodeTool(it.Clone(), a.Tools, NewState())); err != nil {
		return fail(err)
	}
	byAPIName := map[string]string{}
	var apiTools []openai.ChatCompletionToolUnionParam
	for _, t := range all.Tools() {
		byAPIName[APIName(t.ID)] = t.ID
		params := shared.FunctionParameters{"type": "object"}
		if t.InputSchema != nil {
			b, _ := json.Marshal(t.InputSchema)
			params = shared.FunctionParameters{}
			_ = json.Unmarshal(b, &params)
		}
		apiTools = append(apiTools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: APIName(t.ID), Description: openai.String(t.Description), Parameters: params,
		}))
	}
	instructions := a.Instructions
	if instructions == "" {
		instructions = classicInstructions
	}
	messages := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(instructions), openai.UserMessage(task)}
	hooks := loopHooks{onStep: a.OnStep, logger: a.Logger}
	maxSteps := stepLimit(a.MaxSteps)
	for i := 1; i <= maxSteps; i++ {
		stepStart := time.Now()
		resp, err := a.Model.chat(ctx, openai.ChatCompletionNewParams{Messages: messages, Tools: apiTools})
		if err != nil {
			return fail(fmt.Errorf("step %d: the model failed: %w", i, err))
		}
		msg := resp.Choices[0].Message
		step := Step{Index: i, ModelReply: msg.Content, Usage: usageOf(resp)}
		tr.Usage.add(step.Usage)
		messages = append(messages, msg.ToParam())
		if len(msg.ToolCalls) == 0 {
			step.Final = true
			tr.Outcome, tr.FinalAnswer = OutcomeFinalAnswer, msg.Content
		}
		for _, call := range msg.ToolCalls {
			tc := ToolCall{Tool: call.Function.Name, Input: call.Function.Arguments}
			id, ok := byAPIName[call.Function.Name]
			var out json.RawMessage
			if !ok {
				err = notFound(call.Function.Name)
			} else {
				out, err = all.Call(ctx, id, json.RawMessage(call.Function.Arguments))
			}
			if err != nil {
				tc.Result, tc.Error = "Error: "+err.Error(), true
			} else {
				tc.Result = resultForModel(out)
			}
			tc.Result = airlock.ClipText(tc.Result, outputLimit(a.MaxOutput))
			if id == RunCodeID {
				step.Code = codeOf(call.Function.Arguments)
			}
			step.ToolCalls = append(step.ToolCalls, tc)
			messages = append(messages, openai.ToolMessage(tc.Result, call.ID))
		}
		step.Duration = time.Since(stepStart)
		tr.Steps = append(tr.Steps, step)
		hooks.emit("classic", step)
		if step.Final {
			return tr, nil
		}
	}
	tr.Outcome = OutcomeMaxSteps
	tr.Error = fmt.Sprintf("no final answer after %d steps", maxSteps)
	return tr, nil
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

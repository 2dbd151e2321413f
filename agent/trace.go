package agent

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock/internal/tracing"
)

// TracerName is the instrumentation scope of the agent's spans (README,
// "Traces"): a turn's (invoke_agent), each step's (airlock.agent.step),
// each model call's (chat, with the GenAI semantic conventions' gen_ai.*
// attributes and the tokens the Completion counted) and each tool call's
// (execute_tool). They go to the global tracer provider, which records
// nothing until a program installs one; then each costs nothing but a
// check. No prompt, reply, code, tool input or output, or error message is
// recorded: they may hold secrets and user data (RATIONALE.md, "What a
// trace holds").
const TracerName = "github.com/airlockrun/airlock/agent"

// The attributes of the agent's spans: the GenAI semantic conventions'
// and the agent's own.
const (
	attrOperation    = attribute.Key("gen_ai.operation.name")
	attrProvider     = attribute.Key("gen_ai.provider.name")
	attrAgentName    = attribute.Key("gen_ai.agent.name")
	attrRequestModel = attribute.Key("gen_ai.request.model")
	attrMaxTokens    = attribute.Key("gen_ai.request.max_tokens")
	attrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	attrStep         = attribute.Key("airlock.agent.step")
	attrFinal        = attribute.Key("airlock.agent.final")
	attrOutcome      = attribute.Key("airlock.agent.outcome")
	attrSubCall      = attribute.Key("airlock.agent.sub_call")
	attrToolCalls    = attribute.Key("airlock.agent.tool_calls")
	attrDenied       = attribute.Key("airlock.agent.denied")
)

// startTurn starts a turn's span, invoke_agent; nil when not traced.
func startTurn(ctx context.Context, mode string) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return ctx, nil // before the name and options are made
	}
	return tracing.Start(ctx, TracerName, "invoke_agent "+mode, trace.WithAttributes(
		attrOperation.String("invoke_agent"), attrAgentName.String(mode)))
}

// endTurn ends a turn's span with its outcome and usage.
func endTurn(span trace.Span, tr *Transcript) {
	span.SetAttributes(attrOutcome.String(string(tr.Outcome)),
		attrInputTokens.Int64(tr.Usage.PromptTokens), attrOutputTokens.Int64(tr.Usage.CompletionTokens))
	if tr.Outcome == OutcomeError {
		tracing.Fail(span, "error", string(tr.Outcome))
	}
	span.End()
}

// beginStep starts step i's span, a child of ctx's, and returns the
// context that carries it: the step's model call, runs and tool calls are
// its children.
func (t *Transcript) beginStep(ctx context.Context, i int) context.Context {
	if t.span == nil {
		return ctx
	}
	ctx, t.stepSpan = tracing.Start(ctx, TracerName, "airlock.agent.step", trace.WithAttributes(
		attrStep.Int(i), attrAgentName.String(t.Mode)))
	return ctx
}

// closeStep ends the current step's span, if any, with the step.
func (t *Transcript) closeStep(s *Step, err error) {
	span := t.stepSpan
	if span == nil {
		return
	}
	t.stepSpan = nil
	if s != nil {
		span.SetAttributes(attrFinal.Bool(s.Final), attrToolCalls.Int(len(s.Calls)),
			attrInputTokens.Int64(s.Usage.PromptTokens), attrOutputTokens.Int64(s.Usage.CompletionTokens))
		if s.Error != "" && err == nil {
			span.SetAttributes(tracing.ErrorType.String("step_error"))
		}
	}
	if err != nil {
		tracing.Fail(span, errType(err), "the step failed")
	}
	span.End()
}

// complete asks c for a completion under a chat span with the GenAI
// attributes: the model asked for and the tokens the reply counted.
// subCall marks llm()/llmJson() calls from code.
func complete(ctx context.Context, c Completer, req CompletionRequest, subCall bool) (*Completion, error) {
	if !tracing.Enabled() {
		return c.Complete(ctx, req)
	}
	model := req.Model
	provider := ""
	if o, ok := c.(*OpenAI); ok {
		provider = "openai"
		if model == "" {
			model = o.Model
		}
	}
	name := "chat"
	if model != "" {
		name += " " + model
	}
	ctx, span := tracing.Start(ctx, TracerName, name, trace.WithSpanKind(trace.SpanKindClient))
	if span == nil {
		return c.Complete(ctx, req)
	}
	span.SetAttributes(attrOperation.String("chat"), attrSubCall.Bool(subCall))
	if model != "" {
		span.SetAttributes(attrRequestModel.String(model))
	}
	if provider != "" {
		span.SetAttributes(attrProvider.String(provider))
	}
	if req.MaxTokens > 0 {
		span.SetAttributes(attrMaxTokens.Int(req.MaxTokens))
	}
	resp, err := c.Complete(ctx, req)
	switch {
	case err != nil:
		tracing.Fail(span, errType(err), "the model call failed")
	case resp != nil:
		span.SetAttributes(attrInputTokens.Int64(resp.Usage.PromptTokens), attrOutputTokens.Int64(resp.Usage.CompletionTokens),
			attrToolCalls.Int(len(resp.ToolCalls)))
	}
	span.End()
	return resp, err
}

// startTool starts a tool call's span, execute_tool; nil when not
// traced.
func startTool(ctx context.Context, id string) (context.Context, trace.Span) {
	return tracing.StartTool(ctx, TracerName, id, "function")
}

// endTool ends a tool call's span.
func endTool(span trace.Span, denied bool, err error) {
	if denied {
		span.SetAttributes(attrDenied.Bool(true))
	}
	if err != nil {
		tracing.Fail(span, errType(err), "the tool call failed")
	}
	span.End()
}

// errType is an error's type for error.type: the Go type, never the
// message.
func errType(err error) string {
	switch err {
	case context.Canceled:
		return "canceled"
	case context.DeadlineExceeded:
		return "timeout"
	}
	return fmt.Sprintf("%T", err)
}

package agent_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
	"github.com/airlockrun/airlock/internal/tracing/tracingtest"
)

// recordSpans records every span (tracingtest.Record).
var recordSpans = tracingtest.Record

// spanTree is the ended spans of one trace, by id.
type spanTree map[trace.SpanID]sdktrace.ReadOnlySpan

func treeOf(rec *tracetest.SpanRecorder, id trace.TraceID) spanTree {
	tree := spanTree{}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID() == id {
			tree[s.SpanContext().SpanID()] = s
		}
	}
	return tree
}

// named is the spans of the tree named name.
func (tr spanTree) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// under reports whether s descends from ancestor.
func (tr spanTree) under(s, ancestor sdktrace.ReadOnlySpan) bool {
	for p := s.Parent().SpanID(); p.IsValid(); {
		if p == ancestor.SpanContext().SpanID() {
			return true
		}
		next, ok := tr[p]
		if !ok {
			return false
		}
		p = next.Parent().SpanID()
	}
	return false
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return "<unset>"
}

func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, kv ...attribute.KeyValue) {
	t.Helper()
	for _, want := range kv {
		if got := attr(s, string(want.Key)); got != want.Value.Emit() {
			t.Errorf("span %q: %s = %s, want %s", s.Name(), want.Key, got, want.Value.Emit())
		}
	}
}

// one is the only span of tr named name.
func (tr spanTree) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	s := tr.named(name)
	if len(s) != 1 {
		t.Fatalf("%d spans named %q, want 1", len(s), name)
	}
	return s[0]
}

// A code agent's turn is an invoke_agent span; its step a child span; the
// step's model call a chat span with the GenAI attributes and the tokens
// the completion counted; the tool its code called an execute_tool span
// under the step (under the host call that made it), named by the tool.
// No prompt, code or value is recorded.
func TestTraceCodeAgentStep(t *testing.T) {
	rec := recordSpans(t)
	m := &fakeModel{script: []agent.Completion{codeReply(`final_answer(weatherGetWeather({ latitude: 10, longitude: 0 }).temperature)`)}}
	a := &agent.CodeAgent{Model: m, Tools: toolbox(t, weatherTool(0)), Executor: airlock.ExecutorOptions{Timeout: 2 * time.Second}}
	ctx, parent := otel.Tracer("test").Start(context.Background(), "caller")
	tr, err := a.Run(ctx, "What is the weather at 10N?")
	parent.End()
	if err != nil || tr.FinalAnswer != 11.0 {
		t.Fatalf("%+v, %v", tr, err)
	}
	tree := treeOf(rec, parent.SpanContext().TraceID())
	turn := tree.one(t, "invoke_agent code")
	if turn.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Error("the turn's span is not the caller's child")
	}
	wantAttrs(t, turn, attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "code"),
		attribute.Int64("gen_ai.usage.input_tokens", 100), attribute.Int64("gen_ai.usage.output_tokens", 10),
		attribute.String("airlock.agent.outcome", "final_answer"))
	step := tree.one(t, "airlock.agent.step")
	if step.Parent().SpanID() != turn.SpanContext().SpanID() {
		t.Error("the step's span is not the turn's child")
	}
	wantAttrs(t, step, attribute.Int("airlock.agent.step", 1), attribute.Bool("airlock.agent.final", true),
		attribute.Int("airlock.agent.tool_calls", 1))
	chat := tree.one(t, "chat")
	if chat.Parent().SpanID() != step.SpanContext().SpanID() {
		t.Error("the model call's span is not the step's child")
	}
	if chat.SpanKind() != trace.SpanKindClient {
		t.Errorf("chat span kind %v", chat.SpanKind())
	}
	wantAttrs(t, chat, attribute.String("gen_ai.operation.name", "chat"), attribute.Int64("gen_ai.usage.input_tokens", 100),
		attribute.Int64("gen_ai.usage.output_tokens", 10), attribute.Bool("airlock.agent.sub_call", false))
	tool := tree.one(t, "execute_tool weather.get-weather")
	wantAttrs(t, tool, attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "weather.get-weather"),
		attribute.String("gen_ai.tool.type", "function"))
	// The code's two host calls: the tool's and final_answer.
	calls := tree.named("airlock.call")
	if len(calls) != 2 {
		t.Fatalf("%d host call spans, want 2", len(calls))
	}
	call, ok := tree[tool.Parent().SpanID()]
	if !ok || call.Name() != "airlock.call" || !tree.under(call, step) {
		t.Error("the tool's span is not under a host call's, under the step's")
	}
	for _, s := range tree {
		for _, kv := range s.Attributes() {
			if v := kv.Value.Emit(); len(v) > 40 {
				t.Errorf("span %q: %s holds a text: %q", s.Name(), kv.Key, v)
			}
		}
	}
}

// A classic agent's model calls through an OpenAI-compatible endpoint are
// chat spans named by the model, with its provider and the tokens the
// endpoint counted; the tool the model called is an execute_tool span
// under the step.
func TestTraceClassicAgentOpenAI(t *testing.T) {
	rec := recordSpans(t)
	s := newScripted(t,
		reply{calls: [][2]string{{"weatherGetWeather", `{"latitude": 10, "longitude": 0}`}}},
		reply{text: "It is 11 degrees."},
	)
	a := &agent.ClassicAgent{Model: s.model(-1), Tools: toolbox(t, weatherTool(0)), MaxSteps: 3}
	ctx, parent := otel.Tracer("test").Start(context.Background(), "caller")
	tr, err := a.Run(ctx, "Weather at 10N?")
	parent.End()
	if err != nil || len(tr.Steps) != 2 {
		t.Fatalf("%+v, %v", tr, err)
	}
	tree := treeOf(rec, parent.SpanContext().TraceID())
	chats := tree.named("chat m")
	steps := tree.named("airlock.agent.step")
	if len(chats) != 2 || len(steps) != 2 {
		t.Fatalf("%d chat spans, %d step spans, want 2 and 2", len(chats), len(steps))
	}
	for _, c := range chats {
		var st sdktrace.ReadOnlySpan
		for _, s := range steps {
			if c.Parent().SpanID() == s.SpanContext().SpanID() {
				st = s
			}
		}
		if st == nil {
			t.Fatal("a chat span is not a step's child")
		}
		u := tr.Steps[map[string]int{"1": 0, "2": 1}[attr(st, "airlock.agent.step")]].Usage
		if u.PromptTokens == 0 {
			t.Fatal("the endpoint counted no tokens")
		}
		wantAttrs(t, c, attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "m"),
			attribute.String("gen_ai.provider.name", "openai"),
			attribute.Int64("gen_ai.usage.input_tokens", u.PromptTokens), attribute.Int64("gen_ai.usage.output_tokens", u.CompletionTokens))
	}
	tool := tree.one(t, "execute_tool weather.get-weather")
	wantAttrs(t, tool, attribute.String("gen_ai.tool.name", "weather.get-weather"))
	if !tree.under(tool, steps[0]) && !tree.under(tool, steps[1]) {
		t.Error("the tool's span is under no step")
	}
}

// A step whose model call fails ends its span, and the turn's, as errors,
// with the error's type and not its message.
func TestTraceModelFailure(t *testing.T) {
	rec := recordSpans(t)
	m := &fakeModel{} // no replies: the first call fails
	a := &agent.CodeModeAgent{Model: m, Tools: toolbox(t, weatherTool(0))}
	ctx, parent := otel.Tracer("test").Start(context.Background(), "caller")
	_, err := a.Run(ctx, "t")
	parent.End()
	if err == nil {
		t.Fatal("the turn did not fail")
	}
	tree := treeOf(rec, parent.SpanContext().TraceID())
	for _, name := range []string{"invoke_agent codemode", "airlock.agent.step", "chat"} {
		s := tree.one(t, name)
		if s.Status().Code.String() != "Error" {
			t.Errorf("span %q: status %v", name, s.Status().Code)
		}
		if attr(s, "error.type") == "<unset>" {
			t.Errorf("span %q: no error.type", name)
		}
	}
}

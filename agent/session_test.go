package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// Item 3: the tool calls of one model message run concurrently: each of
// the three tools waits until all three are in flight, which they can only
// be if they run at once.
func TestClassicAgent_ConcurrentToolCalls(t *testing.T) {
	barrier := barrierTool(3, "together")
	m := &fakeModel{script: []agent.Completion{
		{ToolCalls: []agent.ModelToolCall{{ID: "a", Name: "syncBarrier"}, {ID: "b", Name: "syncBarrier"}, {ID: "c", Name: "syncBarrier"}}},
		{Text: "ok"},
	}}
	a := &agent.ClassicAgent{Model: m, Tools: toolbox(t, barrier)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a sequential run would wait here
	defer cancel()
	tr, err := a.Run(ctx, "t")
	if err != nil || tr.FinalAnswer != "ok" {
		t.Fatalf("%+v, %v", tr, err)
	}
	msgs := m.request(1).Messages
	for i, id := range []string{"a", "b", "c"} {
		if mm := msgs[len(msgs)-3+i]; mm.ToolCallID != id || mm.Content != "together" {
			t.Fatalf("tool message %d = %+v", i, mm)
		}
	}
	if len(tr.Steps[0].Calls) != 3 {
		t.Fatalf("calls = %+v", tr.Steps[0].Calls)
	}
}

// Item 7: a CodeAgent session's follow-up turn sees the previous messages
// and the variables of the previous turn's code.
func TestCodeSession_FollowUp(t *testing.T) {
	m := &fakeModel{script: []agent.Completion{
		codeReply("const w = weatherGetWeather({ latitude: 10, longitude: 0 });\nfinal_answer(w.temperature)"),
		codeReply("final_answer(w.description + ' at ' + w.temperature)"),
	}}
	a := &agent.CodeAgent{Model: m, Tools: toolbox(t, weatherTool(0)), Executor: airlock.ExecutorOptions{Timeout: 2 * time.Second}}
	s := a.NewSession(nil)
	defer s.Close()
	tr1, err := s.Run(context.Background(), "How warm?")
	if err != nil || tr1.FinalAnswer != 11.0 {
		t.Fatalf("%+v, %v", tr1, err)
	}
	tr2, err := s.Run(context.Background(), "And the sky?")
	if err != nil || tr2.FinalAnswer != "cloudy at 11" {
		t.Fatalf("%+v, %v", tr2, err)
	}
	req := m.request(1)
	if len(req.Messages) != 4 || req.Messages[1].Content != "Task: How warm?" || req.Messages[3].Content != "New task: And the sky?" {
		t.Fatalf("follow-up request = %+v", req.Messages)
	}
	if len(tr2.NewMessages) != 2 || len(tr2.Messages) != 5 || tr2.NewMessages[0].Role != "user" {
		t.Fatalf("messages: new %+v, all %d", tr2.NewMessages, len(tr2.Messages))
	}
}

// Item 7: a ClassicAgent conversation continues from the messages of the
// last turn; a session keeps run_code's store() values between turns.
func TestClassicSession_FollowUp(t *testing.T) {
	m := &fakeModel{script: []agent.Completion{
		call("run_code", `{"code": "store('n', 41); 'kept'"}`),
		{Text: "stored"},
		call("run_code", `{"code": "recall('n') + 1"}`),
		{Text: "42"},
	}}
	a := &agent.ClassicAgent{Model: m, Tools: toolbox(t)}
	s := a.NewSession(nil)
	if _, err := s.Run(context.Background(), "remember 41"); err != nil {
		t.Fatal(err)
	}
	tr, err := s.Run(context.Background(), "add one")
	if err != nil || tr.FinalAnswer != "42" {
		t.Fatalf("%+v, %v", tr, err)
	}
	if got := tr.Steps[0].ToolCalls[0].Result; !strings.Contains(got, "=== Result ===\n42\n") {
		t.Fatalf("run_code = %q", got)
	}
	msgs := m.request(2).Messages
	if msgs[1].Content != "remember 41" || msgs[len(msgs)-1].Content != "add one" || msgs[len(msgs)-2].Content != "stored" {
		t.Fatalf("follow-up request = %+v", msgs)
	}
	// From the messages alone (a new process, say): the history is there.
	m.script = []agent.Completion{{Text: "you asked me to add one"}}
	tr, err = a.NewSession(tr.Messages).Run(context.Background(), "what did I ask?")
	if err != nil || tr.FinalAnswer != "you asked me to add one" {
		t.Fatalf("%+v, %v", tr, err)
	}
	if msgs := m.request(4).Messages; len(msgs) != len(tr.Messages)-1 || msgs[0].Role != "system" {
		t.Fatalf("resumed request = %+v", msgs)
	}
}

// Item 1 (in part): a parenthesised last expression is the value.
func TestLastExpression_Parenthesised(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	for code, want := range map[string]string{
		"const a = 1, b = 2;\n({a, b})": "{ a: 1, b: 2 }",
		"(async () => 5)()":             "5",
		"const r = [1];\n(r).length":    "1",
	} {
		e := execute(t, it, code, agent.ExecuteOptions{})
		wantOK(t, e)
		if got := airlock.Inspect(e.Result); got != want {
			t.Errorf("%q = %s, want %s", code, got, want)
		}
	}
}

// Item 9: small things.
func TestSmallThings(t *testing.T) {
	// Tool IDs with capitals.
	h := func(context.Context, json.RawMessage) (any, error) { return "u", nil }
	tb := toolbox(t, agent.Tool{ID: "github.getUser", Description: "Get a user. " + strings.Repeat("More words here ", 20), Handler: h},
		agent.Tool{ID: "github.search", Description: strings.Repeat("word ", 60), Handler: h})
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `githubGetUser({})`, agent.ExecuteOptions{Tools: tb})
	wantOK(t, e)
	if e.Result != "u" {
		t.Fatalf("result = %v", e.Result)
	}
	// The compact listing shortens long descriptions.
	l := agent.ToolListing(tb.Tools())
	if !strings.Contains(l, "githubGetUser — Get a user. |") || !strings.Contains(l, "word…") || len(l) > 300 {
		t.Fatalf("listing:\n%s", l)
	}
	// complete() without data clears the data of an earlier turn.
	state := agent.NewState()
	wantOK(t, execute(t, it, `complete({ response: "a", data: { n: 1 } })`, agent.ExecuteOptions{State: state}))
	e = execute(t, it, `complete({ response: "b" }); recall("_lastData")`, agent.ExecuteOptions{State: state})
	wantOK(t, e)
	if _, ok := state.Get(agent.LastDataKey); ok || airlock.Inspect(e.Result) != "undefined" {
		t.Fatalf("data kept: %v", e.Result)
	}
	// An Execution's JSON has its duration.
	b, _ := json.Marshal(e)
	if !strings.Contains(string(b), `"durationNs":`) {
		t.Fatalf("JSON = %s", b)
	}
}

// Item 1 (in part): the CodeAgent's sandbox has parallel, llm and llmJson,
// with the tool calls recorded and the sub-call counted.
func TestCodeAgent_Helpers(t *testing.T) {
	m := &fakeModel{
		script: []agent.Completion{codeReply(`const r = parallel([{ tool: "weather.get-weather", input: { latitude: 10, longitude: 0 } }]);
const [w] = await Promise.all([weatherGetWeather({ latitude: 20, longitude: 0 })]);
final_answer(llm("SUB: " + r[0].temperature + " " + w.temperature))`)},
		subReply: "warm", subUsage: usage(5, 1),
	}
	a := &agent.CodeAgent{Model: m, Tools: toolbox(t, weatherTool(0)), Executor: airlock.ExecutorOptions{Timeout: 5 * time.Second}}
	tr, err := a.Run(context.Background(), "t")
	if err != nil || tr.FinalAnswer != "warm" {
		t.Fatalf("%+v, %v", tr, err)
	}
	if sub := m.request(1).Messages; sub[len(sub)-1].Content != "SUB: 11 12" {
		t.Fatalf("sub-call = %+v", sub)
	}
	if u := tr.Usage; u.Completions != 2 || u.SubCalls != 1 || u.TotalTokens != 116 || len(tr.Steps[0].Calls) != 2 {
		t.Fatalf("usage %+v, calls %+v", u, tr.Steps[0].Calls)
	}
	if sys := m.request(0).Messages[0].Content; !strings.Contains(sys, "llmJson(prompt, schema?)") {
		t.Fatalf("system prompt lacks the helpers")
	}
}

// Item 2: seed 002's code-mode loop: the Interpreter's prompt, a fresh
// sandbox per reply, FormatExecution's text as the observation, and the
// end at complete().
func TestCodeModeAgent(t *testing.T) {
	m := &fakeModel{script: []agent.Completion{
		codeReply(`const w = weatherGetWeather({ latitude: 10, longitude: 0 }); store("t", w.temperature); w`),
		codeReply(`complete({ response: "It is " + recall("t") + " degrees." })`),
	}}
	a := &agent.CodeModeAgent{Model: m, Tools: toolbox(t, weatherTool(0))}
	tr, err := a.Run(context.Background(), "How warm?")
	if err != nil || tr.Outcome != agent.OutcomeFinalAnswer || tr.FinalAnswer != "It is 11 degrees." || len(tr.Steps) != 2 {
		t.Fatalf("%+v, %v", tr, err)
	}
	req := m.request(1).Messages
	if !strings.Contains(req[0].Content, "call `complete({ response, data?, followUp? })`") ||
		!strings.Contains(req[len(req)-1].Content, "=== Result ===\n{ description: 'cloudy', temperature: 11 }") {
		t.Fatalf("prompt or observation: %+v", req)
	}
	if len(tr.Steps[0].Calls) != 1 || tr.Mode != "codemode" {
		t.Fatalf("steps = %+v", tr.Steps)
	}
}

// Item 9: a thrown value that is not an Error gets the line of its throw.
func TestThrowString_Line(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, "const a = 1;\nif (a) throw 'a string';", agent.ExecuteOptions{})
	if e.Error != "Error: a string" || e.Line != 2 || e.Column != 14 || e.Context != "if (a) throw 'a string';" {
		t.Fatalf("%+v", e)
	}
	e = execute(t, it, "function f() {\n  throw { code: 5 };\n}\nf()", agent.ExecuteOptions{})
	if e.Line != 2 || e.Context != "throw { code: 5 };" {
		t.Fatalf("%+v", e)
	}
	// A caught throw's value is untouched.
	e = execute(t, it, "let v; try { throw 'x' } catch (err) { v = err } v", agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != "x" {
		t.Fatalf("result = %v", e.Result)
	}
	// An Error keeps its own position.
	e = execute(t, it, "\n\nthrow new Error('boom')", agent.ExecuteOptions{})
	if e.Line != 3 || e.Column != 16 { // the engine points at the call's parenthesis
		t.Fatalf("%+v", e)
	}
}

// Item 3 in the CodeAgent: `await Promise.all` over tools runs them at
// once (each waits until all three are in flight).
func TestCodeAgent_PromiseAllConcurrent(t *testing.T) {
	barrier := barrierTool(3, "in")
	m := &fakeModel{script: []agent.Completion{codeReply(`const r = await Promise.all([1, 2, 3].map(i => syncBarrier({ i })));
final_answer(r.join(","))`)}}
	a := &agent.CodeAgent{Model: m, Tools: toolbox(t, barrier), Executor: airlock.ExecutorOptions{Timeout: 20 * time.Second}}
	tr, err := a.Run(context.Background(), "t")
	if err != nil || tr.FinalAnswer != "in,in,in" || len(tr.Steps[0].Calls) != 3 {
		t.Fatalf("%+v, %v", tr, err)
	}
}

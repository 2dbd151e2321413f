package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// fakeModel is a Completer test double: it answers with the completions
// of its script in order, each with the given usage, and records the
// requests. A sub-call (a request with no tools whose first message is not
// the loop's) gets subReply.
type fakeModel struct {
	mu       sync.Mutex
	script   []agent.Completion
	requests []agent.CompletionRequest
	subReply string
	subUsage agent.Usage
}

func (f *fakeModel) Complete(ctx context.Context, req agent.CompletionRequest) (*agent.Completion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	if len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == "user" && strings.HasPrefix(req.Messages[len(req.Messages)-1].Content, "SUB:") {
		return &agent.Completion{Text: f.subReply, Usage: f.subUsage}, nil
	}
	if len(f.script) == 0 {
		return nil, errors.New("the script has no more replies")
	}
	c := f.script[0]
	f.script = f.script[1:]
	return &c, nil
}

func (f *fakeModel) request(i int) agent.CompletionRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

func usage(in, out int64) agent.Usage {
	return agent.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, Completions: 1}
}

func codeReply(code string) agent.Completion {
	return agent.Completion{Text: "Thought: go.\n```js\n" + code + "\n```", Usage: usage(100, 10)}
}

func call(name, args string) agent.Completion {
	return agent.Completion{ToolCalls: []agent.ModelToolCall{{ID: "c1", Name: name, Arguments: args}}, Usage: usage(100, 10)}
}

// Item 6: CodeAgent.Model is any Completer; no HTTP server is needed.
func TestCodeAgent_CompleterDouble(t *testing.T) {
	m := &fakeModel{script: []agent.Completion{codeReply(`final_answer(weatherGetWeather({ latitude: 10, longitude: 0 }).temperature)`)}}
	a := &agent.CodeAgent{Model: m, Tools: toolbox(t, weatherTool(0)), Executor: airlock.ExecutorOptions{Timeout: 2 * time.Second}}
	tr, err := a.Run(context.Background(), "t")
	if err != nil || tr.FinalAnswer != 11.0 {
		t.Fatalf("%+v, %v", tr, err)
	}
	if u := tr.Usage; u.PromptTokens != 100 || u.CompletionTokens != 10 || u.TotalTokens != 110 || u.Completions != 1 {
		t.Fatalf("usage = %+v", u)
	}
	if c := tr.Steps[0].Calls; len(c) != 1 || c[0].Tool != "weather.get-weather" || string(c[0].Output) != `{"temperature":11,"description":"cloudy"}` ||
		string(c[0].Input) != `{"latitude":10,"longitude":0}` || c[0].Start.IsZero() {
		t.Fatalf("calls = %+v", c)
	}
}

// Item 6: ClassicAgent takes any Completer: the tools go in the request,
// the calls come back in the completion.
func TestClassicAgent_CompleterDouble(t *testing.T) {
	m := &fakeModel{script: []agent.Completion{
		call("weatherGetWeather", `{"latitude": 20, "longitude": 0}`),
		{Text: "2 degrees", Usage: usage(100, 10)},
	}}
	a := &agent.ClassicAgent{Model: m, Tools: toolbox(t, weatherTool(0))}
	tr, err := a.Run(context.Background(), "t")
	if err != nil || tr.FinalAnswer != "2 degrees" {
		t.Fatalf("%+v, %v", tr, err)
	}
	if len(m.request(0).Tools) != 2 {
		t.Fatalf("tools = %+v", m.request(0).Tools)
	}
	msgs := m.request(1).Messages
	if last := msgs[len(msgs)-1]; last.Role != "tool" || last.ToolCallID != "c1" || last.Content != `{"temperature":12,"description":"cloudy"}` {
		t.Fatalf("last message = %+v", last)
	}
	if prev := msgs[len(msgs)-2]; prev.Role != "assistant" || len(prev.ToolCalls) != 1 {
		t.Fatalf("assistant message = %+v", prev)
	}
}

// Item 6: llmJson(prompt, schema) asks for structured output; a fenced
// reply is unwrapped.
func TestLLMJSON_Schema(t *testing.T) {
	chat := newChatServer(t, text("```json\n{\"city\": \"Oslo\"}\n```"))
	it := agent.NewInterpreter(agent.Config{Completer: chat.completer()})
	e := execute(t, it, `const r = llmJson("where?", { type: "object", properties: { city: { type: "string" } }, required: ["city"] }); r.city`, agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != "Oslo" {
		t.Fatalf("result = %v", e.Result)
	}
	rf := chat.last()["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] == "" || js["schema"].(map[string]any)["required"].([]any)[0] != "city" {
		t.Fatalf("response_format = %v", rf)
	}
	// Without a schema: json_object, and the fence is unwrapped too.
	e = execute(t, it, `llmJson("where?").city`, agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != "Oslo" || chat.last()["response_format"].(map[string]any)["type"] != "json_object" {
		t.Fatalf("result = %v, request %v", e.Result, chat.last())
	}
	e = execute(t, it, `llmJson("x", "not a schema")`, agent.ExecuteOptions{})
	if !strings.Contains(e.Error, "llmJson() expects its schema as a JSON Schema object") {
		t.Fatalf("error = %q", e.Error)
	}
	for in, want := range map[string]string{
		`{"a":1}`:                          `{"a":1}`,
		"```json\n[1, 2]\n```":             `[1, 2]`,
		"Here it is:\n```\n{\"b\":2}\n```": `{"b":2}`,
		"no json here":                     "",
	} {
		if got := string(agent.UnwrapJSON(in)); got != want {
			t.Errorf("UnwrapJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

// Item 5: a classic run that served three completions (two of the loop,
// one llm() in run_code) reports three, per step and in total, input and
// output apart.
func TestClassicAgent_UsageWithSubCalls(t *testing.T) {
	m := &fakeModel{
		script: []agent.Completion{
			call("run_code", `{"code": "llm('SUB: summarise')"}`),
			{Text: "done", Usage: usage(200, 20)},
		},
		subReply: "short", subUsage: usage(7, 3),
	}
	a := &agent.ClassicAgent{Model: m, Tools: toolbox(t, weatherTool(0))}
	tr, err := a.Run(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	s1 := tr.Steps[0].Usage
	if s1.PromptTokens != 107 || s1.CompletionTokens != 13 || s1.TotalTokens != 120 || s1.Completions != 2 || s1.SubCalls != 1 {
		t.Fatalf("step 1 usage = %+v", s1)
	}
	if u := tr.Usage; u.PromptTokens != 307 || u.CompletionTokens != 33 || u.TotalTokens != 340 || u.Completions != 3 || u.SubCalls != 1 {
		t.Fatalf("total usage = %+v", u)
	}
}

// Item 5: the budget stops a run with a clear error: sub-calls past the
// bound throw in the code and end the run; tokens past the bound end it.
func TestBudget(t *testing.T) {
	m := &fakeModel{
		script:   []agent.Completion{call("run_code", `{"code": "llm('SUB: 1'); llm('SUB: 2')"}`), {Text: "never"}},
		subReply: "ok", subUsage: usage(1, 1),
	}
	a := &agent.ClassicAgent{Model: m, Tools: toolbox(t), Budget: agent.Budget{MaxSubCalls: 1}}
	tr, err := a.Run(context.Background(), "t")
	if !errors.Is(err, agent.ErrBudget) || tr.Outcome != agent.OutcomeError || !strings.Contains(tr.Error, "may make 1 llm()/llmJson() calls") {
		t.Fatalf("%+v, %v", tr, err)
	}
	if tc := tr.Steps[0].ToolCalls[0]; !tc.Error || !strings.Contains(tc.Result, "budget exhausted") {
		t.Fatalf("tool call = %+v", tc)
	}

	m = &fakeModel{script: []agent.Completion{codeReply("console.log(1)"), codeReply("console.log(2)"), codeReply("final_answer(3)")}}
	c := &agent.CodeAgent{Model: m, Budget: agent.Budget{MaxTokens: 150}, Executor: airlock.ExecutorOptions{Timeout: 2 * time.Second}}
	tr, err = c.Run(context.Background(), "t")
	if !errors.Is(err, agent.ErrBudget) || !strings.Contains(tr.Error, "220 tokens spent, the bound is 150") || len(tr.Steps) != 2 {
		t.Fatalf("%+v, %v", tr, err)
	}
}

// Item 4: every tool call is recorded, a failing one with its error, in
// the execution, the CodeAgent step and the classic step.
func TestCallRecord_FailingTool(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `const a = weatherGetWeather({ latitude: 1, longitude: 0 });
let m; try { weatherGetWeather({ latitude: 100, longitude: 0 }) } catch (err) { m = err.message }
parallel([{ tool: "weather.get-weather", input: { latitude: 20, longitude: 0 } }]); m`, agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))})
	wantOK(t, e)
	if len(e.Calls) != 3 {
		t.Fatalf("calls = %+v", e.Calls)
	}
	if c := e.Calls[1]; c.Error != "latitude out of range" || c.Output != nil || string(c.Input) != `{"latitude":100,"longitude":0}` || c.Duration < 0 {
		t.Fatalf("failed call = %+v", c)
	}
	if c := e.Calls[2]; c.Tool != "weather.get-weather" || string(c.Output) != `{"temperature":12,"description":"cloudy"}` {
		t.Fatalf("parallel call = %+v", c)
	}
	b, _ := json.Marshal(e)
	if !strings.Contains(string(b), `"calls":[`) || !strings.Contains(string(b), `"durationNs":`) {
		t.Fatalf("JSON = %s", b)
	}

	m := &fakeModel{script: []agent.Completion{codeReply(`weatherGetWeather({ latitude: 100, longitude: 0 })`), codeReply("final_answer(1)")}}
	a := &agent.CodeAgent{Model: m, Tools: toolbox(t, weatherTool(0)), Executor: airlock.ExecutorOptions{Timeout: 2 * time.Second}}
	tr, err := a.Run(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Steps[0].Calls; len(c) != 1 || c[0].Error != "latitude out of range" || tr.Steps[0].Error == "" {
		t.Fatalf("step = %+v", tr.Steps[0])
	}

	// Classic: the model's own call and run_code's nested call, both
	// recorded; a failed run_code is a tool error to the model.
	m = &fakeModel{script: []agent.Completion{
		call("run_code", `{"code": "weatherGetWeather({ latitude: 100, longitude: 0 })"}`),
		{Text: "sorry"},
	}}
	c := &agent.ClassicAgent{Model: m, Tools: toolbox(t, weatherTool(0))}
	tr, err = c.Run(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	st := tr.Steps[0]
	if len(st.Calls) != 2 || st.Calls[1].Tool != "weather.get-weather" || st.Calls[0].Tool != agent.RunCodeID || !strings.Contains(st.Calls[0].Error, "latitude out of range") ||
		st.Calls[1].Error != "latitude out of range" {
		t.Fatalf("calls = %+v", st.Calls)
	}
	if tc := st.ToolCalls[0]; !tc.Error || !strings.HasPrefix(tc.Result, "Error: Execution failed after") {
		t.Fatalf("run_code as the model saw it = %+v", tc)
	}
}

// Item 4: the policy denies with a message the code sees as an error; an
// approval that denies is the same; an approval that allows lets the call
// run, after the person answered.
func TestPolicy_ApprovalDenies(t *testing.T) {
	var asked []string
	answers := make(chan agent.Decision, 2)
	policy := &agent.Policy{
		Check: func(ctx context.Context, c agent.CallRequest) agent.Decision {
			if strings.Contains(string(c.Input), `"latitude":66`) {
				return agent.Decision{Action: agent.Deny, Message: "the arctic is off limits"}
			}
			return agent.Decision{Action: agent.Ask}
		},
		Approve: func(ctx context.Context, c agent.CallRequest) agent.Decision {
			asked = append(asked, string(c.Input))
			select {
			case d := <-answers:
				return d
			case <-ctx.Done():
				return agent.Decision{Action: agent.Deny}
			}
		},
	}
	answers <- agent.Decision{Action: agent.Deny, Message: "not today"}
	answers <- agent.Decision{Action: agent.Allow}
	it := agent.NewInterpreter(agent.Config{Policy: policy})
	e := execute(t, it, `const out = [];
for (const lat of [66, 10, 20]) {
  try { out.push(weatherGetWeather({ latitude: lat, longitude: 0 }).temperature) } catch (err) { out.push(err.message) }
}
out`, agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))})
	wantOK(t, e)
	want := []any{`the call of tool "weather.get-weather" was denied: the arctic is off limits`,
		`the call of tool "weather.get-weather" was denied: not today`, 12.0}
	got, _ := e.Result.([]any)
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("result = %#v", e.Result)
	}
	if len(asked) != 2 || len(e.Calls) != 3 || !e.Calls[0].Denied || !e.Calls[1].Denied || e.Calls[2].Denied {
		t.Fatalf("asked %v, calls %+v", asked, e.Calls)
	}
	// Ask with no one to approve: denied.
	it = agent.NewInterpreter(agent.Config{Policy: &agent.Policy{Check: func(context.Context, agent.CallRequest) agent.Decision {
		return agent.Decision{Action: agent.Ask}
	}}})
	e = execute(t, it, `weatherGetWeather({ latitude: 1, longitude: 0 })`, agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))})
	if !strings.Contains(e.Error, "denied: no one can approve it") {
		t.Fatalf("error = %q", e.Error)
	}
}

// Item 4: a per-tool timeout ends a call whose handler ignores its
// context; the code sees the timeout as an error.
func TestPolicy_ToolTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := agent.Tool{ID: "slow.stuck", Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-release // ignores ctx
		return 1, nil
	}}
	it := agent.NewInterpreter(agent.Config{Policy: &agent.Policy{Timeouts: map[string]time.Duration{"slow.stuck": 20 * time.Millisecond}}})
	e := execute(t, it, `let m; try { slowStuck({}) } catch (err) { m = err.message } m`, agent.ExecuteOptions{Tools: toolbox(t, stuck, weatherTool(0))})
	wantOK(t, e)
	if e.Result != `tool "slow.stuck" timed out after 20ms` || e.Calls[0].Error != e.Result {
		t.Fatalf("result %v, calls %+v", e.Result, e.Calls)
	}
}

// Item 3: `await Promise.all([...])` over slow tools runs them at once, as
// parallel() does: each of three calls waits until all three are in
// flight, which a sequential run never reaches (it would time out).
func TestPromiseAll_Concurrent(t *testing.T) {
	for _, code := range []string{
		`const r = await Promise.all([syncBarrier({}), syncBarrier({}), syncBarrier({})]); r.join(",")`,
		`(await Promise.all([1, 2, 3].map(i => syncBarrier({ i })))).join(",")`,
		`const [a, b, c] = await Promise.allSettled([syncBarrier({}), syncBarrier({}), syncBarrier({})]); [a.value, b.value, c.value].join(",")`,
	} {
		barrier := barrierTool(3, "in")
		it := agent.NewInterpreter(agent.Config{Timeout: 20 * time.Second})
		e := execute(t, it, code, agent.ExecuteOptions{Tools: toolbox(t, barrier)})
		wantOK(t, e)
		if e.Result != "in,in,in" || len(e.Calls) != 3 {
			t.Fatalf("%s: result %v, calls %d", code, e.Result, len(e.Calls))
		}
	}
	// Without await a tool still returns its value, and awaiting a value
	// works too; an awaited call's error is thrown at the await.
	it := agent.NewInterpreter(agent.Config{})
	tb := toolbox(t, weatherTool(0))
	e := execute(t, it, `const a = weatherGetWeather({ latitude: 10, longitude: 0 }).temperature;
const b = (await weatherGetWeather({ latitude: 20, longitude: 0 })).temperature;
const [c] = await Promise.all([llm === undefined ? 0 : weatherGetWeather({ latitude: 30, longitude: 0 })]);
[a, b, c.temperature]`, agent.ExecuteOptions{Tools: tb})
	wantOK(t, e)
	if r, _ := e.Result.([]any); len(r) != 3 || r[0] != 11.0 || r[1] != 12.0 || r[2] != 13.0 {
		t.Fatalf("result = %#v", e.Result)
	}
	e = execute(t, it, "const x = 1;\nconst w = await weatherGetWeather({ latitude: 100, longitude: 0 });", agent.ExecuteOptions{Tools: tb})
	if e.Error != "Error: latitude out of range" {
		t.Fatalf("error = %+v", e)
	}
}

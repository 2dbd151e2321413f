package agent_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// scripted is a chat server that replays replies in order.
type scripted struct {
	*chatServer
}

func newScripted(t *testing.T, replies ...reply) *scripted {
	var mu sync.Mutex
	return &scripted{newChatServer(t, func(map[string]any) reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return reply{text: "the script has no more replies", status: http.StatusBadRequest}
		}
		r := replies[0]
		replies = replies[1:]
		return r
	})}
}

func (s *scripted) model(retries int) *agent.OpenAI {
	return agent.NewOpenAI(agent.OpenAIConfig{APIKey: "k", BaseURL: s.URL + "/v1", Model: "m", MaxRetries: retries})
}

// lastUser is the content of the last user or tool message of request i.
func (s *scripted) lastMessage(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := s.requests[i]["messages"].([]any)
	return fmt.Sprint(msgs[len(msgs)-1].(map[string]any)["content"])
}

func codeAgent(s *scripted, tools *agent.Toolbox) *agent.CodeAgent {
	return &agent.CodeAgent{Model: s.model(-1), Tools: tools, MaxSteps: 4,
		Executor: airlock.ExecutorOptions{Timeout: 2 * time.Second}}
}

func TestCodeAgent_TwoSteps(t *testing.T) {
	s := newScripted(t,
		reply{text: "Thought: I will look up the weather first.\n```js\nconst w = weatherGetWeather({ latitude: 50, longitude: 0 });\nconsole.log(w.temperature);\n```"},
		reply{text: "Thought: Now I can answer.\n```javascript\nfinal_answer(`It is ${w.temperature}°C and ${w.description}.`)\n```"},
	)
	var steps []agent.Step
	a := codeAgent(s, toolbox(t, weatherTool(0)))
	a.OnStep = func(st agent.Step) { steps = append(steps, st) }
	tr, err := a.Run(context.Background(), "What is the weather at 50N?")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != agent.OutcomeFinalAnswer || tr.FinalAnswer != "It is 15°C and cloudy." || len(tr.Steps) != 2 || len(steps) != 2 {
		t.Fatalf("transcript = %+v", tr)
	}
	if obs := s.lastMessage(1); obs != "Observation:\nExecution logs:\n15\nLast output from code snippet:\nundefined" {
		t.Fatalf("observation = %q", obs)
	}
	if tr.Usage.TotalTokens != 30 || tr.Steps[0].Code != "const w = weatherGetWeather({ latitude: 50, longitude: 0 });\nconsole.log(w.temperature);" {
		t.Fatalf("usage %+v code %q", tr.Usage, tr.Steps[0].Code)
	}
	// The system prompt is Appendix D's, with the tool declared.
	sys := s.requests[0]["messages"].([]any)[0].(map[string]any)["content"].(string)
	if !strings.Contains(sys, "Thought, Code, and Observation") || !strings.Contains(sys, "function weatherGetWeather(input: {") {
		t.Fatalf("system prompt:\n%s", sys)
	}
}

func TestCodeAgent_ErrorThenFix(t *testing.T) {
	s := newScripted(t,
		reply{text: "```js\nconst rows = [1, 2, 3];\nconsole.log('sum');\nconst total = rows.reduce((a, b) => a + b) + missing;\n```"},
		reply{text: "```js\nfinal_answer(rows.reduce((a, b) => a + b))\n```"},
	)
	tr, err := codeAgent(s, nil).Run(context.Background(), "Sum the rows")
	if err != nil {
		t.Fatal(err)
	}
	if tr.FinalAnswer != 6.0 || tr.Steps[0].Error == "" {
		t.Fatalf("transcript = %+v", tr)
	}
	obs := s.lastMessage(1)
	for _, want := range []string{"Execution logs:\nsum\n", "ERR_RUNTIME_EXCEPTION", "missing is not defined", "at line 3, column", "const total = rows.reduce((a, b) => a + b) + missing;"} {
		if !strings.Contains(obs, want) {
			t.Errorf("observation lacks %q:\n%s", want, obs)
		}
	}
}

func TestCodeAgent_MaxSteps(t *testing.T) {
	s := newScripted(t,
		reply{text: "```js\nconsole.log(1)\n```"}, reply{text: "```js\nconsole.log(2)\n```"},
		reply{text: "```js\nconsole.log(3)\n```"}, reply{text: "```js\nconsole.log(4)\n```"},
	)
	tr, err := codeAgent(s, nil).Run(context.Background(), "never ends")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != agent.OutcomeMaxSteps || len(tr.Steps) != 4 || tr.Error != "no final answer after 4 steps" || tr.FinalAnswer != nil {
		t.Fatalf("transcript = %+v", tr)
	}
}

func TestCodeAgent_MalformedOutput(t *testing.T) {
	s := newScripted(t,
		reply{text: "I think the answer is 42."},
		reply{text: "Thought: right, code.\n```\nfinal_answer(42)\n```"},
	)
	tr, err := codeAgent(s, nil).Run(context.Background(), "answer")
	if err != nil {
		t.Fatal(err)
	}
	if tr.FinalAnswer != 42.0 || tr.Steps[0].Error != "no code block in the reply" {
		t.Fatalf("transcript = %+v", tr)
	}
	if obs := s.lastMessage(1); !strings.Contains(obs, "no code block") || !strings.Contains(obs, "```js") {
		t.Fatalf("observation = %q", obs)
	}
}

func TestCodeAgent_LLMErrorRetried(t *testing.T) {
	s := newScripted(t, reply{status: 503}, reply{text: "```js\nfinal_answer('ok')\n```"})
	a := codeAgent(s, nil)
	a.Model = s.model(2)
	tr, err := a.Run(context.Background(), "x")
	if err != nil || tr.FinalAnswer != "ok" || len(s.requests) != 2 {
		t.Fatalf("transcript %+v, %v, %d requests", tr, err, len(s.requests))
	}
	// Without retries the failure ends the run, with what it has.
	s = newScripted(t, reply{status: 500})
	tr, err = codeAgent(s, nil).Run(context.Background(), "x")
	if err == nil || tr.Outcome != agent.OutcomeError || !strings.Contains(tr.Error, "500") {
		t.Fatalf("transcript %+v, %v", tr, err)
	}
}

// A step that times out leaves the sandbox dirty: the loop resets it and
// says so.
func TestCodeAgent_TimeoutResets(t *testing.T) {
	s := newScripted(t,
		reply{text: "```js\nconst keep = 1;\nwhile (true) {}\n```"},
		reply{text: "```js\nfinal_answer(typeof keep)\n```"},
	)
	a := codeAgent(s, nil)
	a.Executor.Timeout = 100 * time.Millisecond
	a.Executor.MaxOperations = 1 << 40
	tr, err := a.Run(context.Background(), "x")
	if err != nil || tr.FinalAnswer != "undefined" {
		t.Fatalf("transcript %+v, %v", tr, err)
	}
	if obs := s.lastMessage(1); !strings.Contains(obs, "ERR_EXEC_TIMEOUT") || !strings.Contains(obs, "reset") {
		t.Fatalf("observation = %q", obs)
	}
}

func TestExtractCode(t *testing.T) {
	for reply, want := range map[string]string{
		"Thought: x\n```js\na()\n```":                    "a()",
		"```javascript\nb()\n```\ntext\n```ts\nc()\n```": "b()\n\nc()",
		"```  \nd()\n```":                                "d()",
		"<code>e()</code>":                               "e()",
		"```python\nprint(1)\n```":                       "",
		"no code":                                        "",
		"```js\n\n```":                                   "",
	} {
		got, ok := agent.ExtractCode(reply)
		if got != want || ok != (want != "") {
			t.Errorf("ExtractCode(%q) = %q, %v; want %q", reply, got, ok, want)
		}
	}
}

func TestClassicAgent(t *testing.T) {
	s := newScripted(t,
		reply{calls: [][2]string{{"weatherGetWeather", `{"latitude": 10, "longitude": 0}`}}},
		reply{calls: [][2]string{{"run_code", `{"code": "parallel([20, 30].map(l => ({ tool: 'weather.get-weather', input: { latitude: l, longitude: 0 } }))).map(r => r.temperature)"}`},
			{"nope", `{}`}}},
		reply{text: "It is 11, 12 and 13 degrees."},
	)
	a := &agent.ClassicAgent{Model: s.model(-1), Tools: toolbox(t, weatherTool(0)), MaxSteps: 5}
	tr, err := a.Run(context.Background(), "Weather at 10, 20, 30 N?")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != agent.OutcomeFinalAnswer || tr.FinalAnswer != "It is 11, 12 and 13 degrees." || len(tr.Steps) != 3 {
		t.Fatalf("transcript = %+v", tr)
	}
	if got := tr.Steps[0].ToolCalls[0].Result; got != `{"temperature":11,"description":"cloudy"}` {
		t.Fatalf("plain tool result = %q", got)
	}
	run := tr.Steps[1].ToolCalls[0]
	if !strings.Contains(run.Result, "=== Result ===\n[ 12, 13 ]\n") || tr.Steps[1].Code == "" {
		t.Fatalf("run_code result = %q", run.Result)
	}
	if bad := tr.Steps[1].ToolCalls[1]; !bad.Error || bad.Result != `Error: Tool "nope" not found` {
		t.Fatalf("unknown tool = %+v", bad)
	}
	// The tools offered: the conversation's and run_code, by API name.
	var names []string
	for _, tl := range s.requests[0]["tools"].([]any) {
		names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "run_code,weatherGetWeather" {
		t.Fatalf("tools = %v", names)
	}
	// The tool results went back with their call IDs.
	msgs := s.requests[2]["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool" || last["tool_call_id"] != "call_1" {
		t.Fatalf("last message = %v", last)
	}
}

// The context cancels a model call in flight, and the run ends with what it has.
func TestCodeAgent_Cancelled(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server sees the client go
		<-r.Context().Done()
	}))
	defer hang.Close()
	a := &agent.CodeAgent{Model: agent.NewOpenAI(agent.OpenAIConfig{APIKey: "k", BaseURL: hang.URL + "/v1", MaxRetries: -1})}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	tr, err := a.Run(ctx, "x")
	if err == nil || tr.Outcome != agent.OutcomeError || time.Since(start) > 30*time.Second { // the server never answers
		t.Fatalf("transcript %+v, %v after %v", tr, err, time.Since(start))
	}
}

// Each step is a log/slog record too.
func TestCodeAgent_Slog(t *testing.T) {
	s := newScripted(t, reply{text: "```js\nfinal_answer(1)\n```"})
	var buf strings.Builder
	a := codeAgent(s, nil)
	a.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := a.Run(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, `msg="agent step" mode=code step=1`) || !strings.Contains(got, "final=true") || !strings.Contains(got, "tokens=15") {
		t.Fatalf("log = %q", got)
	}
}

// sessions counts the goroutines that own an executor's sandbox.
func sessions() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "airlock/internal/session.Start.func")
}

// After a run, including one that replaced a dirty executor, no sandbox is
// left running.
func TestCodeAgent_NoLeftoverExecutors(t *testing.T) {
	s := newScripted(t,
		reply{text: "```js\nwhile (true) {}\n```"},
		reply{text: "```js\nwhile (true) {}\n```"},
		reply{text: "```js\nfinal_answer(1)\n```"},
	)
	a := codeAgent(s, nil)
	a.Executor.Timeout = 50 * time.Millisecond
	a.Executor.MaxOperations = 1 << 40
	if tr, err := a.Run(context.Background(), "x"); err != nil || tr.FinalAnswer != 1.0 {
		t.Fatalf("%+v, %v", tr, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for sessions() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := sessions(); n > 0 {
		t.Fatalf("%d executor sandboxes left running", n)
	}
}

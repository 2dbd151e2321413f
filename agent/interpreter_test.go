package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/js"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// The seed's transparent-style example: no await, the call returns the value.
func TestSeedExample_TransparentStyle(t *testing.T) {
	chat := newChatServer(t, text("Cloudy and mild in Copenhagen."))
	it := agent.NewInterpreter(agent.Config{Completer: chat.completer()})
	e := execute(t, it, `
// No await needed — the function call suspends internally
const weather = weatherGetWeather({ latitude: 55.67, longitude: 12.56 });
const summary = llm("Summarize: " + JSON.stringify(weather));
output(summary);
done();`, agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))})
	wantOK(t, e)
	if e.Output != "Cloudy and mild in Copenhagen." || !e.Done {
		t.Fatalf("output %q done %v", e.Output, e.Done)
	}
	msgs := chat.last()["messages"].([]any)
	if got := msgs[len(msgs)-1].(map[string]any)["content"]; got != `Summarize: {"temperature":15.567,"description":"cloudy"}` {
		t.Fatalf("prompt = %v", got)
	}
}

// The await style of the core and the executor works with the same tools.
func TestAwaitStyle(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `
const a = await weatherGetWeather({ latitude: 0, longitude: 0 });
const [b, c] = await Promise.all([weatherGetWeather({ latitude: 10, longitude: 0 }), todoCreate({ title: "x" })]);
export default [a.temperature, b.temperature, c.title];`, agent.ExecuteOptions{Tools: toolbox(t, append(todoTools(), weatherTool(0))...)})
	wantOK(t, e)
	if !reflect.DeepEqual(e.Result, []any{10.0, 11.0, "x"}) {
		t.Fatalf("result = %#v", e.Result)
	}
}

// The seed's classic-mode example of interpreter.run-code: the value of the
// last expression is the result.
func TestSeedExample_ParallelWeather(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `// LLM calls interpreter.run-code with this code:
const cities = [
  { lat: 55.67, lon: 12.56 },  // Copenhagen
  { lat: 48.85, lon: 2.35 },   // Paris
  { lat: 51.50, lon: -0.12 },  // London
];

const results = parallel(cities.map(c => ({
  tool: 'weather.get-weather',
  input: { latitude: c.lat, longitude: c.lon }
})));

results.map((r, i) => `+"`${['Copenhagen', 'Paris', 'London'][i]}: ${r.temperature}°C`"+`).join('\n');
`, agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))})
	wantOK(t, e)
	if e.Result != "Copenhagen: 15.567°C\nParis: 14.885°C\nLondon: 15.15°C" {
		t.Fatalf("result = %q", e.Result)
	}
}

// Seed 002, error handling: parallel().
func TestParallel_ErrorTable(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	tools := agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))}
	// An individual failure fills its slot; the others are unaffected.
	// An unknown tool ID fills its slot with Tool "x" not found.
	e := execute(t, it, `parallel([
		{ tool: "weather.get-weather", input: { latitude: 10, longitude: 0 } },
		{ tool: "weather.get-weather", input: { latitude: 100, longitude: 0 } },
		{ tool: "x", input: {} },
		{ tool: "weather.get-weather", input: { latitude: "north" } },
	])`, tools)
	wantOK(t, e)
	got := e.Result.([]any)
	if got[0].(map[string]any)["temperature"] != 11.0 ||
		got[1].(map[string]any)["error"] != "latitude out of range" ||
		got[2].(map[string]any)["error"] != `Tool "x" not found` ||
		!strings.HasPrefix(got[3].(map[string]any)["error"].(string), `invalid input for tool "weather.get-weather"`) {
		t.Fatalf("results = %#v", got)
	}
	// An invalid argument throws the seed's message.
	for _, arg := range []string{`"weather"`, `{ tool: "x" }`, `[{ input: {} }]`, `[1]`, ``, `null`} {
		e = execute(t, it, `parallel(`+arg+`)`, tools)
		wantError(t, e, "Error: parallel() expects an array of {tool, input} objects")
	}
	// The error can be caught.
	e = execute(t, it, `let m; try { parallel(42) } catch (err) { m = err.message } m`, tools)
	wantOK(t, e)
	if e.Result != "parallel() expects an array of {tool, input} objects" {
		t.Fatalf("result = %v", e.Result)
	}
	e = execute(t, it, `parallel([])`, tools)
	wantOK(t, e)
	if !reflect.DeepEqual(e.Result, []any{}) {
		t.Fatalf("result = %#v", e.Result)
	}
}

// parallel() runs its calls at the same time.
// parallel() runs its calls at once: twenty calls of a barrier that lets
// each return only when all twenty are in flight (a sequential run would
// wait for the execution's timeout instead).
func TestParallel_Concurrent(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `parallel(Array.from({ length: 20 }, () => ({ tool: "sync.barrier", input: {} }))).filter(r => r === "in").length`,
		agent.ExecuteOptions{Tools: toolbox(t, barrierTool(20, "in")), Timeout: time.Minute})
	wantOK(t, e)
	if e.Result != 20.0 {
		t.Fatalf("result = %v", e.Result)
	}
}

func TestSchemaViolation(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	opts := agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))}
	e := execute(t, it, `weatherGetWeather({ latitude: "55.67" })`, opts)
	if !strings.HasPrefix(e.Error, `Error: invalid input for tool "weather.get-weather": `) ||
		!strings.Contains(e.Error, `toolSchema("weather.get-weather")`) || e.Line != 1 {
		t.Fatalf("error = %q line %d", e.Error, e.Line)
	}
	// The handler did not run: the error is the schema's, and it names what is wrong.
	if !strings.Contains(e.Error, "latitude") && !strings.Contains(e.Error, "longitude") {
		t.Fatalf("the error does not say what is wrong: %q", e.Error)
	}
	e = execute(t, it, `weatherGetWeather({ latitude: 1, longitude: 2, extra: true })`, opts)
	if !strings.Contains(e.Error, "invalid input") {
		t.Fatalf("an unknown property passed: %q", e.Error)
	}
}

func TestToolSchema(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	opts := agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))}
	e := execute(t, it, `const s = toolSchema("weather.get-weather"); [s.type, s.required, s.properties.latitude.description]`, opts)
	wantOK(t, e)
	if !reflect.DeepEqual(e.Result, []any{"object", []any{"latitude", "longitude"}, "degrees north"}) {
		t.Fatalf("result = %#v", e.Result)
	}
	e = execute(t, it, `toolSchema("nope")`, opts)
	wantError(t, e, `Error: Tool "nope" not found`)
}

// Seed 002, error handling: llm() and llmJson().
func TestLLM(t *testing.T) {
	var fail bool
	chat := newChatServer(t, func(req map[string]any) reply {
		if fail {
			return reply{text: "the model is down", status: http.StatusInternalServerError}
		}
		if rf, _ := req["response_format"].(map[string]any); rf["type"] == "json_object" {
			msgs := req["messages"].([]any)
			if strings.Contains(msgs[len(msgs)-1].(map[string]any)["content"].(string), "broken") {
				return reply{text: "not { json"}
			}
			return reply{text: `{"city": "Oslo", "temp": 4}`}
		}
		return reply{text: "plain text"}
	})
	it := agent.NewInterpreter(agent.Config{Completer: chat.completer()})
	e := execute(t, it, `[llm("hi"), llmJson("weather as json"), llmJson("broken please")]`, agent.ExecuteOptions{})
	wantOK(t, e)
	want := []any{"plain text", map[string]any{"city": "Oslo", "temp": 4.0}, "not { json"}
	if !reflect.DeepEqual(e.Result, want) {
		t.Fatalf("result = %#v", e.Result)
	}
	if rf := chat.last()["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Fatalf("response_format = %v", rf)
	}
	// An API failure propagates to the sandbox, where it can be caught.
	fail = true
	e = execute(t, it, `llm("hi")`, agent.ExecuteOptions{})
	if !strings.HasPrefix(e.Error, "Error: llm() failed: ") || !strings.Contains(e.Error, "500") {
		t.Fatalf("error = %q", e.Error)
	}
	e = execute(t, it, `let m; try { llmJson("x") } catch (err) { m = "caught: " + err.message.slice(0, 16) } m`, agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != "caught: llmJson() failed" {
		t.Fatalf("result = %v", e.Result)
	}
	// Without a completer, a clear error.
	e = execute(t, agent.NewInterpreter(agent.Config{}), `llm("hi")`, agent.ExecuteOptions{})
	wantError(t, e, "Error: llm() is not available: no language model is configured")
	e = execute(t, it, `llm(42)`, agent.ExecuteOptions{})
	wantError(t, e, "Error: llm() expects a prompt string")
}

// The seed's complete() example, and the data it keeps for recall().
func TestComplete(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	state := agent.NewState()
	opts := agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0)), State: state}
	e := execute(t, it, `const weather = weatherGetWeather({ latitude: 55.67, longitude: 12.56 });
complete({
  response: `+"`The weather is ${weather.description} at ${weather.temperature}°C.`"+`,
  data: weather,
  followUp: "Would you like the forecast for tomorrow?"
});`, opts)
	wantOK(t, e)
	if e.Output != "The weather is cloudy at 15.567°C.\n\nWould you like the forecast for tomorrow?" || !e.Done {
		t.Fatalf("output %q done %v", e.Output, e.Done)
	}
	e = execute(t, it, `recall("_lastData").temperature`, opts)
	wantOK(t, e)
	if e.Result != 15.567 {
		t.Fatalf("recalled %v", e.Result)
	}
	e = execute(t, it, `complete({ answer: "no" })`, opts)
	wantError(t, e, "Error: complete() expects {response: string, data?, followUp?: string}")
	e = execute(t, it, `complete({ response: "only" }); recall("x")`, opts)
	wantOK(t, e)
	if e.Output != "only" || !e.Done {
		t.Fatalf("output %q", e.Output)
	}
}

func TestOutputLogStoreRecall(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	state := agent.NewState()
	e := execute(t, it, `console.log("one", 1); log("two", { a: 1 }); console.warn("three"); output("x", 2); output("y");
store("k", { n: 1 }); store("u");`, agent.ExecuteOptions{State: state})
	wantOK(t, e)
	var lines []string
	for _, l := range e.Logs {
		lines = append(lines, string(l.Level)+" "+l.Message())
	}
	if strings.Join(lines, "|") != `log one 1|log two { a: 1 }|warn three` || e.Output != "x 2\ny" || e.Done {
		t.Fatalf("logs %q output %q done %v", lines, e.Output, e.Done)
	}
	e = execute(t, it, `[recall("k"), recall("u"), typeof recall("missing")]`, agent.ExecuteOptions{State: state})
	wantOK(t, e)
	if !reflect.DeepEqual(e.Result, []any{map[string]any{"n": 1.0}, nil, "undefined"}) {
		t.Fatalf("result = %#v", e.Result)
	}
	// Without a shared state, nothing is remembered.
	e = execute(t, it, `typeof recall("k")`, agent.ExecuteOptions{})
	if e.Result != "undefined" {
		t.Fatalf("result = %v", e.Result)
	}
}

// Seed 002: the execution timeout, default 30 s, configurable per call.
func TestTimeout(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{Timeout: 5 * time.Second})
	e := execute(t, it, `console.log("before"); for (;;) {}`, agent.ExecuteOptions{Timeout: 150 * time.Millisecond})
	wantError(t, e, "Execution timed out after 150ms")
	if !e.Timeout || len(e.Logs) != 1 {
		t.Fatalf("timeout %v logs %v", e.Timeout, e.Logs)
	}
	b, _ := json.Marshal(e)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m["error"] != "Execution timed out after 150ms" || m["timeout"] != true {
		t.Fatalf("JSON = %s", b)
	}
	// The interpreter's timeout applies when the call sets none; a try/catch
	// cannot keep the code alive.
	it = agent.NewInterpreter(agent.Config{Timeout: 100 * time.Millisecond})
	e = execute(t, it, `try { for (;;) {} } catch { } "survived"`, agent.ExecuteOptions{})
	wantError(t, e, "Execution timed out after 100ms")
	// A tool that blocks is cancelled by the timeout.
	e = execute(t, it, `weatherGetWeather({ latitude: 1, longitude: 1 })`, agent.ExecuteOptions{Tools: toolbox(t, weatherTool(time.Hour))})
	if !e.Timeout {
		t.Fatalf("execution = %+v", e)
	}
}

func TestDefaultTimeout(t *testing.T) {
	if agent.DefaultTimeout != 30*time.Second {
		t.Fatalf("DefaultTimeout = %v", agent.DefaultTimeout)
	}
}

// Seed 002: errors carry line, column and the offending line.
func TestErrorContext(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, "const a = 1;\n\nconst x = weather.getWeather();\n", agent.ExecuteOptions{})
	if e.Error != "ReferenceError: weather is not defined" || e.Line != 3 || e.Column != 11 || e.Context != "const x = weather.getWeather();" {
		b, _ := json.Marshal(e)
		t.Fatalf("execution = %s", b)
	}
	// A syntax error.
	e = execute(t, it, "const a = 1;\n  const b = (;\n", agent.ExecuteOptions{})
	if !strings.HasPrefix(e.Error, "SyntaxError") || e.Line != 2 || e.Context != "const b = (;" || e.Column == 0 {
		b, _ := json.Marshal(e)
		t.Fatalf("execution = %s", b)
	}
	// An error in the last expression, whose value is the result: the
	// column is the user's.
	// column is the user's: where the engine places the same error in a
	// statement that is not the last expression.
	e = execute(t, it, "const o = {};\n  let v = o.missing.deeper; 1", agent.ExecuteOptions{})
	plain := e.Column - len("let v = ")
	e = execute(t, it, "const o = {};\n  o.missing.deeper", agent.ExecuteOptions{})
	if !strings.HasPrefix(e.Error, "TypeError") || e.Line != 2 || e.Column != plain || plain < 3 || e.Context != "o.missing.deeper" {
		b, _ := json.Marshal(e)
		t.Fatalf("execution = %s", b)
	}
	// A tool's failure, uncaught.
	e = execute(t, it, "\nweatherGetWeather({ latitude: 99, longitude: 0 })", agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))})
	if e.Error != "Error: latitude out of range" || e.Line != 2 || e.Context != "weatherGetWeather({ latitude: 99, longitude: 0 })" {
		b, _ := json.Marshal(e)
		t.Fatalf("execution = %s", b)
	}
}

// Seed 002: clone() — functions registered on the interpreter (by plugins)
// are there in a clone; what is registered later on either stays its own.
func TestClone(t *testing.T) {
	base := agent.NewInterpreter(agent.Config{})
	if err := base.Register("getGreeting", func(name string) string { return "hello " + name }); err != nil {
		t.Fatal(err)
	}
	if err := base.AddSourceModule("greet", `export const shout = (s) => s.toUpperCase();`); err != nil {
		t.Fatal(err)
	}
	c := base.Clone()
	e := execute(t, c, `import { shout } from "greet"; shout(getGreeting("ada"))`, agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != "HELLO ADA" {
		t.Fatalf("result = %v", e.Result)
	}
	if err := c.Register("onlyInClone", func() int { return 1 }); err != nil {
		t.Fatal(err)
	}
	if got := base.FunctionNames(); !reflect.DeepEqual(got, []string{"getGreeting"}) {
		t.Fatalf("base functions = %v", got)
	}
	e = execute(t, base, `typeof onlyInClone`, agent.ExecuteOptions{})
	if e.Result != "undefined" {
		t.Fatalf("result = %v", e.Result)
	}
	// Cloning an empty interpreter is safe and gives an empty one.
	empty := agent.NewInterpreter(agent.Config{}).Clone()
	if len(empty.FunctionNames()) != 0 || len(empty.ModuleNames()) != 0 {
		t.Fatal("the clone of an empty interpreter is not empty")
	}
	wantOK(t, execute(t, empty, `1`, agent.ExecuteOptions{}))
}

func TestRegisterRefuses(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	for _, name := range []string{"parallel", "llm", "input", "not-an-identifier", ""} {
		if err := it.Register(name, func() {}); err == nil {
			t.Errorf("Register(%q) accepted", name)
		}
	}
	for _, name := range []string{"./x", "/abs", "node:fs", "https://x", "a b", ""} {
		if err := it.AddSourceModule(name, "export default 1"); err == nil {
			t.Errorf("AddSourceModule(%q) accepted", name)
		}
	}
	// A registered function and a tool of the same name: a clear error.
	if err := it.Register("todoList", func() {}); err != nil {
		t.Fatal(err)
	}
	e := execute(t, it, `1`, agent.ExecuteOptions{Tools: toolbox(t, todoTools()...)})
	if !strings.Contains(e.Error, "todoList") {
		t.Fatalf("error = %q", e.Error)
	}
}

// Seed 002: modules code can import, Go and source; an unknown module's
// error is fed back.
func TestModules(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	if err := it.AddModule("text", airlock.Module{"slug": func(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }}); err != nil {
		t.Fatal(err)
	}
	if err := it.AddSourceModule("@acme/math", `export const sum = (xs) => xs.reduce((a, b) => a + b, 0); export default { sum };`); err != nil {
		t.Fatal(err)
	}
	if got := it.ModuleNames(); !reflect.DeepEqual(got, []string{"@acme/math", "text"}) {
		t.Fatalf("modules = %v", got)
	}
	e := execute(t, it, `import { slug } from "text";
import math from "@acme/math";
const m = await import("@acme/math");
slug("Hello World") + " " + math.sum([1, 2]) + " " + m.sum([3])`, agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != "hello-world 3 3" {
		t.Fatalf("result = %v", e.Result)
	}
	e = execute(t, it, `import _ from "lodash";
_.chunk([1], 1)`, agent.ExecuteOptions{})
	if e.Status != airlock.StatusLinkError || !strings.Contains(e.Error, "lodash") {
		b, _ := json.Marshal(e)
		t.Fatalf("execution = %s", b)
	}
}

func TestInput(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `input.rows.length + (typeof input)`, agent.ExecuteOptions{Input: map[string]any{"rows": []int{1, 2, 3}}})
	wantOK(t, e)
	if e.Result != "3object" {
		t.Fatalf("result = %v", e.Result)
	}
	e = execute(t, it, `typeof input`, agent.ExecuteOptions{})
	if e.Result != "undefined" {
		t.Fatalf("result = %v", e.Result)
	}
}

func TestResultForms(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	for code, want := range map[string]any{
		`export default 7`:                    7.0,
		`const x = 1;`:                        nil,
		`1; 2; 3`:                             3.0,
		"const f = () => 5;\nf()\n// trailer": 5.0,
		`await Promise.resolve(9)`:            9.0,
		`if (true) { 1 }`:                     1.0, // a script's completion value, as Node's REPL shows it
	} {
		e := execute(t, it, code, agent.ExecuteOptions{})
		wantOK(t, e)
		if !reflect.DeepEqual(e.Result, want) && !(want == nil && e.Result == (js.Undefined{})) {
			t.Errorf("%q: result = %#v, want %#v", code, e.Result, want)
		}
	}
	e := execute(t, it, "   \n", agent.ExecuteOptions{})
	wantError(t, e, "the code is empty")
}

func TestMemoryLimit(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{MemoryLimitBytes: 8 << 20})
	e := execute(t, it, `const a = []; for (;;) a.push("x".repeat(1000) + a.length);`, agent.ExecuteOptions{})
	if e.Status != airlock.StatusMemory || e.Error == "" {
		b, _ := json.Marshal(e)
		t.Fatalf("execution = %s", b)
	}
}

func TestCancelledContext(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	e := it.Execute(ctx, `for (;;) {}`, agent.ExecuteOptions{})
	if e.OK() || e.Timeout || e.Status != airlock.StatusTerminated {
		t.Fatalf("execution = %+v", e)
	}
}

var _ = errors.New

// NewOpenAI takes OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL from the
// environment when the config leaves them empty.
func TestOpenAI_Environment(t *testing.T) {
	var auth string
	chat := newChatServer(t, text("ok"))
	chat.Config.Handler = func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth = r.Header.Get("Authorization")
			next.ServeHTTP(w, r)
		})
	}(chat.Config.Handler)
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("OPENAI_BASE_URL", chat.URL+"/v1")
	t.Setenv("OPENAI_MODEL", "env-model")
	c := agent.NewOpenAI(agent.OpenAIConfig{MaxRetries: -1})
	resp, err := c.Complete(context.Background(), agent.CompletionRequest{Messages: []agent.Message{{Role: "user", Content: "hi"}}, MaxTokens: 5})
	if err != nil || resp.Text != "ok" || resp.Usage.TotalTokens != 15 || resp.Usage.Completions != 1 {
		t.Fatalf("%+v, %v", resp, err)
	}
	req := chat.last()
	if auth != "Bearer sk-env" || req["model"] != "env-model" || req["max_tokens"] != 5.0 || req["response_format"] != nil {
		t.Fatalf("auth %q request %v", auth, req)
	}
}

// A tool's failure inside code is an error the code can catch.
func TestToolErrorCaught(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `let msg;
try { weatherGetWeather({ latitude: 100, longitude: 0 }) } catch (err) { msg = err instanceof Error && err.message }
msg`, agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0))})
	wantOK(t, e)
	if e.Result != "latitude out of range" {
		t.Fatalf("result = %v", e.Result)
	}
}

// Hostile code against the helpers: nothing crashes the host, each gets a
// clear error.
func TestHelpers_HostileArguments(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{MaxParallel: 4})
	opts := agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0)), State: agent.NewState()}
	for code, want := range map[string]string{
		`const c = {}; c.c = c; weatherGetWeather(c)`: "TypeError",
		`weatherGetWeather(10n)`:                      "TypeError",
		`store()`:                                     "Error: store() expects a key string and a value",
		`recall({})`:                                  "Error: recall() expects a key string",
		`toolSchema()`:                                "Error: toolSchema() expects",
		`complete("text")`:                            "Error: complete() expects",
		`parallel([{ tool: 1, input: {} }])`:          "Error: parallel() expects",
		`weatherGetWeather({ get latitude() { throw new Error("getter") } })`: "Error: getter",
	} {
		e := execute(t, it, code, opts)
		if !strings.HasPrefix(e.Error, want) {
			t.Errorf("%s: error = %q, want %q…", code, e.Error, want)
		}
	}
	// Many calls through a small bound still all answer.
	e := execute(t, it, `parallel(Array.from({ length: 500 }, (_, i) => ({ tool: "weather.get-weather", input: { latitude: i % 90, longitude: 0 } }))).filter(r => r.temperature).length`, opts)
	wantOK(t, e)
	if e.Result != 500.0 {
		t.Fatalf("result = %v", e.Result)
	}
}

// The interpreter on a runtime whose sandboxes run in worker processes:
// tools, helpers and input work the same.
func TestInterpreter_WorkerRuntime(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1})
	defer rt.Close()
	it := agent.NewInterpreter(agent.Config{Runtime: rt})
	state := agent.NewState()
	e := execute(t, it, `const w = weatherGetWeather({ latitude: input.lat, longitude: 0 });
const all = parallel([{ tool: "weather.get-weather", input: { latitude: 20, longitude: 0 } }]);
store("k", 1);
log("seen", w.temperature);
complete({ response: "ok " + w.temperature + " " + all[0].temperature });
recall("k")`, agent.ExecuteOptions{Tools: toolbox(t, weatherTool(0)), Input: map[string]any{"lat": 10}, State: state})
	wantOK(t, e)
	if e.Output != "ok 11 12" || !e.Done || e.Result != 1.0 || len(e.Logs) != 1 {
		b, _ := json.Marshal(e)
		t.Fatalf("%s", b)
	}
	e = execute(t, it, "\nnull.f()", agent.ExecuteOptions{})
	if e.Line != 2 || e.Context != "null.f()" {
		t.Fatalf("%+v", e)
	}
}

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

// oneModelCases are issue 19 item 1's sandbox rules, each a piece of code
// and the value it must give (as airlock.Inspect shows it) in every way
// code runs: Interpreter.Execute, run_code, the code-mode loop and the
// CodeAgent. The weather tool gives latitude+1 as its temperature; the
// barrier's three calls return only if they are in flight at once.
var oneModelCases = []struct{ name, code, want string }{
	{"plain script", `x = 5; x`, "5"},
	{"plain script, sloppy this", `(function () { return this === globalThis })()`, "true"},
	{"object literal", "const a = 1, b = 2;\n({a, b})", "{ a: 1, b: 2 }"},
	{"async IIFE", `(async () => 5)()`, "5"},
	{"top-level await", `const v = await Promise.resolve(4); v * 2`, "8"},
	{"TypeScript", "interface P { n: number }\nconst p: P = { n: 3 };\np.n as number", "3"},
	{"tool without await", `weatherGetWeather({ latitude: 10, longitude: 0 }).temperature`, "11"},
	{"tool with await", `(await weatherGetWeather({ latitude: 20, longitude: 0 })).temperature`, "12"},
	{"Promise.all is concurrent", `(await Promise.all([1, 2, 3].map(i => syncBarrier({ i })))).join(",")`, "in,in,in"},
	{"Promise.all in TypeScript", "const r: string[] = await Promise.all([1, 2, 3].map((i: number) => syncBarrier({ i })));\nr.join(\",\")", "in,in,in"},
	{"the helpers", `[parallel, llm, llmJson, complete, done, output, log, store, recall, toolSchema, double].map(f => typeof f).join()`,
		strings.Repeat("function,", 10) + "function"},
	{"parallel", `parallel([{ tool: "weather.get-weather", input: { latitude: 30, longitude: 0 } }])[0].temperature`, "13"},
	{"a registered function", `double(21)`, "42"},
	{"store and recall", `store("k", { n: 1 }); recall("k").n`, "1"},
}

// oneModelInterpreter has a registered function, double, as a plugin
// (the artifacts') registers its functions.
func oneModelInterpreter(t *testing.T) *agent.Interpreter {
	it := agent.NewInterpreter(agent.Config{Timeout: 20 * time.Second})
	if err := it.Register("double", func(x float64) float64 { return 2 * x }); err != nil {
		t.Fatal(err)
	}
	return it
}

func oneModelTools(t *testing.T) *agent.Toolbox {
	return toolbox(t, weatherTool(0), barrierTool(3, "in"))
}

// Item 1: the CodeAgent's steps follow the same rules, with the same
// helpers (and the functions registered on its Interpreter).
func TestOneModel_CodeAgent(t *testing.T) {
	for _, c := range oneModelCases {
		t.Run(c.name, func(t *testing.T) {
			m := &fakeModel{script: []agent.Completion{codeReply(c.code), codeReply(`final_answer("ok")`)}}
			a := &agent.CodeAgent{Model: m, Tools: oneModelTools(t), Interpreter: oneModelInterpreter(t),
				Executor: airlock.ExecutorOptions{Timeout: 20 * time.Second}}
			tr, err := a.Run(context.Background(), "t")
			if err != nil || tr.FinalAnswer != "ok" || len(tr.Steps) != 2 {
				t.Fatalf("%+v, %v", tr, err)
			}
			if obs := tr.Steps[0].Observation; !strings.HasSuffix(obs, "Last output from code snippet:\n"+c.want) {
				t.Errorf("observation:\n%s", obs)
			}
		})
	}
}

// Item 1: complete() and done() end a CodeAgent run as final_answer does,
// with the response (and the follow-up) as the answer; output() text is
// part of it.
func TestOneModel_CodeAgentComplete(t *testing.T) {
	for code, want := range map[string]string{
		`complete({ response: "It is warm.", data: { t: 11 } })`:                                                       "It is warm.",
		`complete({ response: "It is warm.", followUp: "More?" })`:                                                     "It is warm.\n\nMore?",
		`output("one"); output("two"); done()`:                                                                         "one\ntwo",
		`const w = weatherGetWeather({ latitude: 10, longitude: 0 }); complete({ response: "t=" + w.temperature }); 5`: "t=11",
	} {
		m := &fakeModel{script: []agent.Completion{codeReply(code)}}
		a := &agent.CodeAgent{Model: m, Tools: oneModelTools(t), Executor: airlock.ExecutorOptions{Timeout: 5 * time.Second}}
		tr, err := a.Run(context.Background(), "t")
		if err != nil || tr.Outcome != agent.OutcomeFinalAnswer || tr.FinalAnswer != want {
			t.Errorf("%s: %+v, %v", code, tr, err)
		}
	}
	// The CodeAgent's prompt names them.
	a := &agent.CodeAgent{Tools: oneModelTools(t)}
	sys, err := a.SystemPrompt()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"complete({ response", "done()", "output(text)", "toolSchema(", "log("} {
		if !strings.Contains(sys, s) {
			t.Errorf("the prompt lacks %q", s)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Item 9 in the CodeAgent too: a thrown value that is not an Error gets
// the line of its throw, in JavaScript and in TypeScript.
func TestOneModel_CodeAgentThrowLine(t *testing.T) {
	for code, want := range map[string]string{
		"const a = 1;\nif (a) throw 'a string';":                     "at line 2, column 14: if (a) throw 'a string';",
		"type T = number;\n\nconst a: T = 1;\nif (a) throw 'in TS';": "at line 4, column 14: if (a) throw 'in TS';",
	} {
		m := &fakeModel{script: []agent.Completion{codeReply(code), codeReply(`final_answer(1)`)}}
		a := &agent.CodeAgent{Model: m, Tools: oneModelTools(t), Executor: airlock.ExecutorOptions{Timeout: 5 * time.Second}}
		tr, err := a.Run(context.Background(), "t")
		if err != nil || len(tr.Steps) != 2 || !strings.Contains(tr.Steps[0].Observation, want) {
			t.Errorf("%q: %+v, %v", code, tr.Steps, err)
		}
	}
}

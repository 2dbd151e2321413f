package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
	"github.com/airlockrun/airlock/internal/childtest"
)

// cyclic is code whose value holds cycles (a self-reference and a tree with
// parent links) and numbers JSON lacks.
const cyclic = `const o = { n: NaN, inf: -Infinity, m: new Map([["k", 1]]), s: new Set([1]), d: new Date(0) };
o.self = o;
const root = { kids: [] };
root.kids.push({ parent: root });
o.tree = root;
`

const cyclicText = "<ref *1> { d: 1970-01-01T00:00:00.000Z, inf: -Infinity, m: Map(1) { 'k' => 1 }, n: NaN, s: Set(1) { 1 }, self: [Circular *1], tree: <ref *2> { kids: [ { parent: [Circular *2] } ] } }"

// TestCyclicResults: a value with a cycle crashed the host in every place
// that showed it to the model (run_code's text, FormatExecution, a
// CodeAgent's observation and final answer): they fell back to fmt.Sprint,
// which recursed without end ("fatal error: stack overflow"). NaN made
// json.Marshal of an Execution fail. Now each shows the value as
// airlock.Inspect does, and the JSON has null where JSON has no value.
func TestCyclicResults(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	it := agent.NewInterpreter(agent.Config{})
	e := it.Execute(context.Background(), cyclic+"console.log(o);\no", agent.ExecuteOptions{})
	wantOK(t, e)
	if got := agent.FormatExecution(e); !strings.Contains(got, "=== Result ===\n"+cyclicText+"\n") ||
		!strings.Contains(got, "=== Console Output ===\n"+cyclicText) {
		t.Errorf("FormatExecution:\n%s", got)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatalf("json.Marshal(Execution): %v", err)
	}
	if !strings.Contains(string(b), `"n":null`) || !strings.Contains(string(b), `"self":null`) {
		t.Errorf("Execution JSON: %s", b)
	}
	if _, err := json.Marshal(*e); err != nil {
		t.Fatalf("json.Marshal(Execution value): %v", err)
	}

	tb := toolbox(t)
	if err := tb.Add(agent.RunCodeTool(it, tb, nil)); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"code": cyclic + "o"})
	if got := runCode(t, tb, string(in)); !strings.Contains(got, cyclicText) {
		t.Errorf("run_code:\n%s", got)
	}

	s := newScripted(t,
		reply{text: "```js\n" + cyclic + "console.log(o);\nreturn o\n```"},
		reply{text: "```js\nfinal_answer(o)\n```"})
	tr, err := codeAgent(s, toolbox(t)).Run(context.Background(), "cycles")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != agent.OutcomeFinalAnswer {
		t.Fatalf("transcript: %+v", tr)
	}
	if got := tr.Steps[0].Observation; got != "Execution logs:\n"+cyclicText+"\nLast output from code snippet:\n"+cyclicText {
		t.Errorf("observation:\n%s", got)
	}
	if got := airlock.Inspect(tr.FinalAnswer); got != cyclicText {
		t.Errorf("final answer: %s", got)
	}
	if b, err := json.Marshal(tr); err != nil || !strings.Contains(string(b), `"finalAnswer":{`) {
		t.Errorf("Transcript JSON: %s, %v", b, err)
	}
}

// TestOutputBound: one console.log of 2 MB sent 2 MB into the model's
// context through run_code and a CodeAgent's observation. Now they carry at
// most MaxOutput characters, the head and the tail with a marker that says
// how much was cut.
func TestOutputBound(t *testing.T) {
	const code = "console.log('FIRST' + 'x'.repeat(2_000_000) + 'LAST'); 'the value'"
	check := func(name, got string, max int) {
		t.Helper()
		if n := utf8.RuneCountInString(got); n > max {
			t.Errorf("%s: %d characters, bound %d", name, n, max)
		}
		if !strings.Contains(got, " characters] ...\n") || !strings.Contains(got, "LAST") {
			t.Errorf("%s: no marker or no tail:\n%.300s", name, got)
		}
	}
	for _, max := range []int{0, 5000} {
		want := max
		if max == 0 {
			want = agent.DefaultMaxOutput
		}
		it := agent.NewInterpreter(agent.Config{MaxOutput: max})
		tb := toolbox(t)
		if err := tb.Add(agent.RunCodeTool(it, tb, nil)); err != nil {
			t.Fatal(err)
		}
		in, _ := json.Marshal(map[string]string{"code": code})
		got := runCode(t, tb, string(in))
		check("run_code", got, want)
		if !strings.HasPrefix(got, "Execution completed successfully") || !strings.Contains(got, "=== Result ===\nthe value\n") {
			t.Errorf("run_code lost its head:\n%.300s", got)
		}

		s := newScripted(t, reply{text: "```js\nconsole.log('FIRST' + 'x'.repeat(2_000_000) + 'LAST');\n```"}, reply{text: "```js\nfinal_answer(1)\n```"})
		a := codeAgent(s, toolbox(t))
		a.MaxOutput = max
		a.Executor.MaxLogBytes = 4 << 20
		a.Executor.Timeout = 2 * time.Minute // the bound, not the time, is under test (-race is slow)
		tr, err := a.Run(context.Background(), "flood")
		if err != nil {
			t.Fatal(err)
		}
		check("observation", tr.Steps[0].Observation, want)
		if !strings.HasPrefix(tr.Steps[0].Observation, "Execution logs:\nFIRST") || !strings.Contains(s.lastMessage(1), "[truncated ") {
			t.Errorf("observation lost its head, or the model did not get the cut one:\n%.200s", tr.Steps[0].Observation)
		}
	}
	// A negative bound turns the cut off.
	it := agent.NewInterpreter(agent.Config{MaxOutput: -1})
	tb := toolbox(t)
	if err := tb.Add(agent.RunCodeTool(it, tb, nil)); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"code": code})
	if got := runCode(t, tb, string(in)); len(got) < 2_000_000 {
		t.Errorf("unbounded: %d bytes", len(got))
	}
}

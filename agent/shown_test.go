package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// A function or symbol in what the agent layer shows (a step's value, a
// console line, an observation) is dropped or shown as Node shows it; it
// never fails the step. A final answer is not shown but carried out: a
// function in it fails the step with an error the model can act on.
func TestShownFunctions(t *testing.T) {
	const code = "const f = function fmt() {};\nconsole.log(f, Symbol('s'));\nconst r = { rows: [1, f], fmt: f, tag: Symbol('t') };\nr"
	it := agent.NewInterpreter(agent.Config{})
	e := it.Execute(context.Background(), code, agent.ExecuteOptions{})
	wantOK(t, e)
	if got := agent.FormatExecution(e); !strings.Contains(got, "{ rows: [ 1, undefined ] }") ||
		!strings.Contains(got, "[Function: fmt] Symbol(s)") {
		t.Errorf("FormatExecution:\n%s", got)
	}
	if b, err := json.Marshal(e); err != nil || !strings.Contains(string(b), `"rows":[1,null]`) {
		t.Errorf("Execution JSON: %s, %v", b, err)
	}

	// A final answer carries the agent's result out, so it takes the
	// result's rule: a function in it is an error the model reads, with
	// where it was, and the model answers again.
	s := newScripted(t,
		reply{text: "```js\nfinal_answer({ answer: 42, how: () => 1, steps: [() => 2] })\n```"},
		reply{text: "```js\nfinal_answer({ answer: 42 })\n```"})
	tr, err := codeAgent(s, toolbox(t)).Run(context.Background(), "functions")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != agent.OutcomeFinalAnswer || airlock.Inspect(tr.FinalAnswer) != "{ answer: 42 }" || len(tr.Steps) != 2 ||
		!strings.Contains(tr.Steps[0].Observation, "argument 1.how: a function cannot leave the sandbox") {
		t.Fatalf("transcript: %+v", tr)
	}
}

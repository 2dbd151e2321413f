package agent_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/agent"
)

// A CodeAgent step may be TypeScript, as the prompt's declarations are,
// and a tool called in it without await still gives its value.
func TestCodeAgent_TypeScriptStep(t *testing.T) {
	s := newScripted(t,
		reply{text: "```ts\nconst xs: string[] = [\"a\"];\nconst w: { temperature: number } = weatherGetWeather({ latitude: 50, longitude: 0 });\nconsole.log(xs.length, w.temperature);\n```"},
		reply{text: "```ts\nconst n: number = xs.length;\nconst t = (w as any).temperature as number;\nconst bad: number = nope;\n```"},
		reply{text: "```typescript\nfinal_answer(xs.length + w.temperature satisfies number)\n```"},
	)
	tr, err := codeAgent(s, toolbox(t, weatherTool(0))).Run(context.Background(), "Count")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != agent.OutcomeFinalAnswer || tr.FinalAnswer != 16.0 || tr.Steps[0].Error != "" {
		t.Fatalf("transcript = %+v", tr)
	}
	if obs := s.lastMessage(1); !strings.Contains(obs, "Execution logs:\n1 15") {
		t.Errorf("observation %q", obs)
	}
	if obs := s.lastMessage(2); !strings.Contains(obs, "nope is not defined") || !strings.Contains(obs, "at line 3") {
		t.Errorf("observation %q", obs)
	}
}

// run_code takes TypeScript too.
func TestRunCode_TypeScript(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, "const xs: string[] = [\"a\"];\nconst n: number = xs.length;\nn", agent.ExecuteOptions{})
	wantOK(t, e)
	if !reflect.DeepEqual(e.Result, 1.0) {
		t.Fatalf("result = %#v", e.Result)
	}
	// An error's position is in the TypeScript.
	e = execute(t, it, "const a: number = 1;\ntype T = {x: number};\n  const b: T = (a as any).x.y;", agent.ExecuteOptions{})
	if e.OK() || e.Line != 3 || e.Column < 26 || e.Column > 29 || !strings.Contains(e.Context, "(a as any).x.y") {
		t.Fatalf("execution %+v", e)
	}
}

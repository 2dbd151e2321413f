package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// Item 1: code mode, run_code and the code-mode loop run code by one set
// of rules.
func TestOneModel_CodeMode(t *testing.T) {
	for _, c := range oneModelCases {
		t.Run(c.name, func(t *testing.T) {
			it := oneModelInterpreter(t)
			e := execute(t, it, c.code, agent.ExecuteOptions{Tools: oneModelTools(t)})
			wantOK(t, e)
			if got := airlock.Inspect(e.Result); got != c.want {
				t.Errorf("Execute: %s, want %s", got, c.want)
			}
			tb := oneModelTools(t)
			if err := tb.Add(agent.RunCodeTool(it, tb, nil)); err != nil {
				t.Fatal(err)
			}
			text := runCode(t, tb, `{"code": `+jsonString(c.code)+`}`)
			if !strings.Contains(text, "=== Result ===\n"+c.want+"\n") {
				t.Errorf("run_code:\n%s", text)
			}
			m := &fakeModel{script: []agent.Completion{codeReply(c.code), codeReply(`complete({ response: "ok" })`)}}
			a := &agent.CodeModeAgent{Model: m, Tools: oneModelTools(t), Interpreter: it}
			tr, err := a.Run(context.Background(), "t")
			if err != nil || tr.FinalAnswer != "ok" || len(tr.Steps) != 2 {
				t.Fatalf("loop: %+v, %v", tr, err)
			}
			if obs := tr.Steps[0].Observation; !strings.Contains(obs, "=== Result ===\n"+c.want+"\n") {
				t.Errorf("loop observation:\n%s", obs)
			}
		})
	}
}

// Item 1: a plain script imports the registered modules with import(), as
// the prompt shows; code with an import or export declaration is a module,
// strict as modules are; console levels are kept.
func TestOneModel_CodeModeModules(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	if err := it.AddModule("math", airlock.Module{"two": 2}); err != nil {
		t.Fatal(err)
	}
	if err := it.AddSourceModule("text", `export const shout = (s) => s.toUpperCase();`); err != nil {
		t.Fatal(err)
	}
	e := execute(t, it, `const { shout } = await import("text"); const m = await import("math"); z = shout("a") + m.two; z`, agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != "A2" {
		t.Fatalf("script: %#v", e.Result)
	}
	e = execute(t, it, `import { shout } from "text"; shout("b")`, agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != "B" {
		t.Fatalf("module: %#v", e.Result)
	}
	e = execute(t, it, `import "text"; y = 1`, agent.ExecuteOptions{})
	if !strings.HasPrefix(e.Error, "ReferenceError") {
		t.Fatalf("a module is strict: %+v", e)
	}
	e = execute(t, it, `await import("lodash")`, agent.ExecuteOptions{})
	if e.OK() || !strings.Contains(e.Error, "lodash") {
		t.Fatalf("an unknown module: %+v", e)
	}
	e = execute(t, it, `console.warn("w"); console.log("l"); log("h"); 1`, agent.ExecuteOptions{})
	wantOK(t, e)
	if len(e.Logs) != 3 || e.Logs[0].Level != airlock.LevelWarn || e.Logs[1].Message() != "l" || e.Logs[2].Message() != "h" {
		t.Fatalf("logs = %+v", e.Logs)
	}
}

// Item 9 in a TypeScript script: a thrown string's line is the line as
// written, through the erasure.
func TestOneModel_CodeModeThrowLineTS(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, "type T = number;\n\nconst a: T = 1;\nif (a) throw 'in TS';", agent.ExecuteOptions{})
	if e.Error != "Error: in TS" || e.Line != 4 || e.Column != 14 || e.Context != "if (a) throw 'in TS';" {
		t.Fatalf("%+v", e)
	}
}

// A failed script keeps its console output with its levels.
func TestOneModel_CodeModeFailedLogs(t *testing.T) {
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `console.error("bad"); log("mine"); null.f()`, agent.ExecuteOptions{})
	if e.OK() || len(e.Logs) != 2 || e.Logs[0].Level != airlock.LevelError || e.Logs[0].Message() != "bad" || e.Logs[1].Message() != "mine" {
		t.Fatalf("%+v", e)
	}
}

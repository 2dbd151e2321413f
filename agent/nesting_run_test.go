package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
	"github.com/airlockrun/airlock/internal/childtest"
	"github.com/airlockrun/airlock/internal/nesting/nestingtest"
)

// The agent's run_code (Interpreter.Execute), whose completion rewrite
// parses the code before the run: every deep program fails as a link_error
// with the nesting bound's message and its place, in a child process that
// survives; honest code still runs, its last expression its result.
func TestNestingExecute(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	it := agent.NewInterpreter(agent.Config{})
	for _, c := range nestingtest.Deep(200_000) {
		code := strings.TrimPrefix(c.Module, "export default ")
		e := execute(t, it, code, agent.ExecuteOptions{})
		if e.Status != airlock.StatusLinkError || !strings.Contains(c.Name, "-close") && (!strings.Contains(e.Error, "nests too deeply") || e.Line < 1) {
			t.Errorf("%s: %s %q line %d", c.Name, e.Status, e.Error, e.Line)
		}
	}
	e := execute(t, it, "const n = "+strings.Repeat("(", 100)+"2"+strings.Repeat(")", 100)+"\nn * 21", agent.ExecuteOptions{})
	wantOK(t, e)
	if e.Result != 42.0 {
		t.Fatalf("honest: %+v", e)
	}
}

// hiddenN is how deeply the programs that hide their nesting nest: 400,000
// levels, past the 300,000 at which esbuild and sobek overflow the Go stack.
const hiddenN = 400_000

// The agent's entry points read code with sobek (the completion rewrite
// and the asynchronous calls) before the run, and a CodeAgent's steps go
// to the executor. A nest hidden behind a slash that the bound read the
// wrong way (nestingtest.Hidden) took the host down there as in esbuild;
// now Interpreter.Execute, the run-code tool and a CodeAgent step each
// answer the nesting bound's error, in a child process that survives.
func TestNestingHiddenAgent(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	ctx := context.Background()
	it := agent.NewInterpreter(agent.Config{})
	tool := agent.RunCodeTool(it, toolbox(t), nil)
	for _, c := range nestingtest.Hidden(hiddenN) {
		e := execute(t, it, c.Module, agent.ExecuteOptions{})
		if e.Status != airlock.StatusLinkError || !strings.Contains(e.Error, "nests too deeply") {
			t.Errorf("Execute %s: %s %.200q", c.Name, e.Status, e.Error)
		}
		in, _ := json.Marshal(agent.RunCodeInput{Code: c.Module})
		_, err := tool.Handler(ctx, in)
		var rce *agent.RunCodeError
		if !errors.As(err, &rce) || !strings.Contains(rce.Text, "nests too deeply") {
			t.Errorf("run_code %s: %.200v", c.Name, err)
		}
		m := &fakeModel{script: []agent.Completion{codeReply(c.Step), codeReply(`final_answer("ok")`)}}
		a := &agent.CodeAgent{Model: m, Interpreter: it, Executor: airlock.ExecutorOptions{Timeout: 20 * time.Second}}
		tr, err := a.Run(ctx, "t")
		if err != nil || len(tr.Steps) == 0 || !strings.Contains(tr.Steps[0].Error, "nests too deeply") {
			t.Errorf("CodeAgent %s: %v %.300v", c.Name, err, tr)
		}
	}
	wantOK(t, execute(t, it, "6 * 7", agent.ExecuteOptions{}))
}

// sobek goes on parsing after a syntax error, and its recovery reads as
// code what any scan of the grammar reads as a template's text, a regular
// expression or closed brackets (nestingtest.Recovering): `@` then a
// template whose text holds 400,000 parentheses took the agent's host down
// in sobek, though no parser that stops at its first error sees a level of
// it; `@d class A { x = `return {a:{a:…` }` (JavaScript to esbuild, 9 KB)
// made it report 4.5 million errors in 4 s and 660 MB, and quadratically
// more past that. The instrumentation now gives sobek code with its
// literals blanked, at most 64 KiB of it, and past 4 KiB only code esbuild
// reads as JavaScript: each program, short (1,000 levels), under the bound
// (20,000) and past it (400,000), fails as the engine's syntax error, and
// the process survives.
func TestNestingRecoveringAgent(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	ctx := context.Background()
	it := agent.NewInterpreter(agent.Config{})
	for _, n := range []int{1_000, 20_000, hiddenN} {
		for _, c := range nestingtest.Recovering(n) {
			if e := execute(t, it, c.Module, agent.ExecuteOptions{}); e.OK() {
				t.Errorf("Execute %s (%d): succeeded", c.Name, n)
			}
			m := &fakeModel{script: []agent.Completion{codeReply(c.Step), codeReply(`final_answer("ok")`)}}
			a := &agent.CodeAgent{Model: m, Interpreter: it, Executor: airlock.ExecutorOptions{Timeout: 20 * time.Second}}
			if tr, err := a.Run(ctx, "t"); err != nil || len(tr.Steps) == 0 || tr.Steps[0].Error == "" {
				t.Errorf("CodeAgent %s (%d): %v %.300v", c.Name, n, err, tr)
			}
		}
	}
	wantOK(t, execute(t, it, "6 * 7", agent.ExecuteOptions{}))
}

// A sum of 2,090,000 terms (4 MB, under MaxSourceBytes) parses in sobek
// without recursing, but the tree it builds leans 2,090,000 levels deep to
// the left, and the instrumentation's walks over it recurse: the walk
// overflowed the Go stack, though nothing nests in the bound's sense. The instrumentation
// reads at most nesting.MaxRecovering bytes (64 KiB: a tree at most 32,768
// levels deep); the long sum is not instrumented, and the child process
// survives to see its execution settle. (The script the interpreter makes
// of it is past MaxSourceBytes, so it settles refused; the walk is what
// crashed, before any bound on the step.)
func TestNestingLongSumAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4 MB program: about 10 s")
	}
	if !childtest.InChild(t) {
		return
	}
	it := agent.NewInterpreter(agent.Config{Timeout: time.Minute})
	e := execute(t, it, "globalThis.x = 0"+strings.Repeat("+1", 2_090_000), agent.ExecuteOptions{})
	if e.Status != airlock.StatusSuccess && !strings.Contains(e.Error, "MaxSourceBytes") {
		t.Fatalf("%s: %.300s", e.Status, e.Error)
	}
}

package agent_test

import (
	"strings"
	"testing"

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

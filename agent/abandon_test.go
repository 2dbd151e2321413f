package agent_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// A tool that sleeps without looking at its context used to hold an
// execution with a 300 ms timeout for the tool's 3 s, also through
// parallel() and a cancelled context. The execution now returns at its
// timeout while the tool still blocks: the tool is released only after
// Execute has returned, or by a safety timer a minute later, which fails
// the test on the order of events.
func TestExecute_TimeoutHoldsAgainstBlockedTool(t *testing.T) {
	for _, rt := range []string{"executor", "runtime"} {
		t.Run(rt, func(t *testing.T) { timeoutHoldsAgainstBlockedTool(t, rt == "runtime") })
	}
}

func timeoutHoldsAgainstBlockedTool(t *testing.T, onRuntime bool) {
	for _, tc := range []struct{ name, code, stop string }{
		{"call", `blockWait({})`, "timeout"},
		{"await", `await blockWait({})`, "timeout"},
		{"parallel", `parallel([{tool: "block.wait", input: {}}, {tool: "block.wait", input: {}}])`, "timeout"},
		{"cancelled", `blockWait({})`, "cancel"},
		{"parallel cancelled", `parallel([{tool: "block.wait", input: {}}])`, "cancel"},
		{"Promise.all", `await Promise.all([blockWait({}), blockWait({})])`, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release, entered := make(chan struct{}), make(chan struct{}, 4)
			var released atomic.Bool
			free := func() {
				if released.CompareAndSwap(false, true) {
					close(release)
				}
			}
			safety := time.AfterFunc(time.Minute, free)
			defer safety.Stop()
			defer free()
			tool := agent.NewTool("block.wait", "blocks", func(_ context.Context, _ struct{}) (string, error) {
				entered <- struct{}{}
				<-release
				return "late", nil
			})
			cfg := agent.Config{}
			if onRuntime {
				cfg.Runtime = airlock.NewRuntime(airlock.RuntimeConfig{})
			}
			it := agent.NewInterpreter(cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := agent.ExecuteOptions{Tools: toolbox(t, tool), Timeout: time.Hour}
			if tc.stop == "timeout" {
				opts.Timeout = 50 * time.Millisecond
			} else {
				go func() { <-entered; cancel() }()
			}
			e := it.Execute(ctx, tc.code, opts)
			if released.Load() {
				t.Fatal("Execute returned only after the blocked tool was released")
			}
			if e.Status != airlock.StatusTerminated || (tc.stop == "timeout") != e.Timeout {
				t.Fatalf("status %s, timeout %v: %s", e.Status, e.Timeout, e.Error)
			}
			// The calls in flight are recorded as abandoned (a call is
			// recorded before its handler runs; the timeout may come first).
			if len(e.Calls) == 0 && len(entered) > 0 {
				t.Fatal("no call recorded")
			}
			for _, c := range e.Calls {
				if c.Tool != "block.wait" || !c.Abandoned || c.Output != nil {
					t.Errorf("call record %+v, want block.wait abandoned", c)
				}
			}
		})
	}
}

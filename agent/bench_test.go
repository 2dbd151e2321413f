package agent_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/airlockrun/airlock/agent"
)

type pointIn struct {
	N   float64 `json:"n"`
	Tag string  `json:"tag"`
}

// BenchmarkToolCall is the cost of one tool call from code, a small object
// in and out, with schema validation: b.N calls in one execution.
func BenchmarkToolCall(b *testing.B) {
	echo := agent.NewTool("bench.echo", "echo", func(_ context.Context, in pointIn) (pointIn, error) { return in, nil })
	tb := toolbox(b, echo)
	it := agent.NewInterpreter(agent.Config{Timeout: 10 * time.Minute})
	b.Run("tool", func(b *testing.B) {
		e := it.Execute(context.Background(), `let s = 0; for (let i = 0; i < `+strconv.Itoa(b.N)+`; i++) s += benchEcho({ n: i, tag: "x" }).n; s`,
			agent.ExecuteOptions{Tools: tb})
		if !e.OK() {
			b.Fatal(e.Error)
		}
	})
	// The same loop without the call, and with a plain JavaScript function:
	// what the loop itself costs.
	b.Run("loop-floor", func(b *testing.B) {
		e := it.Execute(context.Background(), `const f = (o) => o; let s = 0; for (let i = 0; i < `+strconv.Itoa(b.N)+`; i++) s += f({ n: i, tag: "x" }).n; s`,
			agent.ExecuteOptions{})
		if !e.OK() {
			b.Fatal(e.Error)
		}
	})
}

// BenchmarkParallel compares parallel() over 100 calls of a tool that
// sleeps 10 ms with one call of it, from code, in the same run.
func BenchmarkParallel(b *testing.B) {
	slow := agent.NewTool("bench.slow", "sleeps 10 ms", func(ctx context.Context, in pointIn) (float64, error) {
		time.Sleep(10 * time.Millisecond)
		return in.N, nil
	})
	tb := toolbox(b, slow)
	it := agent.NewInterpreter(agent.Config{})
	for _, c := range []struct{ name, code string }{
		{"one-call", `benchSlow({ n: 1, tag: "x" })`},
		{"parallel-100", `parallel(Array.from({ length: 100 }, (_, i) => ({ tool: "bench.slow", input: { n: i, tag: "x" } }))).length`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if e := it.Execute(context.Background(), c.code, agent.ExecuteOptions{Tools: tb}); !e.OK() {
					b.Fatal(e.Error)
				}
			}
		})
	}
}

// BenchmarkExecute compares an execution of a plain script (a step of a
// new executor) with the same code as a module (airlock.Run), a tool
// call in each, in the same run.
func BenchmarkExecute(b *testing.B) {
	echo := agent.NewTool("bench.echo", "echo", func(_ context.Context, in pointIn) (pointIn, error) { return in, nil })
	tb := toolbox(b, echo)
	it := agent.NewInterpreter(agent.Config{})
	for _, c := range []struct{ name, code string }{
		{"script", `const r = benchEcho({ n: 1, tag: "x" }); r.n + 1`},
		{"module", `const r = benchEcho({ n: 1, tag: "x" }); export default r.n + 1`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if e := it.Execute(context.Background(), c.code, agent.ExecuteOptions{Tools: tb}); !e.OK() || e.Result != 2.0 {
					b.Fatal(e.Error)
				}
			}
		})
	}
}

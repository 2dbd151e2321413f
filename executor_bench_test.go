package airlock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// BenchmarkExecutorWarmRun is a one-line step on a READY executor, beside
// a cold-start run of the core sandbox in the same process.
func BenchmarkExecutorWarmRun(b *testing.B) {
	ctx := context.Background()
	b.Run("core-cold-start", func(b *testing.B) {
		rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: -1})
		defer rt.Close()
		for b.Loop() {
			ex, err := rt.Run(ctx, `export default "hello, world"`, airlock.Options{Language: airlock.JavaScript})
			if err != nil {
				b.Fatal(err)
			}
			if res := ex.Wait(); res.Status != airlock.StatusSuccess {
				b.Fatal(res.Error)
			}
		}
	})
	for name, code := range map[string]string{
		"one-liner":    `return 1 + 1`,
		"final-answer": `final_answer("done")`,
		"tool-call":    `return await echo(21) * 2`,
	} {
		b.Run(name, func(b *testing.B) {
			ex := newExecutor(b, airlock.ExecutorOptions{})
			if err := ex.SendTools(ctx, map[string]any{"echo": func(v any) any { return v }}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := ex.Run(ctx, code); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoopGuard runs loops of 1e6 iterations, calls and awaits with
// and without the engine's operation budget (a step compiled without it),
// alternately, on two executors of the same process: what the budget
// costs is the ratio of the two, reported as the metric budget/none (of
// the fastest run of each, which a shared machine disturbs least) beside
// ns/op (the runs with the budget), and budget/none-med, the median of
// the ratios of each pair of runs, one after the other, in the process's
// CPU time (Unix; elsewhere wall time): a machine whose load changes
// disturbs both runs of a pair alike.
func BenchmarkLoopGuard(b *testing.B) {
	ctx := context.Background()
	loops := []struct{ name, setup, code string }{
		{"empty", ``, `(() => { for (let i = 0; i < 1e6; i++) {} })()`},
		{"sum", ``, `(() => { let s = 0; for (let i = 0; i < 1e6; i++) { s += i % 7 } return s })()`},
		{"top-level-sum", `let s, i`, `s = 0; for (i = 0; i < 1e6; i++) { s += i % 7 }`},
		{"for-of-objects", `const rows = Array.from({length: 1e6}, (_, i) => ({price: i, qty: 2}))`,
			`(() => { let t = 0; for (const r of rows) { t += r.price * r.qty } return t })()`},
		{"forEach", `const xs = Array.from({length: 1e6}, (_, i) => i)`,
			`(() => { let t = 0; xs.forEach((x) => { t += x }); return t })()`},
		// Calls and resumptions, which count too: fib(25) makes 242,785
		// calls; the async loop awaits 1e5 times (a resumption each).
		{"calls-fib25", ``, `(() => { function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } return fib(25) })()`},
		{"awaits", ``, `await (async () => { for (let i = 0; i < 1e5; i++) await null })()`},
	}
	for _, l := range loops {
		b.Run(l.name, func(b *testing.B) {
			with := newExecutor(b, airlock.ExecutorOptions{MaxOperations: 1 << 30})
			without := newExecutor(b, airlock.WithoutLoopGuards(airlock.ExecutorOptions{MaxOperations: 1 << 30}))
			run := func(ex *airlock.Executor, code string) (time.Duration, int64) {
				start, cpu := time.Now(), cpuNanos()
				if _, err := ex.Run(ctx, code); err != nil {
					b.Fatal(err)
				}
				return time.Since(start), cpuNanos() - cpu
			}
			if l.setup != "" {
				run(with, l.setup)
				run(without, l.setup)
			}
			best := [2]time.Duration{time.Hour, time.Hour}
			var pairs []float64
			for b.Loop() {
				b.StopTimer()
				d0, c0 := run(without, l.code)
				b.StartTimer()
				d1, c1 := run(with, l.code)
				best[0], best[1] = min(best[0], d0), min(best[1], d1)
				if c0 > 0 && c1 > 0 {
					pairs = append(pairs, float64(c1)/float64(c0))
				} else {
					pairs = append(pairs, float64(d1)/float64(d0))
				}
			}
			b.ReportMetric(float64(best[1])/float64(best[0]), "budget/none")
			slices.Sort(pairs)
			b.ReportMetric(pairs[len(pairs)/2], "budget/none-med")
		})
	}
}

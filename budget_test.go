package airlock_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
)

// Every byte that crosses between the sandbox and the host counts against
// RuntimeConfig.MaxValueBytes: plain strings used to skip it, so that a
// 100 MB string result succeeded and repeated string arguments put 1.9 GB
// (3.1 GB through an asynchronous function) into host memory in one run
// that reported success.
func TestBudget_EveryCrossingCounts(t *testing.T) {
	const budget = 1 << 20
	modes := []struct {
		name string
		rt   *airlock.Runtime
	}{
		{"in process", airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: budget})},
		{"worker", airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: budget, Workers: 1})},
	}
	for _, m := range modes {
		defer m.rt.Close()
	}
	if raceEnabled {
		modes = modes[:1] // the engine runs 40 times slower; the worker's side is the same code
	}
	sink := func(s string) int { return len(s) }
	big := func() string { return strings.Repeat("x", 100<<10) }
	for _, tc := range []struct{ name, src string }{
		{"string result", `export default "x".repeat(2 << 20)`},
		{"sync string arguments", `const s = "x".repeat(100 << 10); for (let i = 0; i < 20; i++) sink(s); export default 1`},
		{"async string arguments", `const s = "x".repeat(100 << 10); for (let i = 0; i < 20; i++) await asyncSink(s); export default 1`},
		{"JSON function arguments", `const s = "x".repeat(100 << 10); for (let i = 0; i < 20; i++) jsonSink(s); export default 1`},
		{"string replies", `for (let i = 0; i < 20; i++) big(); export default 1`},
		{"async string replies", `for (let i = 0; i < 20; i++) await asyncBig(); export default 1`},
		{"logs", `const s = "x".repeat(100 << 10); for (let i = 0; i < 20; i++) console.log(s); export default 1`},
		{"reports", `const s = "x".repeat(100 << 10); for (let i = 0; i < 20; i++) report(s); export default 1`},
		{"many small values", `export default new Array(1 << 16).fill(0)`},
	} {
		for _, m := range modes {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				ex, err := m.rt.Run(context.Background(), tc.src, airlock.Options{
					Language: airlock.JavaScript,
					Globals: map[string]any{
						"sink":      sink,
						"asyncSink": airlock.Async(sink),
						"jsonSink":  airlock.JSONFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return nil, nil }),
						"big":       big,
						"asyncBig":  airlock.Async(big),
					},
					Report: func(any) {},
				})
				if err != nil {
					t.Fatal(err)
				}
				res := ex.Wait()
				if res.Status != airlock.StatusError {
					t.Fatalf("status %s (%v), want error", res.Status, res.Error)
				}
			})
		}
	}
	// Within the budget, the same crossings succeed.
	for _, m := range modes {
		ex, err := m.rt.Run(context.Background(), `const s = "x".repeat(10 << 10); for (let i = 0; i < 10; i++) { sink(s); await asyncSink(s); big() } export default s`,
			airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"sink": sink, "asyncSink": airlock.Async(sink), "big": func() string { return "y" }}})
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, ex.Wait(), airlock.StatusSuccess)
	}
}

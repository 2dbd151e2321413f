package airlock_test

import (
	"context"
	"testing"

	"github.com/airlockrun/airlock"
)

// benchStep is a typical step of a code agent: tool calls, a loop, a
// closure, a template literal.
const benchStep = `const rows = await readTool("data.csv");
const lines = rows.split("\n").filter(l => l.trim() !== "");
let total = 0;
for (const line of lines) {
  const [name, qty] = line.split(",");
  if (!name) continue;
  total += Number(qty) || 0;
}
const byName = {};
lines.forEach((l, i) => { byName[l.split(",")[0]] = i; });
console.log(` + "`lines: ${lines.length}, total: ${total}`" + `);
return { total, names: Object.keys(byName).length };`

// BenchmarkStepValidation: what validating a step costs: "validate" is
// ValidateCode (a pooled VM compiles the step without running it and
// reports), "run" a whole step of a session (validated by the session's
// VM, which runs what it compiled). internal/engine's BenchmarkStepValidation
// tells the validation's share of a step apart; BENCHMARKS.md compares
// them with the sobek parser the rules used before.
func BenchmarkStepValidation(b *testing.B) {
	b.Run("validate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if ds := airlock.ValidateCode(benchStep, airlock.ExecutorOptions{}); len(ds) != 0 {
				b.Fatal(ds)
			}
		}
	})
	b.Run("run", func(b *testing.B) {
		ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if err := ex.Init(ctx); err != nil {
			b.Fatal(err)
		}
		defer ex.Cleanup(ctx)
		if err := ex.SendTools(ctx, map[string]any{"readTool": func(string) string { return "a,1\nb,2\n" }}); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if _, err := ex.Run(ctx, "{\n"+benchStep+"\n}"); err != nil { // a block: its declarations do not stay
				b.Fatal(err)
			}
		}
	})
}

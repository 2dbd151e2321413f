package engine

import (
	"context"
	"testing"
)

// benchStep is a typical step of a code agent (no tool: a session with
// none), in a block so that its declarations do not stay.
const benchStep = `{
const rows = "a,1\nb,2\n";
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
return { total, names: Object.keys(byName).length };
}`

// BenchmarkStepValidation: what the engine's validation adds to a step
// of a session. "step" compiles and runs it (no validation); "validated"
// is the executor's path: PrepareStep compiles and reports, Step runs what
// it kept; "compiled-twice" inspects, then Step compiles again (what
// validating on another VM costs); "inspect" is the inspection alone.
func BenchmarkStepValidation(b *testing.B) {
	run := func(b *testing.B, v *VM) {
		if out, _ := v.Step(&Job{Stop: make(chan struct{}), LogBytes: func(int, []byte) {}}, benchStep, 1000); out.Kind != OK {
			b.Fatalf("%+v", out)
		}
	}
	b.Run("step", func(b *testing.B) {
		v := newSession(b)
		for i := 0; i < b.N; i++ {
			run(b, v)
		}
	})
	b.Run("validated", func(b *testing.B) {
		v := newSession(b)
		for i := 0; i < b.N; i++ {
			if in, err := v.PrepareStep(context.Background(), benchStep, 1000, false); err != nil || in.Err != "" {
				b.Fatal(in, err)
			}
			run(b, v)
		}
	})
	b.Run("compiled-twice", func(b *testing.B) {
		v := newSession(b)
		for i := 0; i < b.N; i++ {
			if in, err := v.InspectStep(benchStep); err != nil || in.Err != "" {
				b.Fatal(in, err)
			}
			run(b, v)
		}
	})
	b.Run("inspect", func(b *testing.B) {
		v := newSession(b)
		for i := 0; i < b.N; i++ {
			if in, err := v.InspectStep(benchStep); err != nil || in.Err != "" {
				b.Fatal(in, err)
			}
		}
	})
}

package wasmvm

import (
	"context"
	"strconv"
	"testing"
)

func BenchmarkExpCall(b *testing.B) {
	ctx := context.Background()
	e := testSnapshot(b)
	_ = e
	loop := "for (let i = 0; i < " + strconv.Itoa(callLoop) + "; i++) f(i)"
	eng, err := NewEngine(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	sn, err := eng.NewSnapshot(ctx, &SnapshotOptions{Kernel: `__airlock_kernel({}); globalThis.f = __airlock_host.bind(undefined, 9, 0); globalThis.g = __airlock_host;`})
	if err != nil {
		b.Fatal(err)
	}
	s, err := sn.NewSandbox(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	s.SetKernel(func(_ context.Context, args []Value) (Value, error) {
		return Value{Kind: Number, Number: args[len(args)-1].Number + 1}, nil
	})
	for _, c := range []struct{ name, src string }{
		{"bound", loop},
		{"direct-g", "for (let i = 0; i < " + strconv.Itoa(callLoop) + "; i++) g(0, i)"},
		{"empty-loop", "for (let i = 0; i < " + strconv.Itoa(callLoop) + "; i++) ;"},
		{"js-fn", "{ const h = (x) => x; for (let i = 0; i < " + strconv.Itoa(callLoop) + "; i++) h(i) }"},
		{"module-bound", "let s = 0; for (let i = 0; i < " + strconv.Itoa(callLoop) + "; i++) s += f(i); export default s"},
		{"module-js", "const h = (x) => x; let s = 0; for (let i = 0; i < " + strconv.Itoa(callLoop) + "; i++) s += h(i); export default s"},
	} {
		b.Run(c.name, func(b *testing.B) {
			kind := Script
			if c.name[:3] == "mod" {
				kind = Module
			}
			for b.Loop() {
				if _, err := s.Eval(ctx, c.src, "m.js", kind); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*callLoop), "ns/call")
		})
	}
}

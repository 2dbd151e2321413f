package hostcall

import (
	"context"
	"testing"

	"github.com/airlockrun/airlock/internal/engine"
)

// BenchmarkCallTyped is the Go side of a typed call, without the engine.
func BenchmarkCallTyped(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		fn   any
		args []engine.Arg
	}{
		{"float64", func(x float64) float64 { return x }, []engine.Arg{num(1)}},
		{"int", func(x int) int { return x }, []engine.Arg{num(1)}},
		{"string", func(s string) string { return s }, []engine.Arg{str("hello")}},
		{"float64-int-bool", func(f float64, n int) bool { return f > float64(n) }, []engine.Arg{num(1), num(2)}},
		{"ctx-int-error", func(_ context.Context, x int) (int, error) { return x, nil }, []engine.Arg{num(1)}},
	} {
		f := mustNew(b, c.fn)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				f.CallTyped(ctx, c.args)
			}
		})
	}
}

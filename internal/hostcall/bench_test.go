package hostcall

import (
	"context"
	"testing"

	"github.com/airlockrun/airlock/internal/codec"
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

// BenchmarkCallStruct is the Go side of a call with an object argument
// converted to a struct, without the engine: its arguments from the
// binary text, the call, the reply.
func BenchmarkCallStruct(b *testing.B) {
	type point struct {
		N   int    `json:"n"`
		Tag string `json:"tag"`
	}
	f := mustNew(b, func(p point) int { return p.N })
	list, err := codec.AppendBinary(nil, []any{map[string]any{"n": 1.0, "tag": "x"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	spend := func(int) bool { return true }
	ctx := context.Background()
	b.ReportAllocs()
	for range b.N {
		args, err := callArgs(f, nil, list, spend, nil, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		v, err, _ := f.Call(ctx, args)
		Reply(v, err, nil, nil)
	}
}

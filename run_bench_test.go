package airlock

import (
	"context"
	"testing"
)

// BenchmarkNewRun measures making a run before the engine is entered: a
// hello with no globals of the caller's (the built-in console and report
// taken as constants) and one with a global.
func BenchmarkNewRun(b *testing.B) {
	rt := NewRuntime(RuntimeConfig{})
	defer rt.Close()
	for _, c := range []struct {
		name    string
		globals map[string]any
	}{{"builtins", nil}, {"one-global", map[string]any{"x": 1}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r, err := rt.newRun(context.Background(), `export default "hello, world"`,
					Options{Language: JavaScript, Globals: c.globals})
				if err != nil {
					b.Fatal(err)
				}
				r.cancel()
			}
		})
	}
}

package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/airlockrun/airlock"
)

// BenchmarkAwaits measures an await, 10,000 in sequence in one run, by what
// is awaited: a primitive (await i), a promise the program made
// (Promise.resolve(i)), a synchronous host function's value, and an
// asynchronous host function's promise (airlock.Async(func(x int) int)).
// ns/await is the run's wall time divided by the awaits.
//
//	cd bench && go test -run '^$' -bench Awaits -benchtime 20x
func BenchmarkAwaits(b *testing.B) {
	const n = 10000
	loop := func(what string) string {
		return fmt.Sprintf("export default await (async () => { let s = 0; for (let i = 0; i < %d; i++) s += await %s; return s; })()", n, what)
	}
	for _, c := range []struct {
		name, src string
		host      any
	}{
		{"primitive", loop("i"), nil},
		{"promise", loop("Promise.resolve(i)"), nil},
		{"sync-host", loop("host(i)"), func(x int) int { return x }},
		{"async-host", loop("host(i)"), airlock.Async(func(x int) int { return x })},
	} {
		b.Run(c.name, func(b *testing.B) {
			rt := airlock.NewRuntime(airlock.RuntimeConfig{})
			defer rt.Close()
			opts := airlock.Options{Language: airlock.JavaScript}
			if c.host != nil {
				opts.Globals = map[string]any{"host": c.host}
			}
			for b.Loop() {
				ex, err := rt.Run(context.Background(), c.src, opts)
				if err != nil {
					b.Fatal(err)
				}
				if res := ex.Wait(); res.Status != airlock.StatusSuccess || res.Result != float64(n)*(n-1)/2 {
					b.Fatal(res.Status, res.Result, res.Error)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/await")
		})
	}
}

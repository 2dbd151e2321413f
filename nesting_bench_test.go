package airlock_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
)

// BenchmarkNestingAtMax runs programs that nest as deeply as the bound
// allows (1000 levels) through the TypeScript transform and the engine
// (Run, with a type annotation so that esbuild runs) and through the
// executor's parser (ValidateCode). It reports the Go stack the process
// holds afterwards (stack-MB): what the parsers needed at the bound.
//
//	go test -run '^$' -bench BenchmarkNestingAtMax -benchmem .
func BenchmarkNestingAtMax(b *testing.B) {
	r := strings.Repeat
	const n = 995
	shapes := map[string]string{
		"paren":   r("(", n) + "1" + r(")", n),
		"array":   r("[", n) + r("]", n),
		"block":   "(() => {" + r("{", n-4) + r("}", n-4) + "})()",
		"not":     r("!", n) + "1",
		"member":  "Math" + r(".E", n/2),
		"ternary": r("0?0:", n/2) + "1",
		"else-if": "(() => { if (0) {}" + r(" else if (0) {}", n-8) + " })()",
	}
	for name, expr := range shapes {
		src := "const typed: number = 1;\nexport default " + expr
		b.Run("run/"+name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++ // a new source each time: the transform's cache does not answer
				run, err := airlock.Run(context.Background(), src+"\n// "+strconv.Itoa(i), airlock.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if res := run.Wait(); res.Status == airlock.StatusLinkError && strings.Contains(res.Error.Message, "nests too deeply") {
					b.Fatal(res.Error)
				}
			}
			reportStack(b)
		})
		b.Run("validate/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range airlock.ValidateCode("return "+expr, airlock.ExecutorOptions{}) {
					if d.Rule == "nesting_depth" {
						b.Fatal(d.Message)
					}
				}
			}
			reportStack(b)
		})
	}
}

func reportStack(b *testing.B) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.StackSys)/(1<<20), "stack-MB")
}

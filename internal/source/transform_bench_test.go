package source

import (
	"fmt"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/evanw/esbuild/pkg/api"
)

// benchTS is varied TypeScript of about n bytes.
func benchTS(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "function f%d(a: number): number { const x: Array<number> = [1, 2, 3]; return x.map(v => v * a).reduce((p, c) => p + c, 0); }\n", i)
	}
	return b.String()
}

// BenchmarkSourceWork measures the host's work on one source at the sizes
// that bound it: the nesting scan, and esbuild's transform with its source
// map (the module loader's), whose memory -benchmem shows.
func BenchmarkSourceWork(b *testing.B) {
	for _, n := range []int{InlineBytes, 1 << 20, MaxBytes} {
		src := benchTS(n)
		b.Run(fmt.Sprintf("nesting/%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for i := 0; i < b.N; i++ {
				if nesting.Check(src) != nil {
					b.Fatal("nests too deep")
				}
			}
		})
		b.Run(fmt.Sprintf("transform/%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, m := esbuildTS(src, "bench.ts", api.FormatESModule, false); m != nil {
					b.Fatal(m.Text)
				}
			}
		})
	}
}

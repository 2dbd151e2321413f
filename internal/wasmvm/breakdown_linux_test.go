package wasmvm

import (
	"context"
	"testing"
	"time"
)

// BenchmarkStartBreakdown times the parts of a fresh sandbox: instantiate
// (wazero's instance with the image mapped), the first eval, and close.
// The metrics are µs per part, mean over the ops.
func BenchmarkStartBreakdown(b *testing.B) {
	ctx := context.Background()
	sn := testSnapshot(b)
	var inst, eval, cls time.Duration
	for b.Loop() {
		t0 := time.Now()
		s, err := sn.NewSandbox(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		wasmEval(b, s, "1+2")
		t2 := time.Now()
		s.Close(ctx)
		t3 := time.Now()
		inst += t1.Sub(t0)
		eval += t2.Sub(t1)
		cls += t3.Sub(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(inst.Microseconds())/n, "new-µs")
	b.ReportMetric(float64(eval.Microseconds())/n, "eval-µs")
	b.ReportMetric(float64(cls.Microseconds())/n, "close-µs")
}

// BenchmarkStartPrefault alternates a fresh sandbox + hello eval + close
// with and without the hot pages populated at instantiation.
func BenchmarkStartPrefault(b *testing.B) {
	ctx := context.Background()
	sn := testSnapshot(b)
	b.Logf("hot spans %d, warm spans %d", len(sn.im.hot), len(sn.im.warm))
	for _, on := range []bool{false, true, false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			prefault = on
			defer func() { prefault = true }()
			for b.Loop() {
				s, err := sn.NewSandbox(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				wasmEval(b, s, "1+2")
				s.Close(ctx)
			}
		})
	}
}

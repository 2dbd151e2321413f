//go:build !airlock_anonmem

package wasmvm

import (
	"context"
	"testing"
	"time"
)

// BenchmarkStartBreakdown times the parts of a fresh sandbox, with no
// pool: instantiate
// (wazero's instance with the image mapped), the first eval, and close.
// The metrics are µs per part, mean over the ops.
func BenchmarkStartBreakdown(b *testing.B) {
	ctx := context.Background()
	sn := poolSnapshot(b, &SnapshotOptions{Pool: -1})
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
	sn := poolSnapshot(b, &SnapshotOptions{Pool: -1})
	var hot, warm uintptr
	for _, s := range sn.im.hot {
		hot += s.len
	}
	for _, s := range sn.im.warm {
		warm += s.len
	}
	b.Logf("image %d KiB (%d KiB written), hot %d spans %d KiB, warm %d spans %d KiB", sn.im.size>>10, len(sn.im.pages)*4, len(sn.im.hot), hot>>10, len(sn.im.warm), warm>>10)
	names := []string{"none", "hot", "hot+warm"}
	for _, mode := range []int{0, 1, 2, 0, 1, 2} {
		b.Run(names[mode], func(b *testing.B) {
			prefault = mode
			defer func() { prefault = 2 }()
			for b.Loop() {
				helloCycle(b, sn)
			}
		})
	}
}

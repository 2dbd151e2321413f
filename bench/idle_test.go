package bench

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// BenchmarkWarmIdle measures Run→Wait of a JavaScript hello-world on a
// Runtime with prepared sandboxes, after the caller slept for a gap: the
// case of an agent that runs code every few seconds. Each sub-benchmark
// alternates a run after the gap ("idle") with a run right after it
// ("next", back to back), and reports the p50 and p99 of both and
// idle-p50 ÷ next-p50, so that the ratio comes from one run on one load.
// gap=0 runs back to back throughout. The gap is a time.Sleep, not a spin:
// the process really goes idle, its threads parked, as between an agent's
// steps. ns/op includes the gaps; the metrics do not.
//
//	go test -run '^$' -bench 'WarmIdle' -benchtime 2000x          # gap=200ms: 400 s at 2000x
//	go test -run '^$' -bench 'WarmIdle/gap=(0|2ms|20ms)$' -benchtime 2000x
func BenchmarkWarmIdle(b *testing.B) {
	for _, gap := range []time.Duration{0, 2 * time.Millisecond, 20 * time.Millisecond, 200 * time.Millisecond} {
		for _, keep := range []struct {
			name string
			d    time.Duration
		}{{"keepwarm=off", -1}, {"keepwarm=1s", time.Second}} {
			b.Run("gap="+gapName(gap)+"/"+keep.name, func(b *testing.B) {
				warmIdle(b, gap, airlock.RuntimeConfig{KeepWarm: keep.d})
			})
		}
	}
}

func warmIdle(b *testing.B, gap time.Duration, cfg airlock.RuntimeConfig) {
	rt := airlock.NewRuntime(cfg)
	defer rt.Close()
	run := func() time.Duration {
		start := time.Now()
		ex, err := rt.Run(context.Background(), helloJS, airlock.Options{Language: airlock.JavaScript})
		if err != nil {
			b.Fatal(err)
		}
		if res := ex.Wait(); res.Status != airlock.StatusSuccess {
			b.Fatal(res.Error)
		}
		return time.Since(start)
	}
	for range 50 { // the caches of the source and the pool filled
		run()
	}
	idle := make([]time.Duration, 0, b.N)
	next := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu := cpuNanos()
	for range b.N {
		if gap > 0 {
			time.Sleep(gap)
		}
		idle = append(idle, run())
		next = append(next, run())
	}
	b.StopTimer()
	cpu = cpuNanos() - cpu
	p50i, p99i := quantiles(idle)
	p50n, p99n := quantiles(next)
	b.ReportMetric(p50i, "idle-p50-µs")
	b.ReportMetric(p99i, "idle-p99-µs")
	b.ReportMetric(p50n, "next-p50-µs")
	b.ReportMetric(p99n, "next-p99-µs")
	b.ReportMetric(p50i/p50n, "idle/next")
	b.ReportMetric(float64(cpu)/float64(2*b.N)/1e3, "cpu-µs/run")
}

func gapName(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

// quantiles sorts lat and returns its p50 and p99 in µs.
func quantiles(lat []time.Duration) (p50, p99 float64) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	return us(lat[len(lat)/2]), us(lat[len(lat)*99/100])
}

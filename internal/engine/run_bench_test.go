package engine

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkRunParts: a hello job on a VM from the snapshot's pool,
// prepared as a Runtime prepares it, the run and the VM's return to the
// pool (its rewind) timed apart; the medians are the metrics (ns/op is
// all three). globals: the entry imports the globals module, as a program
// that uses a global does; bare: it imports nothing (source.Graph.Bare),
// and the job has no globals.
func BenchmarkRunParts(b *testing.B) {
	for _, c := range []struct {
		name string
		job  func(v *VM) *Job
	}{
		{"globals", func(v *VM) *Job { return mainJob(v, `export default "hello, world"`) }},
		{"bare", func(v *VM) *Job {
			j := mainJob(v, "")
			j.Input = nil
			j.Load = func(string) (string, error) { return `export default "hello, world"`, nil }
			return j
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var run, back, start []time.Duration
			for b.Loop() {
				t0 := time.Now()
				v, err := New()
				if err == nil {
					err = v.Prepare() // as a Runtime's prepared VM
				}
				start = append(start, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				j := c.job(v)
				t := time.Now()
				if o := v.Run(j); o.Kind != OK {
					b.Fatal(o)
				}
				t2 := time.Now()
				v.Close()
				run, back = append(run, t2.Sub(t)), append(back, time.Since(t2))
			}
			slices.Sort(run)
			slices.Sort(back)
			slices.Sort(start)
			b.ReportMetric(float64(start[len(start)/2].Nanoseconds())/1000, "new-p50-µs")
			b.ReportMetric(float64(run[len(run)/2].Nanoseconds())/1000, "run-p50-µs")
			b.ReportMetric(float64(back[len(back)/2].Nanoseconds())/1000, "rewind-p50-µs")
		})
	}
}

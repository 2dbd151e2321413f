package engine

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/quickjs"
)

func BenchmarkRawNewClose(b *testing.B) {
	for i := 0; i < b.N; i++ {
		vm, _ := quickjs.NewVM()
		vm.Eval("1+2", quickjs.EvalGlobal)
		vm.Close()
	}
}

func BenchmarkNew(b *testing.B) {
	for i := 0; i < b.N; i++ {
		v, err := New()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		v.Close()
		b.StartTimer()
	}
}

func BenchmarkClose(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		v, _ := New()
		b.StartTimer()
		v.Close()
	}
}

func BenchmarkRun(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		v, _ := New()
		j := helloJob(v)
		b.StartTimer()
		if o := v.Run(j); o.Kind != OK {
			b.Fatal(o)
		}
		b.StopTimer()
		v.Close()
		b.StartTimer()
	}
}

// helloJob is BenchmarkRun's job: a hello-world entry that imports the
// globals module.
func helloJob(v *VM) *Job {
	return &Job{
		Entry: "/main.js", Fn: "default", Console: -1, Args: `["a"]`, Globals: `[]`, Imports: `["a"]`,
		Resolve: func(base, spec string) (string, error) { return spec, nil },
		Load: func(name string) (string, error) {
			return `import {} from "` + v.GlobalsModule() + `";export default "hello"`, nil
		},
		Call:    func(id int, raw []any, wire string, encoded bool) Reply { return Reply{} },
		Pending: func() int { return 0 },
		Stop:    make(chan struct{}),
	}
}

// BenchmarkRunPlacement measures where a VM's run is fast: right after New
// on the same goroutine (its memory hot in this CPU's cache), after a pause,
// on a VM made by another goroutine, and beside a goroutine that makes VMs
// without pause. It reports the median Run (RATIONALE.md, "Tried: the run
// on the caller's goroutine").
func BenchmarkRunPlacement(b *testing.B) {
	pause := func() { time.Sleep(300 * time.Microsecond) }
	elsewhere := func() *VM {
		ch := make(chan *VM)
		go func() { v, _ := New(); ch <- v }()
		return <-ch
	}
	here := func() *VM { v, _ := New(); return v }
	for _, c := range []struct {
		name   string
		make   func() *VM
		pause  bool
		beside bool
	}{
		{"hot", here, false, false},
		{"after-pause", here, true, false},
		{"made-elsewhere-after-pause", elsewhere, true, false},
		{"beside-new", here, false, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var stop atomic.Bool
			done := make(chan struct{})
			if c.beside {
				go func() {
					defer close(done)
					for !stop.Load() {
						v, _ := New()
						v.Close()
					}
				}()
			}
			ds := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				v := c.make()
				if c.pause {
					pause()
				}
				t0 := time.Now()
				if o := v.Run(helloJob(v)); o.Kind != OK {
					b.Fatal(o)
				}
				ds = append(ds, time.Since(t0))
				v.Close()
			}
			if c.beside {
				stop.Store(true)
				<-done
			}
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1000, "p50-µs")
		})
	}
}

//go:build !airlock_anonmem

package wasmvm

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/qjs"
)

// BenchmarkBackends alternates the backends available in the build, one
// workload run at a time, and reports each one's fastest run: fib(27) and
// the 100k-object workload in one sandbox kept (fib27, data100k) and in a
// new sandbox from the snapshot each run (data100k-fresh), in CPU time of
// the thread; a sync host call f(i) (ns per call) and a hello cycle from
// the pool (a sandbox, "1+2", its close), in wall time: wazero and the
// module translated to Go, on the same image, allocator and stop checks
// (with the tag airlock_wazero, wazero only).
func BenchmarkBackends(b *testing.B) {
	type runner struct {
		name string
		sn   *Snapshot
		s    *Sandbox
		best map[string]time.Duration
	}
	ctx := context.Background()
	opts := &SandboxOptions{MemoryLimit: 512 << 20}
	var rs []*runner
	for _, be := range []backend{backendWazero, backendWasm2go} {
		e, err := newEngineOn(ctx, be, &EngineOptions{NoCache: true}, qjs.WASM, qjs.DATA)
		if err != nil {
			continue // wasm2go: not in this build
		}
		b.Cleanup(func() { e.Close(ctx) })
		sn, err := e.NewSnapshot(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		s, err := sn.NewSandbox(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close(ctx) })
		wasmEval(b, s, fibSrc)
		if err := s.DefineFunc(ctx, "f", func(_ context.Context, args []Value) (Value, error) {
			return Value{Kind: Number, Number: args[0].Number + 1}, nil
		}); err != nil {
			b.Fatal(err)
		}
		name := map[backend]string{backendWazero: "wazero", backendWasm2go: "wasm2go"}[be]
		rs = append(rs, &runner{name: name, sn: sn, s: s, best: map[string]time.Duration{}})
	}
	loop := "for (let i = 0; i < " + strconv.Itoa(callLoop) + "; i++) f(i)"
	keep := func(r *runner, k string, d time.Duration) {
		if old, ok := r.best[k]; !ok || d < old {
			r.best[k] = d
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b.Loop() {
		for range 3 {
			for _, r := range rs {
				t := threadCPU(b)
				wasmEval(b, r.s, "fib(27)")
				keep(r, "fib27-ms", threadCPU(b)-t)
			}
		}
		for _, r := range rs {
			t := threadCPU(b)
			wasmEval(b, r.s, dataSrc)
			keep(r, "data100k-ms", threadCPU(b)-t)
		}
		for _, r := range rs {
			s, err := r.sn.NewSandbox(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			t := threadCPU(b)
			wasmEval(b, s, dataSrc)
			keep(r, "data100k-fresh-ms", threadCPU(b)-t)
			s.Close(ctx)
		}
		for range 3 {
			for _, r := range rs {
				t := time.Now()
				wasmEval(b, r.s, loop)
				keep(r, "hostcall-ns", time.Since(t)/callLoop)
			}
		}
		for range 3 {
			for _, r := range rs {
				t := time.Now()
				for range 100 {
					helloCycle(b, r.sn)
				}
				keep(r, "hello-pooled-us", time.Since(t)/100)
			}
		}
	}
	for _, r := range rs {
		for k, d := range r.best {
			switch {
			case k[len(k)-3:] == "-ms":
				b.ReportMetric(float64(d.Microseconds())/1000, r.name+"-"+k)
			case k[len(k)-3:] == "-us":
				b.ReportMetric(float64(d.Nanoseconds())/1000, r.name+"-"+k)
			default:
				b.ReportMetric(float64(d.Nanoseconds()), r.name+"-"+k)
			}
		}
	}
}

// Package bench measures Airlock through its public API beside the floor
// its targets are quoted against: the raw modernc.org/quickjs engine (a
// bare VM, one evaluation, closed; its RegisterFunc calls), in the same
// run. It is a module of its own so that the floor's engine is no
// dependency of Airlock's. BENCHMARKS.md records the commands and results.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/quickjs"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/engine"
)

const (
	helloJS = `export default "hello, world"`
	helloTS = `const greeting: string = "hello, world"; export default greeting satisfies string;`
	logJS   = `console.log("hello, world"); export default 1`
	// localeJS formats a total, a date in a time zone and sorts names with
	// the toLocale* methods and localeCompare, which the engine had before
	// Intl (with its own answers), so that the same program measures both.
	localeJS = `export default [(1234.5).toLocaleString("en-US", { style: "currency", currency: "USD" }),
		new Date(0).toLocaleDateString("en-US", { timeZone: "America/New_York" }),
		["Émile", "adam", "Zoë", "Adam"].sort((a, b) => a.localeCompare(b))]`
)

// rawRun is the engine floor: a fresh VM, one evaluation, closed.
func rawRun(b *testing.B) {
	vm, err := quickjs.NewVM()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := vm.Eval("1+2", quickjs.EvalGlobal); err != nil {
		b.Fatal(err)
	}
	vm.Close()
}

func BenchmarkColdStart(b *testing.B) {
	b.Run("raw-floor", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				rawRun(b)
			}
		})
	})
	for _, c := range []struct {
		name     string
		src      string
		lang     airlock.Language
		prepared int
	}{
		{"js", helloJS, airlock.JavaScript, 0},
		{"ts", helloTS, airlock.TypeScript, 0},
		{"ts-distinct", "", airlock.TypeScript, 0},
		{"js-locale", localeJS, airlock.JavaScript, 0},
		{"js-log", logJS, airlock.JavaScript, 0},
		// No sandbox prepared ahead of a run: each run's sandbox is made
		// (or rewound to the image) after the run arrives.
		{"js-unprepared", helloJS, airlock.JavaScript, -1},
		{"ts-unprepared", helloTS, airlock.TypeScript, -1},
	} {
		b.Run(c.name, func(b *testing.B) {
			rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: c.prepared})
			defer rt.Close()
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					src := c.src
					if src == "" {
						// A source never seen before, so nothing can be cached.
						src = helloTS + "\nexport const n: number = " + strconv.FormatInt(n.Add(1), 10) + strconv.FormatInt(time.Now().UnixNano(), 10) + ";"
					}
					ex, err := rt.Run(context.Background(), src, airlock.Options{Language: c.lang})
					if err != nil {
						b.Fatal(err)
					}
					if res := ex.Wait(); res.Status != airlock.StatusSuccess {
						b.Fatal(res.Error)
					}
				}
			})
		})
	}
}

// BenchmarkWarmLatency measures Run→Wait of a JavaScript hello-world on a
// Runtime that has its sandboxes prepared, as when requests arrive with
// gaps between them; it reports the p50 and p99 latency (ns/op includes
// the gaps). The timer is not stopped for the gaps: stopping it reads the
// memory statistics, which stops the world and doubled the p50.
func BenchmarkWarmLatency(b *testing.B) {
	// Data globals, as an agent's run gets a few: they cross into the
	// sandbox through the value codec.
	data := map[string]any{
		"input": map[string]any{"rows": []any{map[string]any{"id": 1, "name": "a"}, map[string]any{"id": 2, "name": "b"}}},
		"limit": 10,
	}
	for _, c := range []struct {
		name    string
		src     string
		lang    airlock.Language
		globals map[string]any
	}{{"js", helloJS, airlock.JavaScript, nil}, {"ts", helloTS, airlock.TypeScript, nil},
		{"js-locale", localeJS, airlock.JavaScript, nil},
		// A hello that logs: its module imports the globals module, where
		// the hellos above are bare (source.Graph.Bare).
		{"js-log", logJS, airlock.JavaScript, nil},
		{"js-globals", `export default input.rows.length + limit`, airlock.JavaScript, data},
		// Plain JavaScript in the default language, TypeScript.
		{"ts-plain", helloJS, airlock.TypeScript, nil}} {
		b.Run(c.name, func(b *testing.B) {
			rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: 2})
			defer rt.Close()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// A gap between requests, in which the runtime prepares its
				// sandboxes (this module cannot see how many it holds ready);
				// spun rather than slept, so that the measure is the run and
				// not the wake-up of parked threads.
				for t := time.Now(); time.Since(t) < time.Millisecond; {
					runtime.Gosched()
				}
				start := time.Now()
				ex, err := rt.Run(context.Background(), c.src, airlock.Options{Language: c.lang, Globals: c.globals})
				if err != nil {
					b.Fatal(err)
				}
				ex.Wait()
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkHostCall measures one call from the sandbox to a Go function and
// back, against a raw RegisterHostFunc call; b.N calls run in one program.
// cpu-ns/op is the process's CPU time per call (the garbage collector's
// included), steadier than ns/op when other work shares the machine.
func BenchmarkHostCall(b *testing.B) {
	loop := func(call string) string {
		return `let s = 0; for (let i = 0; i < n; i++) s += ` + call + `; export default s`
	}
	b.Run("raw-floor", func(b *testing.B) {
		vm, _ := quickjs.NewVM()
		defer vm.Close()
		vm.RegisterHostFunc("f", func(args []any) (any, error) { return args[0], nil })
		b.ResetTimer()
		cpu := cpuNanos()
		if _, err := vm.Eval(fmt.Sprintf(`{ let s = 0; for (let i = 0; i < %d; i++) s += f(i); s }`, b.N), quickjs.EvalGlobal); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
	})
	// The same with a string in and out.
	b.Run("raw-floor-string", func(b *testing.B) {
		vm, _ := quickjs.NewVM()
		defer vm.Close()
		vm.RegisterHostFunc("f", func(args []any) (any, error) { return args[0], nil })
		b.ResetTimer()
		cpu := cpuNanos()
		if _, err := vm.Eval(fmt.Sprintf(`{ let s = 0; for (let i = 0; i < %d; i++) s += f("hello").length; s }`, b.N), quickjs.EvalGlobal); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
	})
	// The floor's typed calls: RegisterFunc converts the arguments to the
	// function's parameter types by reflection.
	for _, c := range []struct {
		name string
		call string
		fn   any
	}{
		{"raw-floor-int", "f(i)", func(n int) int { return n }},
		{"raw-floor-func-string", `f("hello").length`, func(s string) string { return s }},
		// A struct is no parameter RegisterFunc converts: the object
		// comes as its JSON text, decoded as its documentation says.
		{"raw-floor-struct", "f({ n: i, tag: 'x' })", func(o *quickjs.Object) (int, error) {
			var p point
			err := o.Into(&p)
			return p.N, err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			vm, _ := quickjs.NewVM()
			defer vm.Close()
			if err := vm.RegisterFunc("f", c.fn, false); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu := cpuNanos()
			if _, err := vm.Eval(fmt.Sprintf(`{ let s = 0; for (let i = 0; i < %d; i++) s += %s; s }`, b.N, c.call), quickjs.EvalGlobal); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
	for _, c := range []struct {
		name string
		call string
		fn   any
	}{
		{"sync", "f(i)", func(n float64) float64 { return n }},
		{"sync-int", "f(i)", func(n int) int { return n }},
		{"sync-struct", "f({ n: i, tag: 'x' })", func(p point) int { return p.N }},
		{"sync-string", `f("hello").length`, func(s string) string { return s }},
		{"sync-object", "f({ n: i, tag: 'x' }).n", func(m map[string]any) map[string]any { return m }},
		{"async", "await f(i)", airlock.Async(func(n float64) float64 { return n })},
		{"json-object", "f({ n: i, tag: 'x' }).n", airlock.JSONFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
			return args[1 : len(args)-1], nil
		})},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu := cpuNanos()
			opts := airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"f": c.fn, "n": b.N}}
			// Millions of calls spend more than the default budget for
			// values crossing (26 bytes a string call).
			ex, err := callRuntime.Run(context.Background(), loop(c.call), opts)
			if err != nil {
				b.Fatal(err)
			}
			res := ex.Wait()
			if res.Status != airlock.StatusSuccess {
				b.Fatal(res.Error)
			}
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// point is the struct argument of the host call benchmarks.
type point struct {
	N   int    `json:"n"`
	Tag string `json:"tag"`
}

var benchRuntime = airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: time.Minute})

// callRuntime is benchRuntime with a value budget for millions of host calls.
var callRuntime = airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: time.Minute, MaxValueBytes: 1 << 40})

func runBench(b *testing.B, src string, opts airlock.Options) *airlock.Result {
	ex, err := benchRuntime.Run(context.Background(), src, opts)
	if err != nil {
		b.Fatal(err)
	}
	return ex.Wait()
}

// megabyte is a ~1 MB object: 5000 records of a few fields.
func megabyte() []map[string]any {
	rows := make([]map[string]any, 5000)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "name": "user-" + strconv.Itoa(i), "email": "user" + strconv.Itoa(i) + "@example.com",
			"tags": []any{"a", "b", "c"}, "score": float64(i) * 1.5, "active": i%2 == 0,
			"bio": strings.Repeat("lorem ipsum ", 12)}
	}
	return rows
}

const megabyteJS = `const rows = []; for (let i = 0; i < 5000; i++) rows.push({ id: i, name: "user-" + i,
	email: "user" + i + "@example.com", tags: ["a", "b", "c"], score: i * 1.5, active: i % 2 === 0,
	bio: "lorem ipsum ".repeat(12) });`

// BenchmarkMarshal1MB moves a ~1 MB object each way, against the engine's
// own JSON round trip of the same data as the floor.
func BenchmarkMarshal1MB(b *testing.B) {
	data := megabyte()
	b.Run("raw-floor", func(b *testing.B) {
		vm, _ := quickjs.NewVM()
		defer vm.Close()
		vm.Eval(megabyteJS+"globalThis.rows = rows;", quickjs.EvalGlobal)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := vm.Eval(`JSON.parse(JSON.stringify(rows)).length`, quickjs.EvalGlobal); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("host-to-sandbox", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res := runBench(b, `export default input.length`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"input": data}})
			if res.Result != 5000.0 {
				b.Fatal(res.Error)
			}
		}
	})
	b.Run("sandbox-to-host", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res := runBench(b, megabyteJS+`export default rows`, airlock.Options{Language: airlock.JavaScript})
			if res.Status != airlock.StatusSuccess {
				b.Fatal(res.Error)
			}
		}
	})
	b.Run("build-only", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res := runBench(b, megabyteJS+`export default rows.length`, airlock.Options{Language: airlock.JavaScript})
			if res.Status != airlock.StatusSuccess {
				b.Fatal(res.Error)
			}
		}
	})
}

// BenchmarkIdleSandboxMemory holds many idle sandboxes and reports the
// resident memory each one costs, against raw VMs. The Go heap's free
// memory is given back to the system before the first reading: memory
// that earlier iterations freed would otherwise be reused uncounted
// (resident before and after), and the figure would depend on the
// iteration (RATIONALE.md, "Idle executor memory").
func BenchmarkIdleSandboxMemory(b *testing.B) {
	const n = 200
	measure := func(b *testing.B, create func() func()) { measureIdle(b, n, 0, create) }
	b.Run("raw-floor", func(b *testing.B) {
		measure(b, func() func() {
			vm, _ := quickjs.NewVM()
			vm.Eval("1+2", quickjs.EvalGlobal)
			return func() { vm.Close() }
		})
	})
	b.Run("airlock", func(b *testing.B) {
		measure(b, func() func() {
			vm, err := engine.New()
			if err != nil {
				b.Fatal(err)
			}
			return vm.Close
		})
	})
	// An executor that ran one step and waits for the next: its session
	// holds the sandbox. executor: read at once; executor-idle: read after
	// the executors waited idle long enough to trim (a second without a
	// task, then its VM gives back what it can make again).
	executor := func() func() {
		ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if err := ex.Init(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := ex.Run(ctx, "return 1 + 2"); err != nil {
			b.Fatal(err)
		}
		return func() { ex.Cleanup(ctx) }
	}
	b.Run("executor", func(b *testing.B) { measure(b, executor) })
	b.Run("executor-idle", func(b *testing.B) { measureIdle(b, n, 1500*time.Millisecond, executor) })
}

// measureIdle makes n sandboxes with create, waits settle, and reports
// the memory each one added.
func measureIdle(b *testing.B, n int, settle time.Duration, create func() func()) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		debug.FreeOSMemory()
		before, beforePSS := rss(), pss()
		closers := make([]func(), n)
		for j := range closers {
			closers[j] = create()
		}
		time.Sleep(settle)
		runtime.GC()
		after, afterPSS := rss(), pss()
		for _, c := range closers {
			c()
		}
		b.ReportMetric(float64(after-before)/float64(n)/1024, "KiB-RSS/sandbox")
		b.ReportMetric(float64(afterPSS-beforePSS)/float64(n)/1024, "KiB-PSS/sandbox")
	}
}

// pss returns the proportional set size of the process in bytes: shared
// pages (a snapshot's image) count divided among those that map them.
func pss() int64 {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// rss returns the resident set size of the process in bytes.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// BenchmarkStop measures how long a run takes to settle after Terminate,
// for programs that fight it: a tight loop, a loop of long native calls,
// one long native call that allocates as it goes, a loop of the largest
// BigInt conversions the engine allows, sorts of long arrays with a
// comparator, and large single fills, copies and zeroings of memory (one
// 512 MiB ArrayBuffer, fill, set and slice of 128-256 MiB arrays, a loop of
// 256 KiB fills, a loop keeping new 200 KB buffers). Each run
// is stopped once it is under way (20 ms after it starts, or after its
// set-up: the given time, or its call of started()); "stop-ms" is the worst
// case over the iterations.
func BenchmarkStop(b *testing.B) {
	for _, c := range []struct {
		name, src string
		after     time.Duration
	}{
		{"tight-loop", `for (;;) {}`, 0},
		{"catching-loop", `for (;;) { try { for (;;) {} } catch {} }`, 0},
		{"typed-array-sorts", `const t = new Float64Array(4e6); for (;;) t.sort()`, 0},
		{"sparse-stringify", `const a = []; a.length = 2**32 - 1; export default JSON.stringify(a)`, 0},
		{"largest-bigint-to-string", `const x = 2n ** 1000000n - 1n; for (;;) String(x)`, 0},
		{"array-sorts", `const a = new Array(2**20).fill(0).map((_, i) => i % 1000); for (;;) a.sort((x, y) => x - y)`, 400 * time.Millisecond},
		{"large-arraybuffer", `new ArrayBuffer(2**29)`, 0},
		{"typed-array-fills", `const d = new Uint8Array(2**28); started(); for (;;) d.fill(1)`, 0},
		{"typed-array-sets", `const s = new Uint8Array(2**27), d = new Uint8Array(2**27); started(); for (;;) d.set(s)`, 0},
		{"typed-array-slices", `const s = new Uint8Array(2**27); started(); for (;;) s.slice()`, 0},
		{"small-fills", `const d = new Uint8Array(2**18); for (;;) d.fill(1)`, 0},
		{"kept-buffers", `const a = []; for (;;) a.push(new Uint8Array(200000))`, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			var worst time.Duration
			for i := 0; i < b.N; i++ {
				started := make(chan struct{})
				ex, err := benchRuntime.Run(context.Background(), c.src, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 1 << 30,
					Globals: map[string]any{"started": func() { close(started) }}})
				if err != nil {
					b.Fatal(err)
				}
				if strings.Contains(c.src, "started()") {
					select {
					case <-started:
					case <-ex.Done():
						b.Fatalf("ended before started(): %v", ex.Wait().Error)
					}
				}
				time.Sleep(20*time.Millisecond + c.after)
				start := time.Now()
				ex.Terminate("benchmark")
				<-ex.Done()
				worst = max(worst, time.Since(start))
				if res := ex.Wait(); res.Status != airlock.StatusTerminated {
					b.Fatalf("status %s: %v", res.Status, res.Error)
				}
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "stop-ms")
		})
	}
}

// BenchmarkAllocHeavy runs a program that makes 20,000 small objects and
// strings, alone and on every CPU at once: the cost of the engine's
// allocator (see RATIONALE.md "Each VM allocates from its own heap").
func BenchmarkAllocHeavy(b *testing.B) {
	const src = `let a = []; for (let i = 0; i < 20000; i++) a.push({i, s: "x" + i}); export default a.length`
	run := func(rt *airlock.Runtime) {
		ex, err := rt.Run(context.Background(), src, airlock.Options{Language: airlock.JavaScript})
		if err != nil {
			b.Fatal(err)
		}
		if res := ex.Wait(); res.Status != airlock.StatusSuccess {
			b.Fatal(res.Error)
		}
	}
	b.Run("serial", func(b *testing.B) {
		rt := airlock.NewRuntime(airlock.RuntimeConfig{})
		defer rt.Close()
		for i := 0; i < b.N; i++ {
			run(rt)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		rt := airlock.NewRuntime(airlock.RuntimeConfig{})
		defer rt.Close()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				run(rt)
			}
		})
	})
}

const (
	fibSrc  = "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }"
	dataSrc = `(() => {
		const a = [];
		for (let i = 0; i < 100000; i++) a.push({id: i, name: 'n' + i, tags: ['x', 'y'], v: i * 1.5});
		const b = JSON.parse(JSON.stringify(a));
		return b.filter(o => o.id % 3 == 0).map(o => o.v).reduce((x, y) => x + y, 0);
	})()`
)

// rawVM is a raw VM, the floor, that has run setup (if any), closed at
// the benchmark's end.
func rawVM(b *testing.B, setup string) *quickjs.VM {
	b.Helper()
	vm, err := quickjs.NewVM()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { vm.Close() })
	if setup != "" {
		if _, err := vm.Eval(setup, quickjs.EvalGlobal); err != nil {
			b.Fatal(err)
		}
	}
	return vm
}

// BenchmarkCompute runs fib(27) and a 100k-object data workload, each in a
// raw VM and in a sandbox (its start included, the stop checks on).
func BenchmarkCompute(b *testing.B) {
	for _, c := range []struct{ name, setup, expr string }{
		{"fib27", fibSrc, "fib(27)"},
		{"data100k", "", dataSrc},
	} {
		b.Run(c.name+"/raw-floor", func(b *testing.B) {
			vm := rawVM(b, c.setup)
			for b.Loop() {
				if _, err := vm.Eval(c.expr, quickjs.EvalGlobal); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/airlock", func(b *testing.B) {
			src := c.setup + "\nexport default " + c.expr
			for b.Loop() {
				res := runBench(b, src, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 512 << 20})
				if res.Status != airlock.StatusSuccess {
					b.Fatal(res.Error)
				}
			}
		})
	}
}

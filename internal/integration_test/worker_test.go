package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// A long grace: the hammer stops runs while the workers are loaded, and a
// kill there would end the other runs of a worker too.
var workerRuntime = airlock.NewRuntime(airlock.RuntimeConfig{Workers: 2, MaxDuration: 20 * time.Second, WorkerGrace: 10 * time.Second})

// Worker-process mode gives the results of in-process runs, for every kind
// of value, bridge and outcome.
func TestWorkers_SameResults(t *testing.T) {
	add := func(a, b float64) float64 { return a + b }
	echo := airlock.JSONFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil })
	slow := airlock.Async(func(ctx context.Context, ms float64) (string, error) {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return "slept " + strconv.Itoa(int(ms)), nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	fail := func() error { return errors.New("the host says no") }
	boom := func() int { panic("a secret of the host") }
	jboom := airlock.JSONFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { panic("a secret of the host") })
	quit := func() { runtime.Goexit() }
	for _, c := range []struct {
		name string
		src  string
		opts airlock.Options
	}{
		{"values", `export default { n: 1.5, big: 12345678901234567890n, m: new Map([[1, "a"]]), s: new Set([1]), d: new Date(0), u: undefined, nan: NaN, bytes: new Uint8Array([1, 2]), nested: [[{}]] }`, airlock.Options{}},
		{"globals", `export default input.rows.length + add(2, 3)`, airlock.Options{Globals: map[string]any{"input": map[string]any{"rows": []int{1, 2}}, "add": add}}},
		{"async", `export default await Promise.all([slow(30), slow(10)])`, airlock.Options{Globals: map[string]any{"slow": slow}}},
		{"json", `export default echo({ a: [1, "x"] }, 2)`, airlock.Options{Globals: map[string]any{"echo": echo}}},
		{"imports", `import { add, base } from "calc"; import * as all from "calc"; export default add(base, 1) + Object.keys(all).length`, airlock.Options{Imports: map[string]airlock.Module{"calc": {"add": add, "base": 10}}}},
		{"reports and logs", `console.log("a", 1); console.warn({ b: 2 }); report([1]); report("two"); export default 0`, airlock.Options{Report: func(any) {}}},
		{"host error", `export default fail()`, airlock.Options{Globals: map[string]any{"fail": fail}}},
		{"typescript error", "const x: number = 1;\nexport default (null as any).f(x);", airlock.Options{Filename: "t.ts"}},
		{"link error", `import x from "nowhere"; export default x`, airlock.Options{}},
		{"export with args", `export function mul(a, b) { return a * b }`, airlock.Options{Execute: airlock.Execute{Fn: "mul", Args: []any{6, 7}}}},
		{"memory", `const a = []; for (;;) a.push(new Array(1e4).fill(1))`, airlock.Options{MemoryLimitBytes: 16 << 20}},
		{"host panic", `let r; try { boom() } catch (e) { r = e.message } export default r`, airlock.Options{Globals: map[string]any{"boom": boom}}},
		{"host panic in a JSON function", `let r; try { jboom() } catch (e) { r = e.message } export default r`, airlock.Options{Globals: map[string]any{"jboom": jboom}}},
		{"host Goexit", `let r; try { quit() } catch (e) { r = e.message } export default r`, airlock.Options{Globals: map[string]any{"quit": quit}}},
		{"modules", `import { k } from "./k.js"; export default k`, airlock.Options{Modules: map[string]string{"./k.js": "export const k = 'module'"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := comparable(t, runOpts(t, c.src, c.opts))
			ex, err := workerRuntime.Run(context.Background(), c.src, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := comparable(t, ex.Wait()); got != want {
				t.Fatalf("worker:\n%s\nin process:\n%s", got, want)
			}
		})
	}
}

func TestWorkers_TerminateAndContext(t *testing.T) {
	ex, err := workerRuntime.Run(context.Background(), `for (;;) {}`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, func() { ex.Terminate("enough") })
	res := ex.Wait()
	if res.Status != airlock.StatusTerminated || res.Error.Message != "terminated: enough" {
		t.Fatalf("%s %v", res.Status, res.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	ex, _ = workerRuntime.Run(ctx, `for (;;) {}`, airlock.Options{})
	if res := ex.Wait(); res.Status != airlock.StatusTerminated {
		t.Fatalf("%s %v", res.Status, res.Error)
	}
	// Options are checked in the host, as in process.
	if _, err := workerRuntime.Run(context.Background(), `1`, airlock.Options{MemoryLimitBytes: -1}); err == nil {
		t.Fatal("invalid options accepted")
	}
	if _, err := workerRuntime.Run(context.Background(), `1`, airlock.Options{Globals: map[string]any{"o": map[string]any{"f": func() {}}}}); err == nil ||
		!strings.Contains(err.Error(), "worker-process mode") {
		t.Fatalf("a nested function: %v", err)
	}
}

// A worker that does not stop when told is killed after a grace period,
// and the run settles as the host decided.
func TestWorkers_StuckWorkerKilled(t *testing.T) {
	t.Setenv("AIRLOCK_WORKER_TEST_STUCK", "1")
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1, WorkerGrace: 200 * time.Millisecond})
	defer rt.Close()
	ex, err := rt.Run(context.Background(), `for (;;) {}`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, func() { ex.Terminate("budget") })
	start := time.Now()
	res := ex.Wait()
	if res.Status != airlock.StatusTerminated || !strings.Contains(res.Error.Message, "terminated: budget") ||
		!strings.Contains(res.Error.Message, "killed") || time.Since(start) > 30*time.Second { // the worker never stops by itself
		t.Fatalf("%s %v after %v", res.Status, res.Error, time.Since(start))
	}
}

// A stop the host decided wins over what the worker reports, as in process:
// here the run finishes right after the host function that stops it
// returns, before the worker hears of the stop, and still settles
// terminated (a refused call ending the run in error, before, made a CI run
// fail once).
func TestWorkers_HostStopWins(t *testing.T) {
	for i := 0; i < 20; i++ {
		var ex *airlock.Execution
		ready := make(chan struct{})
		stopNow := func() {
			<-ready
			ex.Terminate("the host decided")
		}
		var err error
		ex, err = workerRuntime.Run(context.Background(), `stopNow(); export default "finished"`,
			airlock.Options{Globals: map[string]any{"stopNow": stopNow}})
		if err != nil {
			t.Fatal(err)
		}
		close(ready)
		res := ex.Wait()
		if res.Status != airlock.StatusTerminated || res.Error.Message != "terminated: the host decided" {
			t.Fatalf("run %d: %s %v %v", i, res.Status, res.Result, res.Error)
		}
	}
}

// One native call over a large string runs for seconds after a stop in
// process (replaceAll over 64 MiB: ~2 s, no checkpoint, one allocation at
// the end); in a worker the run ends when the grace period runs out, here
// 100 ms, and the next run gets a fresh worker.
func TestWorkers_LongNativeCallEndsWithGrace(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1, WorkerGrace: 100 * time.Millisecond})
	defer rt.Close()
	ex, err := rt.Run(context.Background(), `const s = "ab".repeat(2**25); for (;;) s.replaceAll("a", "cc").length`,
		airlock.Options{MemoryLimitBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	ex.Terminate("budget")
	res := ex.Wait()
	if d := time.Since(start); res.Status != airlock.StatusTerminated || d > 2*time.Second {
		t.Fatalf("%s %v after %v", res.Status, res.Error, d)
	}
	ex, _ = rt.Run(context.Background(), `export default "alive"`, airlock.Options{})
	if res := ex.Wait(); res.Result != "alive" {
		t.Fatalf("%s %v", res.Status, res.Error)
	}
}

// BenchmarkWorkers compares worker-process mode with in-process runs, in
// the same run: a hello-world's latency, and a sync host call's round trip.
func BenchmarkWorkers(b *testing.B) {
	inProc := airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: time.Minute})
	workers := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1, MaxDuration: time.Minute})
	defer inProc.Close()
	defer workers.Close()
	// The floor of any host call across processes: one byte echoed by a
	// child process (cat) through pipes.
	b.Run("pipe-round-trip-floor", func(b *testing.B) {
		cmd := exec.Command("cat")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Skip("no cat:", err)
		}
		defer func() { in.Close(); cmd.Wait() }()
		buf := make([]byte, 1)
		for b.Loop() {
			in.Write(buf)
			if _, err := io.ReadFull(out, buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, rt := range []struct {
		name string
		rt   *airlock.Runtime
	}{{"in-process", inProc}, {"worker", workers}} {
		b.Run("hello/"+rt.name, func(b *testing.B) {
			for b.Loop() {
				ex, _ := rt.rt.Run(context.Background(), `export default "hello"`, airlock.Options{Language: airlock.JavaScript})
				if res := ex.Wait(); res.Result != "hello" {
					b.Fatal(res.Error)
				}
			}
		})
		b.Run("host-call/"+rt.name, func(b *testing.B) {
			ex, _ := rt.rt.Run(context.Background(), `let s = 0; for (let i = 0; i < n; i++) s += f(i); export default s`,
				airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"n": b.N, "f": func(x float64) float64 { return x }}})
			if res := ex.Wait(); res.Status != airlock.StatusSuccess {
				b.Fatal(res.Error)
			}
		})
	}
}

// Many runs at once in worker processes, normal and hostile mixed: each
// settles with its own status.
func TestWorkers_Hammer(t *testing.T) {
	hammer(t, workerRuntime, 36, []hammerCase{
		{`export default 1 + 1`, airlock.StatusSuccess},
		{`for (;;) {}`, airlock.StatusTerminated},
		{`const a = []; for (;;) a.push(new Array(1e4).fill(1))`, airlock.StatusMemory},
		{`null.boom`, airlock.StatusError},
		{`export default await Promise.all([tick(), tick()])`, airlock.StatusSuccess},
		{`Array.prototype.includes.call({ length: 2 ** 32 }, 1)`, airlock.StatusTerminated}, // a native loop, stopped where it is
	})
}

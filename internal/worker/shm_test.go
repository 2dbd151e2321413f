package worker_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/worker"
)

// Synchronous host calls travel through shared-memory slots: large
// arguments and results (over a slot's 16 KiB) take the pipe, a call that
// takes a while puts the caller to sleep and wakes it through the pipe, a
// slow call does not hold up another run's calls, more callers than slots
// fall back to the pipe, and a run stopped during a call frees its slot
// once the host answers. The results are the in-process ones.
func TestWorkers_SyncCallsThroughSharedMemory(t *testing.T) {
	// A long grace: 48 runs start at once in one worker, and under -race
	// on a loaded machine a stopped run whose VM is still being made took
	// more than the default second to settle, and the worker was killed.
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1, WorkerGrace: time.Minute})
	defer rt.Close()
	echo := func(s string) string { return s }
	nap := func(ctx context.Context, ms float64, s string) string {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
		}
		return s
	}
	globals := map[string]any{"echo": echo, "nap": nap}
	src := `const big = "x".repeat(100000) + "end";
		let n = 0;
		for (let i = 0; i < 300; i++) n += echo("a" + i).length;
		export default [n, echo(big) === big, nap(5, "slept"), nap(5, big) === big, echo("ü€😀")]`
	here, err := airlock.Eval(context.Background(), src, airlock.Options{Globals: globals})
	if err != nil {
		t.Fatal(err)
	}
	want := comparable(t, here)
	before := worker.SharedCalls()
	ex, err := rt.Run(context.Background(), src, airlock.Options{Globals: globals})
	if err != nil {
		t.Fatal(err)
	}
	if got := comparable(t, ex.Wait()); got != want {
		t.Fatalf("worker:\n%s\nin process:\n%s", got, want)
	}
	if n := worker.SharedCalls() - before; runtime.GOOS == "linux" && n < 300 {
		t.Fatalf("%d calls went through shared memory", n)
	}

	// A slow call in one run while another run calls quickly.
	slow, err := rt.Run(context.Background(), `export default nap(1500, "slow")`, airlock.Options{Globals: globals})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	fast, _ := rt.Run(context.Background(), `let n = 0; for (let i = 0; i < 200; i++) n += echo("b").length; export default n`, airlock.Options{Globals: globals})
	if res := fast.Wait(); res.Result != 200.0 || !slow.Running() {
		t.Fatalf("the fast run: %v %v after %v, the slow one still running: %v", res.Result, res.Error, time.Since(start), slow.Running())
	}
	if res := slow.Wait(); res.Result != "slow" {
		t.Fatalf("the slow run: %v %v", res.Result, res.Error)
	}

	// More callers than slots, half of them stopped during their call.
	const n = 48
	exs := make([]*airlock.Execution, n)
	for i := range exs {
		exs[i], err = rt.Run(context.Background(), `export default nap(200, "done")`, airlock.Options{Globals: globals})
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	for i := 0; i < n; i += 2 {
		exs[i].Terminate("stopped")
	}
	for i, ex := range exs {
		res := ex.Wait()
		if i%2 == 0 && res.Status != airlock.StatusTerminated || i%2 == 1 && res.Result != "done" {
			t.Fatalf("run %d: %s %v %v", i, res.Status, res.Result, res.Error)
		}
	}
	// Every slot is free again: 40 calls at once go through.
	for i := range 40 {
		exs[i], _ = rt.Run(context.Background(), `export default echo("again")`, airlock.Options{Globals: globals})
	}
	for i := range 40 {
		if res := exs[i].Wait(); res.Result != "again" {
			t.Fatalf("after the stops, run %d: %s %v", i, res.Status, res.Error)
		}
	}
}

// comparable is a Result's JSON without what differs from run to run.
func comparable(t *testing.T, res *airlock.Result) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "durationMs")
	delete(m, "memoryUsedBytes")
	for _, l := range m["logs"].([]any) {
		delete(l.(map[string]any), "timestamp")
	}
	b, _ = json.MarshalIndent(m, "", "  ")
	return string(b)
}

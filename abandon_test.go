package airlock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// blocker is a tool that ignores its context: it returns only when the
// test releases it, which the test does only after the run has returned.
// If the run waited for the tool, the safety release (long after any
// timeout) lets it return, and the test fails on the order of events: the
// run returned after the tool was released.
type blocker struct {
	release  chan struct{}
	entered  chan struct{}
	released atomic.Bool
	safety   *time.Timer
	returned chan struct{}
}

func newBlocker() *blocker {
	b := &blocker{release: make(chan struct{}), entered: make(chan struct{}, 16), returned: make(chan struct{}, 16)}
	b.safety = time.AfterFunc(blockerSafety, b.free)
	return b
}

func (b *blocker) free() {
	if b.released.CompareAndSwap(false, true) {
		close(b.release)
	}
}

// block is the tool's body: it tells the test it was entered and waits.
func (b *blocker) block() string {
	b.entered <- struct{}{}
	<-b.release
	b.returned <- struct{}{}
	return "late"
}

// after checks that the run returned before the tool was released, then
// releases it and waits for it to return.
func (b *blocker) after(t *testing.T) {
	t.Helper()
	b.safety.Stop()
	if b.released.Load() {
		t.Fatal("the run returned only after the blocked tool was released")
	}
	b.free()
	<-b.returned
}

// Timeouts, cancellations and Terminate hold against host functions that
// ignore their context: the run settles terminated while the call is still
// blocked in Go, the call is abandoned to finish on its own, and its late
// result is discarded. A 300 ms timeout used to return after the tool's 3 s.
func TestAbandon_BlockedHostCalls(t *testing.T) {
	type stopper func(ex *airlock.Execution, cancel context.CancelFunc)
	stops := map[string]stopper{
		"terminate": func(ex *airlock.Execution, _ context.CancelFunc) { ex.Terminate("test") },
		"cancel":    func(_ *airlock.Execution, cancel context.CancelFunc) { cancel() },
	}
	for _, mode := range []struct {
		name string
		rt   *airlock.Runtime
	}{{"in process", testRuntime()}, {"worker", workerRuntime()}} {
		for _, call := range []struct {
			name, src string
			async     bool
		}{
			{"sync", `export default block()`, false},
			{"sync loop after", `const r = block(); for (;;) {} export default r`, false},
			{"async", `export default await block()`, true},
			{"async all", `export default await Promise.all([block(), block()])`, true},
		} {
			for sname, stop := range stops {
				t.Run(mode.name+"/"+call.name+"/"+sname, func(t *testing.T) {
					b := newBlocker()
					var fn any = func() string { return b.block() }
					if call.async {
						fn = airlock.Async(fn)
					}
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					ex, err := mode.rt.Run(ctx, call.src, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"block": fn}})
					if err != nil {
						t.Fatal(err)
					}
					<-b.entered
					stop(ex, cancel)
					res := ex.Wait()
					b.after(t)
					wantStatus(t, res, airlock.StatusTerminated)
				})
			}
		}
	}
}

// A context's deadline, the usual way to bound a run, holds the same way.
func TestAbandon_Deadline(t *testing.T) {
	b := newBlocker()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ex, err := testRuntime().Run(ctx, `export default block()`, airlock.Options{Language: airlock.JavaScript,
		Globals: map[string]any{"block": func(context.Context) string { return b.block() }}})
	if err != nil {
		t.Fatal(err)
	}
	res := ex.Wait()
	b.after(t)
	wantStatus(t, res, airlock.StatusTerminated)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the run settled before its deadline: %v", res.Error)
	}
}

// An executor step's timeout and its context hold against a tool that
// ignores its context; the sandbox is left DIRTY, never reused.
func TestAbandon_ExecutorStep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		async bool
		cause string
	}{{"sync timeout", false, "timeout"}, {"async timeout", true, "timeout"}, {"sync cancel", false, "cancel"}, {"async cancel", true, "cancel"}} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBlocker()
			timeout := time.Hour
			if tc.cause == "timeout" {
				timeout = 50 * time.Millisecond
			}
			e, err := airlock.NewExecutor(airlock.ExecutorOptions{Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Cleanup(context.Background())
			if err := e.Init(context.Background()); err != nil {
				t.Fatal(err)
			}
			var fn any = func() string { return b.block() }
			if tc.async {
				fn = airlock.Async(fn)
			}
			if err := e.SendTools(context.Background(), map[string]any{"block": fn}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cause == "cancel" {
				go func() { <-b.entered; cancel() }()
			}
			_, err = e.Run(ctx, `await block()`)
			b.after(t)
			var xe *airlock.ExecutorError
			if !errors.As(err, &xe) || xe.Code != airlock.CodeExecTimeout {
				t.Fatalf("step: %v", err)
			}
			if s := e.State(); s != airlock.StateDirty {
				t.Fatalf("state %s after an abandoned step, want DIRTY", s)
			}
		})
	}
}

// blockerSafety releases a blocked tool that nothing else released, so that
// a run that waits for it fails the test instead of hanging it.
var blockerSafety = time.Minute

package wasmvm

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// nativeLoops are programs that run for minutes or forever, most of it in
// QuickJS's own C loops, with lengths far above the limits the old engine's
// kernel imposed. Each calls started() just before its loop.
var nativeLoops = []struct{ name, src string }{
	{"bytecode", "started(); for (;;) {}"},
	{"string indexOf", "const s = 'a'.repeat(1 << 24), p = 'a'.repeat(1 << 12) + 'b'; started(); s.indexOf(p)"},
	{"string includes", "const s = 'ab'.repeat(1 << 23), p = 'ab'.repeat(1 << 11) + 'c'; started(); s.includes(p)"},
	{"string lastIndexOf", "const s = 'a'.repeat(1 << 24), p = 'b' + 'a'.repeat(1 << 12); started(); s.lastIndexOf(p)"},
	{"array includes over 2^53 array-like", "started(); Array.prototype.includes.call({length: 2 ** 53 - 1}, 1)"},
	{"array indexOf over 2^53 array-like", "started(); Array.prototype.indexOf.call({length: 2 ** 53 - 1}, 1)"},
	{"join of 2^32 holes", "started(); new Array(2 ** 32 - 1).join('')"},
	{"sort of a 2^32 array-like", "started(); Array.prototype.sort.call({length: 2 ** 32 - 1})"},
	{"typed array sort", "const a = new Float64Array(1 << 21); for (let i = 0; i < a.length; i++) a[i] = (i * 7919) % 1000003; started(); for (;;) { a.sort(); a.reverse() }"},
	{"BigInt power and toString", "started(); (7n ** 3000000n).toString()"},
	{"regexp backtracking", "started(); /^(a+)+$/.test('a'.repeat(40) + 'b')"},
	{"JSON", "const s = JSON.stringify(Array.from({length: 1 << 18}, (_, i) => ({i, t: 'x' + i}))); started(); for (;;) JSON.stringify(JSON.parse(s))"},
	{"Array.from 5e6", "started(); for (;;) Array.from({length: 5e6}, (_, i) => i)"},
}

// runStopped runs src in a fresh sandbox, calls stop once the program
// called started(), and returns Eval's error. The order is by events: the
// stop comes after started(), and the test waits for Eval to return.
func runStopped(t *testing.T, src string, stop func(s *Sandbox)) error {
	t.Helper()
	s := newSandbox(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 1)
	err := s.DefineFunc(ctx, "started", func(context.Context, []Value) (Value, error) {
		started <- struct{}{}
		return Value{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Eval(ctx, src, "loop.js", Script)
		done <- err
	}()
	select {
	case <-started:
		stop(s)
		cancel = func() {}
	case err := <-done:
		t.Fatalf("ended before started(): %v", err)
	}
	err = <-done
	if again := func() error { _, err := s.Eval(context.Background(), "1", "x.js", Script); return err }(); !errors.Is(again, ErrSpent) {
		t.Errorf("after the stop: %v, want ErrSpent", again)
	}
	// A stopped sandbox rewinds like any other, unless its memory grew.
	if s.Reset() {
		if got := evalJSON(t, s, "typeof started"); got != `"undefined"` {
			t.Errorf("after Reset: typeof started = %s", got)
		}
	} else if grown := uint64(s.mod.Memory().Size()) > s.snap.ImageSize(); !grown {
		t.Error("Reset failed, and the memory did not grow")
	}
	return err
}

// TestTerminateNativeLoops: Terminate stops every loop class, native ones
// included, with no length limits on the builtins.
func TestTerminateNativeLoops(t *testing.T) {
	for _, c := range nativeLoops {
		t.Run(c.name, func(t *testing.T) {
			err := runStopped(t, c.src, func(s *Sandbox) { s.Terminate() })
			if !errors.Is(err, ErrTerminated) {
				t.Errorf("err = %v, want ErrTerminated", err)
			}
		})
	}
}

// TestContextStops: a cancelled context stops a native loop as Terminate
// does, and Eval returns the context's error.
func TestContextStops(t *testing.T) {
	s := newSandbox(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	err := s.DefineFunc(ctx, "started", func(context.Context, []Value) (Value, error) {
		cancel()
		return Value{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Eval(ctx, "started(); Array.prototype.includes.call({length: 2 ** 53 - 1}, 1)", "x.js", Script)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestTerminateBeforeRun: a Terminate that comes before the run stops it
// at its first check, and the program cannot catch it.
func TestTerminateBeforeRun(t *testing.T) {
	s := newSandbox(t, nil)
	s.Terminate()
	_, err := s.Eval(context.Background(), "try { for (;;) {} } catch (e) { 'caught' }", "x.js", Script)
	if !errors.Is(err, ErrTerminated) {
		t.Errorf("err = %v, want ErrTerminated", err)
	}
	s.Close(context.Background())
	s.Terminate() // after Close: a no-op, no fault
}

// TestGCDuringNativeLoop: a garbage collection completes while a sandbox
// runs a native loop. Code running in wasm cannot be preempted by the Go
// runtime, and a collection stops the world: with a plain flag check at loop
// headers (the first design) runtime.GC waited for the loop, and every
// other goroutine of the process with it, for as long as the loop ran. The
// loop checks now call into Go every tickEvery iterations, where the
// goroutine can be preempted.
func TestGCDuringNativeLoop(t *testing.T) {
	err := runStopped(t, "started(); 'a'.repeat(1 << 24).indexOf('a'.repeat(1 << 12) + 'b')", func(s *Sandbox) {
		runtime.GC() // hangs here if the guest holds the world
		s.Terminate()
	})
	if !errors.Is(err, ErrTerminated) {
		t.Errorf("err = %v, want ErrTerminated", err)
	}
}

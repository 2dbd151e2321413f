// Package hostwork runs the work the host does for a sandbox inside one of
// the engine's host calls (a TypeScript transform, a scan of a source, a
// collation) so that a stop does not wait for it.
//
// Such work runs in Go, on the VM's goroutine, where no interrupt of the
// engine reaches it: a transform of a large source takes seconds, and the
// run's Terminate, timeout, cancelled context or safety cap took effect only
// when it returned. [Do] runs the work on a goroutine of its own and waits
// for it or for the stop, whichever comes first. A stopped caller goes on at
// once; the work runs to its end, abandoned (Go cannot kill a goroutine), and
// its result is dropped.
//
// What abandoned work can hold is bounded in two ways. Each work's input is
// bounded by its caller (a source by the source size bound, a collation by
// the length it compares), and all work under way, abandoned or not, holds
// at most [Capacity] bytes of input at once: a work that would pass it waits
// for room, in order of arrival, and that wait is abandoned at a stop too.
// A program that is stopped again and again while its host work runs
// therefore leaves at most Capacity bytes of work behind, whatever the
// number of runs, and each work ends in a time its input bounds.
//
// # Concurrency
//
// Do may be called from any goroutine.
package hostwork

import (
	"sync"
	"sync/atomic"
)

// Capacity is how many bytes of input the host's work for sandboxes may
// hold at once, running or abandoned: two sources at the source size bound
// (4 MiB, internal/source.MaxBytes), so that one at the bound leaves room
// for the small ones of other runs. esbuild takes ~80 bytes of memory per
// byte of TypeScript it erases (RATIONALE.md, "Stops land in host work"),
// so this also bounds the transforms' memory at any one time, to ~650 MB.
const Capacity = 8 << 20

// Do runs work, whose input is size bytes, on a goroutine of its own, and
// waits for it to end or for stop to close, whichever comes first. It
// reports whether the work ended: when it did not, the work runs on to its
// end, abandoned, and the caller must not read what it writes. A nil stop
// never closes. kind names the work for the test hook (SetTestHook).
//
// Do first waits for room in Capacity (a size beyond it counts as
// Capacity); that wait also ends at stop, and the work then never starts.
//
// A panic of the work is raised again on the caller's goroutine, as if the
// caller had run it (the engine recovers a host call's panic as a fault of
// the sandbox); an abandoned work's panic is dropped with its result.
func Do(stop <-chan struct{}, kind string, size int, work func()) bool {
	size = min(max(size, 1), Capacity)
	if !acquire(stop, size) {
		return false
	}
	done := make(chan struct{})
	var panicked any
	running.Add(1)
	go func() {
		defer func() {
			panicked = recover()
			release(size)
			running.Add(-1)
			close(done)
		}()
		if h := testHook.Load(); h != nil {
			(*h)(kind, size)
		}
		work()
	}()
	select {
	case <-done:
	case <-stop:
		select {
		case <-done: // ended as the stop came: its result stands
		default:
			return false
		}
	}
	if panicked != nil {
		panic(panicked)
	}
	return true
}

// TryGo starts work, whose input is size bytes, on a goroutine of its own
// if Capacity has room for it now, and reports whether it did: for work
// done ahead of need, which is skipped rather than waited for.
func TryGo(kind string, size int, work func()) bool {
	size = min(max(size, 1), Capacity)
	sem.mu.Lock()
	ok := len(sem.waiters) == 0 && sem.used+size <= Capacity
	if ok {
		sem.used += size
	}
	sem.mu.Unlock()
	if !ok {
		return false
	}
	running.Add(1)
	go func() {
		defer func() {
			recover() // work done ahead of need: whoever needs it does it again
			release(size)
			running.Add(-1)
		}()
		if h := testHook.Load(); h != nil {
			(*h)(kind, size)
		}
		work()
	}()
	return true
}

// InFlight reports how many works are running (abandoned ones included),
// how many bytes of Capacity they hold, and how many calls of Do wait for
// room.
func InFlight() (works, bytes, waiting int) {
	sem.mu.Lock()
	defer sem.mu.Unlock()
	return int(running.Load()), sem.used, len(sem.waiters)
}

var running atomic.Int64

// sem is Capacity's room: used bytes, and the works waiting for room, in
// order of arrival.
var sem struct {
	mu      sync.Mutex
	used    int
	waiters []*waiter
}

type waiter struct {
	size  int
	ready chan struct{} // closed when the room is the waiter's
}

func acquire(stop <-chan struct{}, size int) bool {
	sem.mu.Lock()
	if len(sem.waiters) == 0 && sem.used+size <= Capacity {
		sem.used += size
		sem.mu.Unlock()
		return true
	}
	w := &waiter{size: size, ready: make(chan struct{})}
	sem.waiters = append(sem.waiters, w)
	sem.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-stop:
	}
	sem.mu.Lock()
	defer sem.mu.Unlock()
	select {
	case <-w.ready: // the room came with the stop: given back
		sem.used -= size
	default:
		for i, o := range sem.waiters {
			if o == w {
				sem.waiters = append(sem.waiters[:i], sem.waiters[i+1:]...)
				break
			}
		}
	}
	grant()
	return false
}

func release(size int) {
	sem.mu.Lock()
	defer sem.mu.Unlock()
	sem.used -= size
	grant()
}

// grant gives room to the waiters at the head of the line that fit.
// sem.mu is held.
func grant() {
	for len(sem.waiters) > 0 && sem.used+sem.waiters[0].size <= Capacity {
		w := sem.waiters[0]
		sem.waiters = sem.waiters[1:]
		sem.used += w.size
		close(w.ready)
	}
}

var testHook atomic.Pointer[func(kind string, size int)]

// SetTestHook makes hook run on each work's goroutine before the work, with
// the work's kind and size (as counted against Capacity), and returns a
// function that puts back the hook it replaced. A test blocks the hook to
// hold a work under way while it stops the run that asked for it. Not for
// use outside tests.
func SetTestHook(hook func(kind string, size int)) (restore func()) {
	var p *func(string, int)
	if hook != nil {
		p = &hook
	}
	old := testHook.Swap(p)
	return func() { testHook.Store(old) }
}

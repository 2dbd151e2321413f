package hostwork

import (
	"sync/atomic"
	"testing"
	"time"
)

// hold makes the works of kind wait, before they start, until release;
// started receives once for each.
func hold(t *testing.T, kind string) (started chan int, release func()) {
	t.Helper()
	started = make(chan int, 64)
	gate := make(chan struct{})
	restore := SetTestHook(func(k string, size int) {
		if k == kind {
			started <- size
			<-gate
		}
	})
	var once atomic.Bool
	release = func() {
		if once.CompareAndSwap(false, true) {
			close(gate)
		}
	}
	t.Cleanup(func() { release(); restore(); drained(t) })
	return started, release
}

// drained waits until no work is left, or fails after a bound only a
// broken implementation reaches.
func drained(t *testing.T) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; {
		w, b, q := InFlight()
		if w == 0 && b == 0 && q == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("host work left: %d works, %d bytes, %d waiting", w, b, q)
		}
		time.Sleep(time.Millisecond)
	}
}

// A stop returns Do at once while its work is under way; the work runs on
// to its end, abandoned, and gives its room back then.
func TestDoAbandonsAtStop(t *testing.T) {
	started, release := hold(t, "t1")
	stop := make(chan struct{})
	ended := make(chan bool, 1)
	var finished atomic.Bool
	go func() {
		ended <- Do(stop, "t1", 100, func() { finished.Store(true) })
	}()
	<-started
	close(stop)
	if <-ended {
		t.Fatal("Do reported its work done while the work was held")
	}
	if finished.Load() {
		t.Fatal("the work ran before it was released")
	}
	if w, b, _ := InFlight(); w != 1 || b != 100 {
		t.Fatalf("in flight: %d works, %d bytes; want the abandoned one, 100 bytes", w, b)
	}
	release()
	drained(t)
	if !finished.Load() {
		t.Fatal("the abandoned work did not run to its end")
	}
}

// Work not stopped is waited for, and its result is the caller's.
func TestDoWaits(t *testing.T) {
	x := 0
	if !Do(nil, "t2", 10, func() { x = 42 }) || x != 42 {
		t.Fatalf("Do: x = %d", x)
	}
	drained(t)
}

// All works together, abandoned or not, hold at most Capacity bytes: the
// next waits for room in order, and a wait abandoned at a stop never runs
// its work. Repeated stops leave no more than Capacity behind.
func TestCapacityBoundsAbandonedWork(t *testing.T) {
	started, release := hold(t, "t3")
	const size = Capacity / 4
	var ran atomic.Int32
	for i := 0; i < 4; i++ {
		stop := make(chan struct{})
		done := make(chan bool, 1)
		go func() { done <- Do(stop, "t3", size, func() { ran.Add(1) }) }()
		<-started
		close(stop)
		if <-done {
			t.Fatal("a held work reported done")
		}
	}
	// Capacity is full of abandoned work: twenty more stopped runs wait,
	// then give up, and none of their works starts.
	for i := 0; i < 20; i++ {
		stop := make(chan struct{})
		done := make(chan bool, 1)
		go func() { done <- Do(stop, "t3", size, func() { ran.Add(1) }) }()
		waitFor(t, 1)
		close(stop)
		if <-done {
			t.Fatal("a work that waited for room reported done")
		}
		if w, b, q := InFlight(); w != 4 || b != Capacity || q != 0 {
			t.Fatalf("in flight: %d works, %d bytes, %d waiting; want 4, %d, 0", w, b, q, Capacity)
		}
	}
	if TryGo("t3", 1, func() {}) {
		t.Fatal("TryGo started work beyond Capacity")
	}
	release()
	drained(t)
	if n := ran.Load(); n != 4 {
		t.Fatalf("%d works ran, want the 4 abandoned ones", n)
	}
}

// Waiters get room in the order they came: a small work does not pass a
// larger one that waits, which would otherwise wait for ever behind a
// stream of small ones.
func TestCapacityInOrder(t *testing.T) {
	started, release := hold(t, "t4")
	first := make(chan bool, 1)
	go func() { first <- Do(nil, "t4", Capacity/2, func() {}) }()
	<-started
	var big, small atomic.Bool
	done := make(chan struct{}, 2)
	go func() { Do(nil, "t5", Capacity/2+1, func() { big.Store(true) }); done <- struct{}{} }()
	waitFor(t, 1)
	go func() { Do(nil, "t5", 1, func() { small.Store(true) }); done <- struct{}{} }()
	waitFor(t, 2) // the small one waits, though it would fit
	if big.Load() || small.Load() {
		t.Fatal("a work ran before the room it waits for was given back")
	}
	release()
	<-first
	<-done
	<-done
	if !big.Load() || !small.Load() {
		t.Fatal("a waiting work never ran")
	}
	drained(t)
}

// waitFor waits until n calls of Do wait for room.
func waitFor(t *testing.T, n int) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; {
		if _, _, q := InFlight(); q == n {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("never %d waiting", n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// A work's panic reaches its caller, as if the caller had run it, rather
// than ending the process on a goroutine nothing recovers; an abandoned
// work's panic is dropped.
func TestDoPanics(t *testing.T) {
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want the work's panic", p)
			}
		}()
		Do(nil, "t6", 1, func() { panic("boom") })
		t.Fatal("Do returned after its work panicked")
	}()
	started, release := hold(t, "t7")
	stop := make(chan struct{})
	done := make(chan bool, 1)
	go func() { done <- Do(stop, "t7", 1, func() { panic("late") }) }()
	<-started
	close(stop)
	if <-done {
		t.Fatal("an abandoned work reported done")
	}
	release()
	drained(t)
	if !TryGo("t8", 1, func() { panic("ahead") }) {
		t.Fatal("TryGo did not start")
	}
	drained(t)
}

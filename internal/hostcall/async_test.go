package hostcall

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/engine"
)

// goroutineID is the id runtime.Stack prints for the calling goroutine.
func goroutineID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	id, _ := strconv.Atoi(string(buf[:bytes.IndexByte(buf, ' ')]))
	return id
}

// takeOne waits for the next finished call of a.
func takeOne(t *testing.T, a *AsyncCalls) engine.Completion {
	t.Helper()
	for {
		if c, ok := a.take(); ok {
			return c
		}
		select {
		case <-a.ready:
		case <-time.After(10 * time.Second):
			t.Fatal("no call finished")
		}
	}
}

// Calls awaited one after another run on one goroutine: the one that
// finished a call waits for the next (a goroutine a call, with its stack
// grown for each, was a sixth of an awaited call's cost).
func TestAsyncCalls_ReuseTheirGoroutine(t *testing.T) {
	a := newAsyncCalls(4)
	defer a.Close()
	ids := map[int]bool{}
	for i := range 20 {
		a.Start(func() engine.Reply {
			ids[goroutineID()] = true
			return engine.Reply{Kind: engine.ReplyArg, Value: i}
		})
		if c := takeOne(t, a); c.ID != i || c.Reply.Value != i {
			t.Fatalf("call %d: got %+v", i, c)
		}
	}
	if len(ids) != 1 {
		t.Errorf("20 calls in sequence ran on %d goroutines, want 1", len(ids))
	}
}

// At most limit calls run at once; the others wait and start on the
// goroutines of the ones that return. Every reply comes, once.
func TestAsyncCalls_Limit(t *testing.T) {
	const limit, calls = 3, 12
	a := newAsyncCalls(limit)
	defer a.Close()
	var mu sync.Mutex
	running, most := 0, 0
	release := make(chan struct{})
	for i := range calls {
		a.Start(func() engine.Reply {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			<-release
			mu.Lock()
			running--
			mu.Unlock()
			return engine.Reply{Kind: engine.ReplyArg, Value: i}
		})
	}
	close(release)
	seen := map[int]bool{}
	for range calls {
		c := takeOne(t, a)
		if seen[c.ID] || c.Reply.Value != c.ID {
			t.Fatalf("reply %+v again or wrong", c)
		}
		seen[c.ID] = true
	}
	if most > limit {
		t.Errorf("%d calls ran at once, limit %d", most, limit)
	}
}

// A function that ends its goroutine (runtime.Goexit) still settles its
// promise, rejected, and the calls after it run.
func TestAsyncCalls_Goexit(t *testing.T) {
	a := newAsyncCalls(1)
	defer a.Close()
	release := make(chan struct{})
	a.Start(func() engine.Reply { <-release; runtime.Goexit(); return engine.Reply{} })
	a.Start(func() engine.Reply { return engine.Reply{Kind: engine.ReplyArg, Value: "after"} })
	close(release)
	if c := takeOne(t, a); c.ID != 0 || c.Reply.Value != ErrGoexit {
		t.Errorf("the call that ended its goroutine: %+v", c)
	}
	if c := takeOne(t, a); c.ID != 1 || c.Reply.Value != "after" {
		t.Errorf("the call waiting behind it: %+v", c)
	}
}

// asyncGoroutines counts the goroutines running AsyncCalls.run.
func asyncGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Count(buf, []byte("hostcall.(*AsyncCalls).run("))
}

// An idle goroutine ends when the calls are closed, and on its own when
// no call comes for idleFor; a call handed to it but not started when the
// run closed never runs.
func TestAsyncCalls_IdleGoroutinesEnd(t *testing.T) {
	settle := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for asyncGoroutines() > want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := asyncGoroutines(); n > want {
			t.Fatalf("%d goroutines of asynchronous calls, want %d", n, want)
		}
	}
	before := 0
	settle(before) // other tests' idle ones end within idleFor

	a := newAsyncCalls(2)
	a.Start(func() engine.Reply { return engine.Reply{} })
	takeOne(t, a)
	a.Close()
	settle(before) // closed: ends at once

	a = newAsyncCalls(2)
	a.Start(func() engine.Reply { return engine.Reply{} })
	takeOne(t, a)
	settle(before) // idle for idleFor: ends
	a.mu.Lock()
	idle := a.idle
	a.mu.Unlock()
	if idle != 0 {
		t.Errorf("%d goroutines counted idle after they ended", idle)
	}
	ran := false
	a.Start(func() engine.Reply { ran = true; return engine.Reply{} }) // a new goroutine
	takeOne(t, a)
	if !ran {
		t.Fatal("the call after the idle goroutine ended did not run")
	}

	// Handed to the idle goroutine, then closed before it runs: the
	// goroutine sees the close under the lock the hand-off needs.
	a.mu.Lock()
	for a.idle == 0 {
		a.mu.Unlock()
		runtime.Gosched()
		a.mu.Lock()
	}
	a.mu.Unlock()
	late := make(chan struct{}, 1)
	a.mu.Lock() // the idle goroutine cannot take what is handed yet
	a.running++
	a.idle--
	a.work <- waitingCall{99, func() engine.Reply { late <- struct{}{}; return engine.Reply{} }}
	a.closed = true
	a.waiting, a.done = nil, nil
	close(a.work)
	a.mu.Unlock()
	settle(before)
	select {
	case <-late:
		t.Error("a call handed out before the close ran after it")
	default:
	}
}

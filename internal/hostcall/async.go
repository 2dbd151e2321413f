package hostcall

import (
	"fmt"
	"sync"
	"time"

	"github.com/airlockrun/airlock/internal/engine"
)

// AsyncCalls are the asynchronous host calls of a run or a step. At most
// limit run at once, each on a goroutine of its own; the calls beyond wait
// in a queue, without a goroutine, until one returns. A finished call's
// reply waits in the done queue until the engine takes it, never on a
// goroutine the sandbox is not reading. At most MaxPendingCalls are started
// and not yet taken; a call beyond that fails. When the run ends (close),
// the waiting calls are dropped, the running ones are abandoned to finish
// on their own, and their late replies are discarded.
//
// A goroutine that finished a call takes the next: a waiting one, or one
// handed to it while it idles (at most idleFor), so that a program that
// awaits one call after another does not start a goroutine, and grow its
// stack, for each (RATIONALE.md, "Asynchronous calls reuse their
// goroutines").
type AsyncCalls struct {
	limit int
	ready chan struct{} // a value after a call finished
	// work hands a call to an idle goroutine; buffered to limit, so that
	// Start never blocks on it. Closed by Close.
	work chan waitingCall

	mu      sync.Mutex
	nextID  int
	pending int // started and not taken
	running int // calls running, or handed to an idle goroutine
	idle    int // goroutines waiting on work
	waiting []waitingCall
	done    []engine.Completion
	closed  bool
}

type waitingCall struct {
	id   int
	call func() engine.Reply
}

// MaxPendingCalls bounds the asynchronous calls of one run that were
// started and whose results the sandbox has not taken: each holds a little
// host memory beside its arguments (which the run's budget counts).
const MaxPendingCalls = 1 << 16

// DefaultAsyncCalls is how many asynchronous host calls of one run run at
// once when the configuration sets no other number.
const DefaultAsyncCalls = 64

// idleFor is how long a goroutine that finished a call waits for the
// run's next one before it ends.
const idleFor = 50 * time.Millisecond

func newAsyncCalls(limit int) *AsyncCalls {
	if limit <= 0 {
		limit = DefaultAsyncCalls
	}
	return &AsyncCalls{limit: limit, ready: make(chan struct{}, 1), work: make(chan waitingCall, limit)}
}

// errTooManyPending is the error of an asynchronous call over
// MaxPendingCalls.
var errTooManyPending = fmt.Sprintf("airlock: too many asynchronous host calls are pending (%d); await some before starting more", MaxPendingCalls)

// Start runs call, now or when a running call returns, and returns the
// engine's reply for its pending promise.
func (a *AsyncCalls) Start(call func() engine.Reply) engine.Reply {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return stoppedReply
	}
	if a.pending >= MaxPendingCalls {
		return engine.Reply{Kind: engine.ReplyError, Value: errTooManyPending}
	}
	id := a.nextID
	a.nextID++
	a.pending++
	switch {
	case a.running >= a.limit:
		a.waiting = append(a.waiting, waitingCall{id, call})
	case a.idle > 0:
		a.running++
		a.idle--
		a.work <- waitingCall{id, call} // never blocks: fewer than limit are in it
	default:
		a.running++
		go a.run(id, call)
	}
	return engine.Reply{Kind: engine.ReplyAsync, Value: id}
}

// run runs calls on one goroutine: call, then the next the run has for
// it, until none comes.
func (a *AsyncCalls) run(id int, call func() engine.Reply) {
	var timer *time.Timer
	for call != nil {
		id, call = a.once(id, call, &timer)
	}
	if timer != nil {
		timer.Stop()
	}
}

// once runs one call, queues its reply, and returns the next call for
// this goroutine, or a nil call when it should end.
func (a *AsyncCalls) once(id int, call func() engine.Reply, timer **time.Timer) (int, func() engine.Reply) {
	c := engine.Completion{ID: id, Reply: engine.Reply{Kind: engine.ReplyError, Value: ErrGoexit}}
	returned := false
	defer func() {
		if !returned {
			// The function called runtime.Goexit, which ends this
			// goroutine: the promise still settles, rejected, and a
			// waiting call gets a goroutine of its own.
			if id, next, _ := a.finish(c, false); next != nil {
				go a.run(id, next)
			}
		}
	}()
	c.Reply = call()
	returned = true
	id, next, idle := a.finish(c, true)
	if next != nil || !idle {
		return id, next
	}
	return a.idleWait(timer)
}

// finish queues c's reply and returns the waiting call to run next, if
// any. With none, the call is no longer running, and if stay is set the
// goroutine is counted idle (reported), before the reply is signalled:
// a call started as soon as the reply is taken finds it.
func (a *AsyncCalls) finish(c engine.Completion, stay bool) (id int, next func() engine.Reply, idle bool) {
	a.mu.Lock()
	defer a.signal()
	defer a.mu.Unlock()
	if a.closed {
		a.running--
		return 0, nil, false
	}
	a.done = append(a.done, c)
	if len(a.waiting) > 0 {
		w := a.waiting[0]
		a.waiting[0] = waitingCall{}
		a.waiting = a.waiting[1:]
		return w.id, w.call, false
	}
	a.running--
	if stay {
		a.idle++
	}
	return 0, nil, stay
}

// signal wakes the engine's loop, which drains the done queue.
func (a *AsyncCalls) signal() {
	select {
	case a.ready <- struct{}{}:
	default:
	}
}

// idleWait waits up to idleFor for a call handed to this goroutine, which
// finish counted idle.
func (a *AsyncCalls) idleWait(timer **time.Timer) (int, func() engine.Reply) {
	if *timer == nil {
		*timer = time.NewTimer(idleFor)
	} else {
		(*timer).Reset(idleFor)
	}
	select {
	case w, ok := <-a.work:
		return a.handed(w, ok)
	case <-(*timer).C:
	}
	a.mu.Lock()
	if a.idle > 0 && !a.closed {
		// Nobody counted on this goroutine: it ends.
		a.idle--
		a.mu.Unlock()
		return 0, nil
	}
	a.mu.Unlock()
	// Start took it as idle as the timer fired (its call is in work),
	// or Close closed work.
	w, ok := <-a.work
	return a.handed(w, ok)
}

// handed is the call received from work: nil once the run closed, which
// drops a call handed but not started, as it drops a waiting one.
func (a *AsyncCalls) handed(w waitingCall, ok bool) (int, func() engine.Reply) {
	if !ok {
		return 0, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		a.running--
		return 0, nil
	}
	return w.id, w.call
}

// take is engine.Job.Take.
func (a *AsyncCalls) take() (engine.Completion, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.done) == 0 {
		return engine.Completion{}, false
	}
	c := a.done[0]
	a.done[0] = engine.Completion{}
	a.done = a.done[1:]
	a.pending--
	return c, true
}

// inFlight is what engine.Job.Pending reports.
func (a *AsyncCalls) inFlight() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pending
}

// Close ends the calls with the run: waiting calls never start, the
// replies of running ones are dropped when they come, and the idle
// goroutines end.
func (a *AsyncCalls) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.closed = true
	a.waiting, a.done = nil, nil
	close(a.work)
}

// Job fills the asynchronous calls' part of an engine job.
func (a *AsyncCalls) Job(j *engine.Job) {
	j.Take, j.Ready, j.Pending = a.take, a.ready, a.inFlight
}

// ErrGoexit is the error of a host function that called runtime.Goexit.
const ErrGoexit = "a host function ended its goroutine (runtime.Goexit)"

package hostcall

import (
	"fmt"
	"sync"

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
type AsyncCalls struct {
	limit int
	ready chan struct{} // a value after a call finished

	mu      sync.Mutex
	nextID  int
	pending int // started and not taken
	running int
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

func newAsyncCalls(limit int) *AsyncCalls {
	if limit <= 0 {
		limit = DefaultAsyncCalls
	}
	return &AsyncCalls{limit: limit, ready: make(chan struct{}, 1)}
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
	if a.running < a.limit {
		a.running++
		go a.run(id, call)
	} else {
		a.waiting = append(a.waiting, waitingCall{id, call})
	}
	return engine.Reply{Kind: engine.ReplyAsync, Value: id}
}

// run runs one call on its own goroutine, queues its reply, and starts the
// next waiting call, if any.
func (a *AsyncCalls) run(id int, call func() engine.Reply) {
	c := engine.Completion{ID: id, Reply: engine.Reply{Kind: engine.ReplyError, Value: ErrGoexit}}
	defer func() {
		// Also when the function called runtime.Goexit: the promise still
		// settles, rejected.
		a.mu.Lock()
		if a.closed {
			a.running--
			a.mu.Unlock()
			return
		}
		a.done = append(a.done, c)
		if len(a.waiting) > 0 {
			next := a.waiting[0]
			a.waiting[0] = waitingCall{}
			a.waiting = a.waiting[1:]
			go a.run(next.id, next.call)
		} else {
			a.running--
		}
		a.mu.Unlock()
		select {
		case a.ready <- struct{}{}:
		default:
		}
	}()
	c.Reply = call()
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

// Close ends the calls with the run: waiting calls never start, and the
// replies of running ones are dropped when they come.
func (a *AsyncCalls) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	a.waiting, a.done = nil, nil
}

// Job fills the asynchronous calls' part of an engine job.
func (a *AsyncCalls) Job(j *engine.Job) {
	j.Take, j.Ready, j.Pending = a.take, a.ready, a.inFlight
}

// ErrGoexit is the error of a host function that called runtime.Goexit.
const ErrGoexit = "a host function ended its goroutine (runtime.Goexit)"

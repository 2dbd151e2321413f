package airlock

import (
	"sync"
	"sync/atomic"

	"github.com/airlockrun/airlock/internal/engine"
)

// callArgs decodes the arguments of a host call: raw primitives as they
// are, or wire text paid for by spend; spent is the error when it cannot.
func callArgs(raw []any, wire string, encoded bool, spend func(int) bool, spent error, limit int) ([]any, error) {
	if !encoded {
		args := make([]any, len(raw))
		for i, a := range raw {
			args[i] = fromRaw(a)
		}
		return args, nil
	}
	if !spend(len(wire)) {
		return nil, spent
	}
	v, err := decodeWire(wire, limit)
	if err != nil {
		return nil, err
	}
	args, _ := v.([]any)
	return args, nil
}

// asyncCalls are the asynchronous host calls of a run or a step: each on
// its own goroutine, its reply delivered on notify unless the run is stopped
// or its context cancelled first (it has ended and reads no more replies).
type asyncCalls struct {
	notify  chan engine.Completion
	pending atomic.Int32
	nextID  atomic.Int32
	wg      sync.WaitGroup
}

func newAsyncCalls() asyncCalls { return asyncCalls{notify: make(chan engine.Completion, 64)} }

// start runs call and returns the engine's reply for its pending promise.
func (a *asyncCalls) start(call func() engine.Reply, stop, cancelled <-chan struct{}) engine.Reply {
	id := int(a.nextID.Add(1) - 1)
	a.pending.Add(1)
	a.wg.Go(func() {
		c := engine.Completion{ID: id, Reply: engine.Reply{Kind: engine.ReplyError, Value: errGoexit}}
		defer func() {
			// Also when the function called runtime.Goexit: the promise
			// still settles, rejected.
			select {
			case a.notify <- c:
			case <-stop:
			case <-cancelled:
			}
			a.pending.Add(-1)
		}()
		c.Reply = call()
	})
	return engine.Reply{Kind: engine.ReplyAsync, Value: id}
}

// errGoexit is the error of a host function that called runtime.Goexit.
const errGoexit = "a host function ended its goroutine (runtime.Goexit)"

// inFlight is what engine.Job.Pending reports.
func (a *asyncCalls) inFlight() int { return int(a.pending.Load()) }

// jsonReply is the reply of a JSONFunc: its text, which the sandbox parses
// with its own JSON.parse; empty text is undefined.
func jsonReply(t jsonText) engine.Reply {
	if len(t) == 0 {
		return engine.Reply{Kind: engine.ReplyRaw, Value: engine.Undefined{}}
	}
	return engine.Reply{Kind: engine.ReplyJSON, Value: string(t)}
}

// hostReply turns a host function's result into the engine's reply; reg
// registers the functions the result holds, if they may cross.
func hostReply(v any, err error, reg funcRegistrar) engine.Reply {
	if err != nil {
		return engine.Reply{Kind: engine.ReplyError, Value: err.Error()}
	}
	if t, ok := v.(jsonText); ok {
		return jsonReply(t)
	}
	if raw, ok := toRaw(v); ok {
		return engine.Reply{Kind: engine.ReplyRaw, Value: raw}
	}
	text, err := encodeWire(v, reg)
	if err != nil {
		return engine.Reply{Kind: engine.ReplyError, Value: err.Error()}
	}
	return engine.Reply{Kind: engine.ReplyWire, Value: text}
}

package airlock

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/wasmvm"
	"github.com/airlockrun/airlock/js"
)

// callArgs decodes the arguments of a host call: primitives as the
// engine typed them, or wire text, paid for by spend; spent is the error
// when it cannot.
func callArgs(in []engine.Arg, wire string, encoded bool, spend func(int) bool, spent error, limit int) ([]any, error) {
	if !encoded {
		if !spend(argCost(in)) {
			return nil, spent
		}
		args := make([]any, len(in))
		for i, a := range in {
			args[i] = fromArg(a)
		}
		return args, nil
	}
	if !spend(codec.Cost(wire)) {
		return nil, spent
	}
	v, err := codec.Decode(wire, limit)
	if err != nil {
		return nil, err
	}
	args, _ := v.([]any)
	return args, nil
}

// fromArg is a primitive argument as a bridged function's Go value.
func fromArg(a engine.Arg) any {
	switch a.Kind {
	case wasmvm.Null:
		return nil
	case wasmvm.Bool:
		return a.Bool
	case wasmvm.Number:
		return a.Number
	case wasmvm.String:
		return a.Text
	}
	return js.Undefined{}
}

// argCost is what primitive arguments cost the run's budget, as rawCost
// counts them: a string its bytes, and every value 8.
func argCost(in []engine.Arg) int {
	n := 0
	for i := range in {
		n += 8
		if in[i].Kind == wasmvm.String {
			n += len(in[i].Text)
		}
	}
	return n
}

// typedReply is the reply of a typed call's answer (see hostFunc.typed):
// the answer as it is, its text paid for by spend (the 8 bytes of any
// answer were paid with the arguments), or, for text that is not UTF-8 (a
// lone surrogate's WTF-8), the same answer encoded as any other value's.
func typedReply(v engine.Arg, reg codec.Registrar, spend func(int) bool, spent error) engine.Reply {
	if v.Kind == wasmvm.String {
		if !utf8.ValidString(v.Text) {
			return budgetedReply(hostReply(v.Text, nil, reg), spend, spent)
		}
		if len(v.Text) > 0 && !spend(len(v.Text)) {
			return engine.Reply{Kind: engine.ReplyError, Value: spent.Error()}
		}
	}
	return engine.Reply{Kind: engine.ReplyArg, Arg: v}
}

// asyncCalls are the asynchronous host calls of a run or a step. At most
// limit run at once, each on a goroutine of its own; the calls beyond wait
// in a queue, without a goroutine, until one returns. A finished call's
// reply waits in the done queue until the engine takes it, never on a
// goroutine the sandbox is not reading. At most maxPendingCalls are started
// and not yet taken; a call beyond that fails. When the run ends (close),
// the waiting calls are dropped, the running ones are abandoned to finish
// on their own, and their late replies are discarded.
type asyncCalls struct {
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

// maxPendingCalls bounds the asynchronous calls of one run that were
// started and whose results the sandbox has not taken: each holds a little
// host memory beside its arguments (which the run's budget counts).
const maxPendingCalls = 1 << 16

// defaultAsyncCalls is how many asynchronous host calls of one run run at
// once when the configuration sets no other number.
const defaultAsyncCalls = 64

func newAsyncCalls(limit int) *asyncCalls {
	if limit <= 0 {
		limit = defaultAsyncCalls
	}
	return &asyncCalls{limit: limit, ready: make(chan struct{}, 1)}
}

// errTooManyPending is the error of an asynchronous call over
// maxPendingCalls.
var errTooManyPending = fmt.Sprintf("airlock: too many asynchronous host calls are pending (%d); await some before starting more", maxPendingCalls)

// start runs call, now or when a running call returns, and returns the
// engine's reply for its pending promise.
func (a *asyncCalls) start(call func() engine.Reply) engine.Reply {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return stoppedReply
	}
	if a.pending >= maxPendingCalls {
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
func (a *asyncCalls) run(id int, call func() engine.Reply) {
	c := engine.Completion{ID: id, Reply: engine.Reply{Kind: engine.ReplyError, Value: errGoexit}}
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
func (a *asyncCalls) take() (engine.Completion, bool) {
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
func (a *asyncCalls) inFlight() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pending
}

// close ends the calls with the run: waiting calls never start, and the
// replies of running ones are dropped when they come.
func (a *asyncCalls) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	a.waiting, a.done = nil, nil
}

// job fills the asynchronous calls' part of an engine job.
func (a *asyncCalls) job(j *engine.Job) {
	j.Take, j.Ready, j.Pending = a.take, a.ready, a.inFlight
}

// errGoexit is the error of a host function that called runtime.Goexit.
const errGoexit = "a host function ended its goroutine (runtime.Goexit)"

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
func hostReply(v any, err error, reg codec.Registrar) engine.Reply {
	if err != nil {
		return engine.Reply{Kind: engine.ReplyError, Value: err.Error()}
	}
	if t, ok := v.(jsonText); ok {
		return jsonReply(t)
	}
	if raw, ok := toRaw(v); ok {
		return engine.Reply{Kind: engine.ReplyRaw, Value: raw}
	}
	text, err := codec.Encode(v, reg)
	if err != nil {
		return engine.Reply{Kind: engine.ReplyError, Value: err.Error()}
	}
	return engine.Reply{Kind: engine.ReplyWire, Value: text}
}

// rawCost is what raw primitives cost the run's budget: a string its bytes,
// and every value 8.
func rawCost(raw []any) int {
	n := 0
	for _, a := range raw {
		n += 8
		if s, ok := a.(string); ok {
			n += len(s)
		}
	}
	return n
}

// replyCost is what a host call's reply costs the run's budget.
func replyCost(rep engine.Reply) int {
	switch v := rep.Value.(type) {
	case string:
		if rep.Kind == engine.ReplyWire || rep.Kind == engine.ReplyJSON {
			return codec.Cost(v)
		}
		return 8 + len(v)
	}
	return 8
}

// budgetedReply is rep, or an error in its place when spend cannot pay
// for it.
func budgetedReply(rep engine.Reply, spend func(int) bool, spent error) engine.Reply {
	if rep.Kind == engine.ReplyAsync || spend(replyCost(rep)) {
		return rep
	}
	return engine.Reply{Kind: engine.ReplyError, Value: spent.Error()}
}

// A byteBudget is what is left of a run's or a step's budget for values
// crossing between the sandbox and the host. It is spent twice in every
// host call, from the VM's goroutine and from those of asynchronous calls:
// an atomic, not a mutex, which was 6% of a synchronous call.
type byteBudget struct {
	left atomic.Int64
}

// init sets the budget to n bytes.
func (b *byteBudget) init(n int) { b.left.Store(int64(n)) }

// spend takes n bytes from the budget, or reports false and takes none
// when fewer are left.
func (b *byteBudget) spend(n int) bool {
	for {
		left := b.left.Load()
		if int64(n) > left {
			return false
		}
		if b.left.CompareAndSwap(left, left-int64(n)) {
			return true
		}
	}
}

// take takes up to n bytes from the budget, as many as are left, and
// returns how many it took.
func (b *byteBudget) take(n int) int {
	for {
		left := b.left.Load()
		k := min(int64(n), max(left, 0))
		if b.left.CompareAndSwap(left, left-k) {
			return int(k)
		}
	}
}

// value decodes the value a program settled with (out.Kind is engine.OK),
// paid for from the budget; limit is decodeWire's bound on the elements of
// sparse and typed arrays.
func (b *byteBudget) value(out engine.Outcome, limit int) (any, error) {
	if !out.Wire {
		if !b.spend(rawCost([]any{out.Value})) {
			return nil, codec.ErrTooLarge
		}
		return fromRaw(out.Value), nil
	}
	text, _ := out.Value.(string)
	if !b.spend(codec.Cost(text)) {
		return nil, codec.ErrTooLarge
	}
	return codec.Decode(text, limit)
}

// fromRaw converts a raw primitive that came out of the engine.
func fromRaw(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case engine.Undefined:
		return js.Undefined{}
	}
	return v
}

// toRaw reports whether a Go value can cross as a raw primitive, and its
// raw form.
func toRaw(v any) (any, bool) {
	// v itself is returned where it can be: x, boxed again, would be an
	// allocation per host call.
	switch x := v.(type) {
	case nil, bool:
		return v, true
	case string:
		// Text that is not UTF-8 (a lone surrogate's WTF-8) crosses
		// encoded.
		return v, utf8.ValidString(x)
	case js.Undefined:
		return engine.Undefined{}, true
	case float64:
		return v, true
	case int:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return x, true
		}
	}
	return nil, false
}

package hostcall

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/wasmvm"
)

// Funcs are the functions a sandbox may call, by id: a run's, or an
// executor session's, kept from one step to the next. Safe for concurrent
// use: functions are added from the VM's goroutine and from those of
// asynchronous calls (a result that holds a function), and read without a
// lock.
type Funcs struct {
	mu   sync.Mutex
	list atomic.Pointer[[]*Func] // copied on write
}

// Add appends f and returns its id.
func (fs *Funcs) Add(f *Func) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var list []*Func
	if p := fs.list.Load(); p != nil {
		list = *p
	}
	list = append(list[:len(list):len(list)], f)
	fs.list.Store(&list)
	return len(list) - 1
}

// Register makes the Func of a bridged value and adds it: a
// codec.Registrar.
func (fs *Funcs) Register(v reflect.Value) (int, error) {
	f, err := New(v)
	if err != nil {
		return 0, err
	}
	return fs.Add(f), nil
}

// At is function id, or nil.
func (fs *Funcs) At(id int) *Func {
	if p := fs.list.Load(); p != nil && id >= 0 && id < len(*p) {
		return (*p)[id]
	}
	return nil
}

// levels are the console's methods, by the index the engine gives a
// console call (engine.Job.LogBytes).
var levels = [...]string{"log", "info", "warn", "error", "debug"}

// A LogSink keeps a job's console calls.
type LogSink interface {
	// Wants reports whether a call of console method level is kept: one
	// that is not costs nothing and is not decoded.
	Wants(level int) bool
	// Log keeps a call of console method level with its arguments,
	// decoded.
	Log(level int, args []any)
	// Spent is called instead of Log when the budget cannot pay for a
	// call.
	Spent()
}

// The texts of a call the host refuses.
const (
	// TextStopped is the error of a call made after the host stopped its
	// job, and the answer of a synchronous call under way at the stop,
	// which the sandbox never sees: the job is interrupted as the call
	// returns.
	TextStopped = "the run was stopped"
	// TextUnknown is the error of a call of an id no function has.
	TextUnknown = "airlock: unknown host function"
)

// Host is the host side of the calls of one job, a run or an executor's
// step: it answers the engine's host calls (Call, engine.Job.CallBytes)
// and console calls (Log, engine.Job.LogBytes), pays for what crosses from
// the budget, runs asynchronous functions through its queue, and stops
// the job once (Stop). What differs between a run and a step is in the
// fields its owner sets before the job starts: which functions it has,
// what a spent budget is called, what a result may hold, what a panic
// does, where the console's calls go, how the job is interrupted.
//
// A stop does not wait for a host function: a synchronous call under way
// at the stop is abandoned (Abandon), its answer discarded when it
// returns, and asynchronous ones are dropped (Close).
type Host struct {
	// Funcs are the functions the sandbox may call.
	Funcs *Funcs
	// Ctx is the context the functions are given; the owner cancels it
	// when the job ends.
	Ctx context.Context
	// Limit is what one value crossing may make the host allocate (the
	// decoder's budget, codec.DecodeBinary).
	Limit int
	// Spent is the error of a call the budget cannot pay for.
	Spent error
	// Results registers the functions a function's result holds; nil: a
	// function in a result is a *js.CloneError.
	Results codec.Registrar
	// OnPanic is told of a function that panicked, with the call's error
	// (which reveals nothing of the panic); nil: the call fails with it as
	// if the function had returned it.
	OnPanic func(err error)
	// Logs keeps the console's calls.
	Logs LogSink
	// Interrupt stops the job's bytecode; it is called from any
	// goroutine, again and again after a stop until Ended is closed. nil:
	// the job runs elsewhere (a worker process), and a stop only refuses
	// the calls that come after it.
	Interrupt func()
	// Abandon, if set, is called instead of interrupting when the stop
	// finds a synchronous call under way: the owner settles without the
	// VM's goroutine, which the call holds (the call's end interrupts the
	// job then).
	Abandon func()
	// Ended is closed when the job has ended.
	Ended <-chan struct{}

	// Budget is what is left for values crossing between the sandbox and
	// the host; the owner sets it (Budget.Init).
	Budget Budget
	async  *AsyncCalls

	stop     chan struct{}
	stopOnce sync.Once
	// inCall is set while the VM's goroutine is in a synchronous call;
	// stopped is set by Stop before it closes stop. Each side sets its own
	// flag before it reads the other's, so that a call that starts as the
	// job is stopped is either refused or seen, and abandoned.
	inCall  atomic.Bool
	stopped atomic.Bool
	// trace is whether the calls are traced (trace.go): traceUnknown
	// until the first call looks at Ctx.
	trace atomic.Int32
	// buf holds a synchronous call's encoded answer, which the engine
	// reads as the call returns: the next call's writes over it.
	buf []byte
}

// NewHost makes the host side of a job's calls, with at most asyncCalls
// asynchronous calls running at once (0: DefaultAsyncCalls). The owner
// sets the fields before the job starts.
func NewHost(asyncCalls int) *Host {
	return &Host{async: newAsyncCalls(asyncCalls), stop: make(chan struct{})}
}

// Job fills the host side's part of an engine job: its calls, its
// console, its stop and its asynchronous calls.
func (h *Host) Job(j *engine.Job) {
	j.CallBytes, j.LogBytes, j.Stop = h.Call, h.Log, h.stop
	h.async.Job(j)
}

// StopCh is closed at the stop.
func (h *Host) StopCh() <-chan struct{} { return h.stop }

// Stopped reports whether the job was stopped.
func (h *Host) Stopped() bool { return h.stopped.Load() }

// InCall reports whether the VM's goroutine is in a synchronous call.
func (h *Host) InCall() bool { return h.inCall.Load() }

// Stop stops the job, once, and reports whether this call did: decide,
// which records the owner's reason, runs first, then the calls are
// refused and the job is interrupted until Ended is closed, or, if a
// synchronous call holds the VM, abandoned (Abandon). The engine forgets
// an interrupt that arrives between two calls into it: hence again and
// again.
func (h *Host) Stop(decide func()) bool {
	first := false
	h.stopOnce.Do(func() {
		first = true
		if decide != nil {
			decide()
		}
		h.stopped.Store(true)
		close(h.stop)
		if h.Interrupt != nil {
			go h.interrupt()
		}
	})
	return first
}

func (h *Host) interrupt() {
	if h.Abandon != nil && h.inCall.Load() {
		h.Abandon()
		return
	}
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		h.Interrupt()
		select {
		case <-h.Ended:
			return
		case <-t.C:
		}
	}
}

// Close ends the job's asynchronous calls: waiting ones never start, and
// the answers of running ones are dropped when they come.
func (h *Host) Close() { h.async.Close() }

// Call is engine.Job.CallBytes: it runs function id for the sandbox, on
// the VM's goroutine, and writes its reply to rep.
func (h *Host) Call(id int, in []engine.Arg, encoded []byte, rep *engine.Reply) {
	if h.stopped.Load() { // set before stop is closed
		*rep = stoppedReply
		return
	}
	f := h.Funcs.At(id)
	switch {
	case f == nil:
		*rep = engine.Reply{Kind: engine.ReplyError, Value: TextUnknown}
	case h.traced():
		h.callTraced(f, in, encoded, rep)
	case f.typed != nil && encoded == nil && !f.Async:
		h.callTyped(h.Ctx, f, in, rep)
	default:
		*rep = h.call(h.Ctx, f, in, encoded, nil)
	}
}

// stoppedReply is a call's answer once its job is stopped, synchronous
// or asynchronous.
var stoppedReply = engine.Reply{Kind: engine.ReplyError, Value: TextStopped}

// call is Call for any function but a synchronous typed one: its
// arguments decoded, the function given ctx. span, if not nil, is the
// call's, which an asynchronous call ends when the function returns.
func (h *Host) call(ctx context.Context, f *Func, in []engine.Arg, encoded []byte, span trace.Span) engine.Reply {
	args, err := callArgs(f, in, encoded, h.Budget.Spend, h.Spent, h.Limit)
	if err != nil {
		return engine.Reply{Kind: engine.ReplyError, Value: err.Error()}
	}
	if f.Async {
		if span != nil {
			return h.async.Start(func() engine.Reply {
				rep := h.invoke(ctx, f, args, nil)
				endCallSpan(span, &rep)
				return rep
			})
		}
		return h.async.Start(func() engine.Reply { return h.invoke(ctx, f, args, nil) })
	}
	if !h.begin() {
		return stoppedReply
	}
	// Called directly, not through a closure: one the asynchronous branch
	// may keep would be allocated for every synchronous call too.
	rep := h.invoke(ctx, f, args, h.buf)
	if rep.Kind == engine.ReplyBytes && cap(rep.Bytes) <= maxKept {
		h.buf = rep.Bytes[:0]
	}
	if !h.end() {
		return stoppedReply
	}
	return rep
}

// maxKept is the largest buffer of encoded answers a Host keeps for the
// next call.
const maxKept = 64 << 10

// begin marks a synchronous call under way, and reports false, the call
// not to be made, if the job was stopped.
func (h *Host) begin() bool {
	h.inCall.Store(true)
	if h.stopped.Load() {
		h.inCall.Store(false)
		return false
	}
	return true
}

// end marks the call begun done, and reports false if the job was stopped
// meanwhile: its answer is discarded, and the job, which its owner may
// have settled without it, is interrupted here.
func (h *Host) end() bool {
	h.inCall.Store(false)
	if h.stopped.Load() {
		if h.Interrupt != nil {
			h.Interrupt()
		}
		return false
	}
	return true
}

// callTyped is Call for a synchronous function of numbers, strings and
// booleans (Func.Typed): it takes the primitives as the engine typed them,
// no []any, and writes a number, boolean or empty answer as it came into
// rep, field by field: a Reply returned and copied whole cost the
// processor a stall at each copy (it is larger than Go keeps in
// registers).
func (h *Host) callTyped(ctx context.Context, f *Func, in []engine.Arg, rep *engine.Reply) {
	// The answer's 8 bytes are paid with the arguments: one update of
	// the budget for a call that answers a number.
	if !h.Budget.Spend(ArgCost(in) + 8) {
		*rep = engine.Reply{Kind: engine.ReplyError, Value: h.Spent.Error()}
		return
	}
	if !h.begin() {
		*rep = stoppedReply
		return
	}
	v, err, panicked := f.CallTyped(ctx, in)
	if panicked && h.OnPanic != nil {
		h.OnPanic(err)
	}
	// The answer crosses as it is unless it is text that is not UTF-8 (a
	// lone surrogate's WTF-8), which crosses encoded, as any other
	// value's; the bytes of its text are paid for here.
	switch {
	case err != nil:
		*rep = budgeted(Reply(nil, err, nil, nil), h.Budget.Spend, h.Spent)
	case v.Kind == wasmvm.String && !utf8.ValidString(v.Text):
		*rep = budgeted(Reply(v.Text, nil, h.Results, nil), h.Budget.Spend, h.Spent)
	case v.Kind == wasmvm.String && v.Text != "" && !h.Budget.Spend(len(v.Text)):
		*rep = engine.Reply{Kind: engine.ReplyError, Value: h.Spent.Error()}
	default:
		rep.Kind, rep.Arg = engine.ReplyArg, v
	}
	if !h.end() {
		*rep = stoppedReply
	}
}

// invoke calls f with args and ctx and makes its reply, its encoding
// appended to buf.
func (h *Host) invoke(ctx context.Context, f *Func, args Args, buf []byte) engine.Reply {
	v, err, panicked := f.Call(ctx, args)
	if panicked && h.OnPanic != nil {
		h.OnPanic(err)
	}
	return budgeted(Reply(v, err, h.Results, buf), h.Budget.Spend, h.Spent)
}

// Log is engine.Job.LogBytes: a call of the console's method level (an
// index into levels) with its arguments encoded (a view of the sandbox's
// memory, read during the call only), paid for and kept (Logs), or
// refused once the job is stopped.
func (h *Host) Log(level int, encoded []byte) {
	if level < 0 || level >= len(levels) || h.stopped.Load() || !h.Logs.Wants(level) {
		return
	}
	if !h.Budget.SpendEntry(encoded) {
		h.Logs.Spent()
		return
	}
	v, err := codec.DecodeBinaryBytes(encoded, h.Limit)
	args, _ := v.([]any)
	if err != nil || args == nil {
		args = []any{}
	}
	h.Logs.Log(level, args)
}

// Answer runs function id for a job that runs in a worker process, with
// its argument list as the worker sends it (argsOfList), on the caller's
// goroutine whatever the function (the worker makes the promise of an
// asynchronous one), and gives its result as the worker takes it: encoded
// in the binary format, or a JSON function's JSON text; or the message of
// its error, never empty.
func (h *Host) Answer(id int, list []byte) (out []byte, errText string) {
	if h.traced() {
		return h.answerTraced(id, list)
	}
	return h.answer(h.Ctx, id, list)
}

// answer is Answer, the function given ctx.
func (h *Host) answer(ctx context.Context, id int, list []byte) (out []byte, errText string) {
	if h.stopped.Load() {
		return nil, TextStopped // no function starts after the host's decision
	}
	f := h.Funcs.At(id)
	if f == nil {
		return nil, TextUnknown
	}
	if !h.Budget.Spend(listCost(f, list)) {
		return nil, h.Spent.Error()
	}
	args, err := argsOfList(f, list, h.Limit)
	if err != nil {
		return nil, message(err)
	}
	v, err, panicked := f.Call(ctx, args)
	if panicked && h.OnPanic != nil {
		h.OnPanic(err)
	}
	if err != nil {
		return nil, message(err)
	}
	if t, ok := v.(JSONText); ok {
		if !h.Budget.Spend(codec.JSONCost(t)) {
			return nil, h.Spent.Error()
		}
		return t, ""
	}
	enc, err := codec.AppendBinary(nil, v, h.Results)
	if err != nil {
		return nil, message(err)
	}
	if !h.Budget.Spend(codec.BinaryCost(enc)) {
		return nil, h.Spent.Error()
	}
	return enc, ""
}

// message is an error's message for a worker process, never empty: an
// empty one would read as success.
func message(err error) string {
	if m := err.Error(); m != "" {
		return m
	}
	return "error"
}

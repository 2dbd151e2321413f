// Package hostcall is the host side of a call from the sandbox to a
// bridged Go function: the function's converters, built once per Go
// function type and cached (as encoding/json caches its encoders), the
// call, its reply, the budget it pays from and the queue of asynchronous
// calls.
//
// [Host] is that side for one job, a run or an executor's step, and for
// the calls a worker process sends its host ([Host.Answer]): one
// dispatcher (which function; typed, reflective or JSON; synchronous or
// asynchronous), one reply path, one sink for the console's calls, one
// budget, one stop rule and one set of texts. What differs between a run
// and a step is set in the Host's fields by its owner, in the root
// package. Arguments and answers cross as the engine hands them over:
// primitives typed ([engine.Arg]), anything else as bytes of the codec's
// binary format, an encoded argument list a view of the sandbox's memory
// that is read during the call and never kept.
//
// A call converts its arguments straight to the parameters' types: the
// primitives the engine hands over as they are typed, an encoded argument
// list from the binary format (internal/codec). The functions of numbers,
// strings and booleans ([Func.Typed]: one parameter of int, int64, uint,
// float64, string or bool, or two of int, float64, string and bool; a
// result of one of them, an error, both or none; a first context.Context,
// with two parameters when it returns an error) are called by callers
// written for their types (typed.go): nothing is boxed, nothing allocated,
// no reflection. Any other function is called through reflect.Value.Call
// with its arguments converted by its type's converters.
//
// A Func is safe for concurrent use: the asynchronous calls of a run call
// it from goroutines of their own.
package hostcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/js"
)

// AsyncFunc marks a Go function as asynchronous (airlock.Async): called
// from the sandbox it returns a Promise and runs on a goroutine of its own.
type AsyncFunc struct{ Fn reflect.Value }

// BridgedMode is the mode of the function it wraps.
func (a AsyncFunc) BridgedMode() codec.FuncMode {
	if IsJSON(a.Fn) {
		return codec.FuncJSON
	}
	return codec.FuncPlain
}

// JSONFunc is a function that takes and gives JSON text (airlock.JSONFunc).
type JSONFunc struct {
	Fn func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// BridgedMode is codec.FuncJSON.
func (JSONFunc) BridgedMode() codec.FuncMode { return codec.FuncJSON }

// ShownFunc is a host function whose arguments are values to show or
// store, not to compute with: the built-in report (codec.FuncShown).
type ShownFunc func(v any)

// BridgedMode is codec.FuncShown.
func (ShownFunc) BridgedMode() codec.FuncMode { return codec.FuncShown }

// IsJSON reports whether a bridged value is a JSONFunc, asynchronous or
// not: the sandbox gives those their arguments as JSON text.
func IsJSON(v reflect.Value) bool {
	if !v.IsValid() || !v.CanInterface() {
		return false
	}
	if a, ok := v.Interface().(AsyncFunc); ok {
		v = a.Fn
		if !v.IsValid() || !v.CanInterface() {
			return false
		}
	}
	_, ok := v.Interface().(JSONFunc)
	return ok
}

// IsBridged reports whether v is a function the sandbox can call: a Go
// function or one of the wrappers.
func IsBridged(v reflect.Value) bool {
	if !v.IsValid() {
		return false
	}
	if v.Kind() == reflect.Func {
		return !v.IsNil()
	}
	t := v.Type()
	return t == typeAsync || t == typeJSONFunc
}

var (
	typeContext  = reflect.TypeFor[context.Context]()
	typeError    = reflect.TypeFor[error]()
	typeAny      = reflect.TypeFor[any]()
	typeAsync    = reflect.TypeFor[AsyncFunc]()
	typeJSONFunc = reflect.TypeFor[JSONFunc]()
)

// Func is a Go function the sandbox can call, with its converters.
type Func struct {
	fn reflect.Value
	// Async is set for a function wrapped with AsyncFunc.
	Async bool
	sig   *signature
	// typed calls the function with the primitives as the engine typed
	// them and gives its answer typed (see Typed).
	typed typedCaller
	// list calls the functions of any values (func(any) any, func(...any)
	// …) with the decoded values, without reflection.
	list func(args []any) (any, error)
	// json is the function of a JSONFunc.
	json func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// signature is what a function's type says of its calls, built once per
// type.
type signature struct {
	withCtx  bool
	params   []reflect.Type // after the context, if any; ...T as T
	variadic bool
	errLast  bool // the last result is an error
	nOut     int
	conv     *codec.Params
}

var signatures sync.Map // reflect.Type → *signature or error

func signatureOf(t reflect.Type) (*signature, error) {
	if s, ok := signatures.Load(t); ok {
		if err, ok := s.(error); ok {
			return nil, err
		}
		return s.(*signature), nil
	}
	s, err := newSignature(t)
	if err != nil {
		signatures.Store(t, err)
		return nil, err
	}
	signatures.Store(t, s)
	return s, nil
}

func newSignature(t reflect.Type) (*signature, error) {
	s := &signature{variadic: t.IsVariadic(), nOut: t.NumOut()}
	switch {
	case s.nOut > 2:
		return nil, fmt.Errorf("airlock: bridged function %s returns %d values; it may return (T), (T, error), (error) or nothing", t, s.nOut)
	case s.nOut == 2 && t.Out(1) != typeError:
		return nil, fmt.Errorf("airlock: bridged function %s: the second result must be an error", t)
	}
	s.errLast = s.nOut > 0 && t.Out(s.nOut-1) == typeError
	for i := 0; i < t.NumIn(); i++ {
		p := t.In(i)
		if i == 0 && p == typeContext {
			s.withCtx = true
			continue
		}
		if s.variadic && i == t.NumIn()-1 {
			p = p.Elem()
		}
		s.params = append(s.params, p)
	}
	s.conv = codec.NewParams(s.params, s.variadic)
	return s, nil
}

// New makes the Func of a bridged value: a Go function, an AsyncFunc or a
// JSONFunc.
func New(v reflect.Value) (*Func, error) {
	async := false
	if v.IsValid() && v.Type() == typeAsync {
		v, async = v.Interface().(AsyncFunc).Fn, true
	}
	if v.IsValid() && v.Type() == typeJSONFunc {
		j := v.Interface().(JSONFunc)
		if j.Fn == nil {
			return nil, errors.New("airlock: JSONFunc needs a function, got nil")
		}
		return &Func{fn: reflect.ValueOf(j.Fn), Async: async, json: j.Fn}, nil
	}
	if !v.IsValid() || v.Kind() != reflect.Func || v.IsNil() {
		return nil, fmt.Errorf("airlock: Async needs a function, got %v", v)
	}
	sig, err := signatureOf(v.Type())
	if err != nil {
		return nil, err
	}
	f := &Func{fn: v, Async: async, sig: sig}
	if v.CanInterface() {
		fn := v.Interface()
		f.list = listCaller(fn)
		f.typed = typedCallerOf(v.Type(), fn)
	}
	return f, nil
}

// NewShown makes the Func of the built-in report, whose argument is shown
// or stored: it takes its value as it was decoded.
func NewShown(fn ShownFunc) *Func {
	return &Func{fn: reflect.ValueOf(fn), sig: shownSignature,
		list: func(args []any) (any, error) { fn(argAt(args, 0)); return js.Undefined{}, nil }}
}

var shownSignature, _ = signatureOf(reflect.TypeFor[ShownFunc]())

// JSON reports whether f is a JSONFunc: its argument is the JSON text of
// the argument list.
func (f *Func) JSON() bool { return f.json != nil }

// Typed reports whether f is called with the primitives as the engine typed
// them (CallTyped): a function of numbers, strings and booleans.
func (f *Func) Typed() bool { return f.typed != nil }

// Name is the function's name, for a message.
func (f *Func) Name() string {
	fn := runtime.FuncForPC(f.fn.Pointer())
	if fn == nil {
		return "function"
	}
	name := fn.Name()
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// failed is the error of a call that panicked: it reveals nothing of the
// panic.
func (f *Func) failed() error { return fmt.Errorf("host function %s failed", f.Name()) }

// CallTyped calls a typed function (Typed) with primitive arguments, which
// are valid during the call only. It returns the function's answer, or an
// error to throw in the sandbox; a panic is reported as panicked, with a
// message that reveals nothing of it.
func (f *Func) CallTyped(ctx context.Context, args []engine.Arg) (result engine.Arg, err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			result, err, panicked = engine.Arg{}, f.failed(), true
		}
	}()
	result, err = f.typed(ctx, args)
	return result, err, false
}

// Call calls the function with its converted arguments. It returns the
// function's value, or an error to throw in the sandbox. A panic is
// reported as panicked, with a message that reveals nothing of it.
func (f *Func) Call(ctx context.Context, args Args) (result any, err error, panicked bool) {
	switch {
	case args.err != nil:
		return nil, args.err, false
	case f.json != nil:
		return f.callJSON(ctx, args)
	case args.typed:
		return f.callTyped(ctx, args.prims)
	case args.list != nil || f.list != nil:
		return f.callList(args.list)
	}
	return f.callReflect(ctx, args.in)
}

// callJSON is Call for a JSONFunc: its text in, its text out.
func (f *Func) callJSON(ctx context.Context, args Args) (result any, err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			result, err, panicked = nil, f.failed(), true
		}
	}()
	out, err := f.json(ctx, json.RawMessage(args.text))
	if err != nil {
		return nil, err, false
	}
	// A synchronous answer is checked by the engine's parser, which
	// reads it anyway; an asynchronous one settles a promise later.
	if f.Async && len(out) > 0 && !json.Valid(out) {
		return nil, fmt.Errorf("host function %s returned text that is not JSON", f.Name()), false
	}
	return JSONText(out), nil, false
}

// callTyped is Call for a typed function given its primitives.
func (f *Func) callTyped(ctx context.Context, prims []engine.Arg) (any, error, bool) {
	v, err, panicked := f.CallTyped(ctx, prims)
	if err != nil {
		return nil, err, panicked
	}
	return fromArg(v), nil, false
}

// callList is Call for a function of decoded values. It is a function of
// its own so that its deferred recover is open-coded: Call has too many
// returns for that.
func (f *Func) callList(args []any) (result any, err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			result, err, panicked = nil, f.failed(), true
		}
	}()
	result, err = f.list(args)
	return result, err, false
}

// callReflect is Call for any other function, through reflection.
func (f *Func) callReflect(ctx context.Context, in []reflect.Value) (result any, err error, panicked bool) {
	if f.sig.withCtx {
		in[0] = reflect.ValueOf(ctx)
	}
	defer func() {
		if p := recover(); p != nil {
			result, err, panicked = nil, f.failed(), true
		}
	}()
	out := f.fn.Call(in)
	if f.sig.errLast {
		if e, _ := out[f.sig.nOut-1].Interface().(error); e != nil {
			return nil, e, false
		}
		out = out[:f.sig.nOut-1]
	}
	if len(out) == 0 {
		return js.Undefined{}, nil, false
	}
	return out[0].Interface(), nil, false
}

// JSONText is JSON text a JSONFunc returned, on its way to the sandbox.
type JSONText []byte

// listCaller returns a caller without reflection for the shapes of
// functions of decoded values, or nil. Arguments are passed as decoded.
func listCaller(fn any) func(args []any) (any, error) {
	switch f := fn.(type) {
	case func():
		return func([]any) (any, error) { f(); return js.Undefined{}, nil }
	case func(any):
		return func(args []any) (any, error) { f(argAt(args, 0)); return js.Undefined{}, nil }
	case func(any) any:
		return func(args []any) (any, error) { return f(argAt(args, 0)), nil }
	case func(any) (any, error):
		return func(args []any) (any, error) { return f(argAt(args, 0)) }
	case func(...any):
		return func(args []any) (any, error) { f(args...); return js.Undefined{}, nil }
	case func(...any) any:
		return func(args []any) (any, error) { return f(args...), nil }
	case func(...any) (any, error):
		return func(args []any) (any, error) { return f(args...) }
	}
	return nil
}

// argAt is argument i for an any parameter: undefined when missing, as
// Convert gives it.
func argAt(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined{}
}

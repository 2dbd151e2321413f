package airlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/wasmvm"
	"github.com/airlockrun/airlock/js"
)

// Async marks a Go function as asynchronous: called from the sandbox it
// returns a Promise at once and runs on its own goroutine, so that
// Promise.all over several calls runs them concurrently, at most
// RuntimeConfig.MaxAsyncCalls of a run at once. The function's shape is that
// of any bridged function (see the package documentation). A run settles
// without waiting for its asynchronous calls: when it ends, their context
// is cancelled and what they return later is discarded, so a function that
// blocks should honour its context.Context parameter.
func Async(fn any) any { return asyncFunc{fn: reflect.ValueOf(fn)} }

type asyncFunc struct{ fn reflect.Value }

// BridgedMode is the mode of the function it wraps.
func (a asyncFunc) BridgedMode() codec.FuncMode {
	if isJSONFunc(a.fn) {
		return codec.FuncJSON
	}
	return codec.FuncPlain
}

// BridgedMode is codec.FuncJSON.
func (jsonFunc) BridgedMode() codec.FuncMode { return codec.FuncJSON }

// shownFunc is a host function whose arguments are values to show or
// store, not to compute with: the built-in report (codec.FuncShown).
type shownFunc func(v any)

// BridgedMode is codec.FuncShown.
func (shownFunc) BridgedMode() codec.FuncMode { return codec.FuncShown }

var (
	typeAsync    = reflect.TypeFor[asyncFunc]()
	typeJSONFunc = reflect.TypeFor[jsonFunc]()
)

// JSONFunc bridges a Go function that takes and gives JSON text, the
// fastest way across the boundary for structured data. Called from the
// sandbox, its arguments reach fn as the JSON text of the argument list,
// made by the sandbox's own JSON.stringify (so toJSON, getters and Proxy
// traps run there first, undefined becomes null in the list and is left out
// of objects, and a BigInt or a cycle throws in the sandbox); what fn
// returns is parsed by the sandbox's JSON.parse, and empty text is
// undefined. An error from fn is thrown in the sandbox as an Error with its
// message. Wrap it with Async to get a Promise instead of a value.
func JSONFunc(fn func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)) any {
	return jsonFunc{fn: fn}
}

type jsonFunc struct {
	fn func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// jsonText is JSON text a JSONFunc returned, on its way to the sandbox.
type jsonText []byte

// isJSONFunc reports whether a bridged value is a JSONFunc, asynchronous or
// not: the sandbox gives those their arguments as JSON text.
func isJSONFunc(v reflect.Value) bool {
	if a, ok := v.Interface().(asyncFunc); ok {
		v = a.fn
	}
	_, ok := v.Interface().(jsonFunc)
	return ok
}

var (
	typeContext = reflect.TypeFor[context.Context]()
	typeError   = reflect.TypeFor[error]()
	typeAny     = reflect.TypeFor[any]()
)

// hostFunc is a Go function the sandbox can call.
type hostFunc struct {
	fn      reflect.Value
	async   bool
	withCtx bool
	params  []reflect.Type // after the context, if any
	errLast bool           // the last result is an error
	nOut    int
	// fast calls the function without reflection, for the common shapes.
	fast func(args []any) (any, error)
	// typed calls the function with the sandbox's primitives as the engine
	// typed them and gives its answer typed, for the common shapes of
	// numbers, strings and booleans: nothing is boxed, nothing allocated.
	typed func(args []engine.Arg) (engine.Arg, error)
	// json is the function of a JSONFunc.
	json func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// fastPath returns a reflection-free caller for the most common function
// shapes, or nil. Arguments are converted as convertArg converts them.
func fastPath(fn any) func(args []any) (any, error) {
	switch f := fn.(type) {
	case func():
		return func([]any) (any, error) { f(); return js.Undefined{}, nil }
	case func(any):
		return func(args []any) (any, error) { f(argAt(args, 0)); return js.Undefined{}, nil }
	case func(any) any:
		return func(args []any) (any, error) { return f(argAt(args, 0)), nil }
	case func(...any):
		return func(args []any) (any, error) { f(args...); return js.Undefined{}, nil }
	case func(...any) any:
		return func(args []any) (any, error) { return f(args...), nil }
	case func(...any) (any, error):
		return func(args []any) (any, error) { return f(args...) }
	case func(float64) float64:
		return func(args []any) (any, error) {
			n, err := numberAt(args, 0)
			if err != nil {
				return nil, err
			}
			return f(n), nil
		}
	case func(float64, float64) float64:
		return func(args []any) (any, error) {
			a, err := numberAt(args, 0)
			if err != nil {
				return nil, err
			}
			b, err := numberAt(args, 1)
			if err != nil {
				return nil, err
			}
			return f(a, b), nil
		}
	case func(string) string:
		return func(args []any) (any, error) {
			s, err := stringAt(args, 0)
			if err != nil {
				return nil, err
			}
			return f(s), nil
		}
	case func(string) (string, error):
		return func(args []any) (any, error) {
			s, err := stringAt(args, 0)
			if err != nil {
				return nil, err
			}
			return f(s)
		}
	}
	return nil
}

// typedPath returns a caller of the shapes of numbers, strings and
// booleans that never boxes, or nil. Arguments are converted as fastPath
// converts them (numberAt, stringAt), with the same errors.
func typedPath(fn any) func(args []engine.Arg) (engine.Arg, error) {
	num := func(x float64) engine.Arg { return engine.Arg{Kind: wasmvm.Number, Number: x} }
	str := func(x string) engine.Arg { return engine.Arg{Kind: wasmvm.String, Text: x} }
	switch f := fn.(type) {
	case func(float64) float64:
		return func(args []engine.Arg) (engine.Arg, error) {
			n, err := typedNumber(args, 0)
			if err != nil {
				return engine.Arg{}, err
			}
			return num(f(n)), nil
		}
	case func(float64) (float64, error):
		return func(args []engine.Arg) (engine.Arg, error) {
			n, err := typedNumber(args, 0)
			if err != nil {
				return engine.Arg{}, err
			}
			r, err := f(n)
			return num(r), err
		}
	case func(float64, float64) float64:
		return func(args []engine.Arg) (engine.Arg, error) {
			a, err := typedNumber(args, 0)
			if err != nil {
				return engine.Arg{}, err
			}
			b, err := typedNumber(args, 1)
			if err != nil {
				return engine.Arg{}, err
			}
			return num(f(a, b)), nil
		}
	case func(string) string:
		return func(args []engine.Arg) (engine.Arg, error) {
			s, err := typedString(args, 0)
			if err != nil {
				return engine.Arg{}, err
			}
			return str(f(s)), nil
		}
	case func(string) (string, error):
		return func(args []engine.Arg) (engine.Arg, error) {
			s, err := typedString(args, 0)
			if err != nil {
				return engine.Arg{}, err
			}
			r, err := f(s)
			return str(r), err
		}
	case func(string) float64:
		return func(args []engine.Arg) (engine.Arg, error) {
			s, err := typedString(args, 0)
			if err != nil {
				return engine.Arg{}, err
			}
			return num(f(s)), nil
		}
	case func(string) bool:
		return func(args []engine.Arg) (engine.Arg, error) {
			s, err := typedString(args, 0)
			if err != nil {
				return engine.Arg{}, err
			}
			return engine.Arg{Kind: wasmvm.Bool, Bool: f(s)}, nil
		}
	}
	return nil
}

// typedNumber is argument i for a float64 parameter, as numberAt.
func typedNumber(args []engine.Arg, i int) (float64, error) {
	if i >= len(args) {
		return 0, nil
	}
	switch a := args[i]; a.Kind {
	case wasmvm.Number:
		return a.Number, nil
	case wasmvm.Undefined, wasmvm.Null:
		return 0, nil
	default:
		return 0, argError(i, fromArg(a), "float64")
	}
}

// typedString is argument i for a string parameter, as stringAt.
func typedString(args []engine.Arg, i int) (string, error) {
	if i >= len(args) {
		return "", nil
	}
	switch a := args[i]; a.Kind {
	case wasmvm.String:
		return a.Text, nil
	case wasmvm.Undefined, wasmvm.Null:
		return "", nil
	default:
		return "", argError(i, fromArg(a), "string")
	}
}

// argAt is argument i for an any parameter: undefined when missing, as in
// convertArg.
func argAt(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined{}
}

// numberAt is argument i for a float64 parameter.
func numberAt(args []any, i int) (float64, error) {
	switch x := argAt(args, i).(type) {
	case float64:
		return x, nil
	case nil, js.Undefined:
		return 0, nil
	default:
		return 0, argError(i, x, "float64")
	}
}

// stringAt is argument i for a string parameter.
func stringAt(args []any, i int) (string, error) {
	switch x := argAt(args, i).(type) {
	case string:
		return x, nil
	case nil, js.Undefined:
		return "", nil
	default:
		return "", argError(i, x, "string")
	}
}

// argError is the error of argument i, value a, which a parameter of type
// to cannot take: one text for the fast and the typed paths.
func argError(i int, a any, to string) error {
	return fmt.Errorf("argument %d: cannot convert %s to %s", i+1, codec.JSType(a), to)
}

func newHostFunc(v reflect.Value) (*hostFunc, error) {
	async := false
	if a, ok := v.Interface().(asyncFunc); ok {
		v, async = a.fn, true
	}
	if v.IsValid() && v.CanInterface() {
		if j, ok := v.Interface().(jsonFunc); ok {
			if j.fn == nil {
				return nil, errors.New("airlock: JSONFunc needs a function, got nil")
			}
			return &hostFunc{fn: reflect.ValueOf(j.fn), async: async, json: j.fn}, nil
		}
	}
	if !v.IsValid() || v.Kind() != reflect.Func || v.IsNil() {
		return nil, fmt.Errorf("airlock: Async needs a function, got %v", v)
	}
	t := v.Type()
	h := &hostFunc{fn: v, async: async}
	for i := 0; i < t.NumIn(); i++ {
		p := t.In(i)
		if i == 0 && p == typeContext {
			h.withCtx = true
			continue
		}
		h.params = append(h.params, p)
	}
	h.nOut = t.NumOut()
	switch {
	case h.nOut > 2:
		return nil, fmt.Errorf("airlock: bridged function %s returns %d values; it may return (T), (T, error), (error) or nothing", t, h.nOut)
	case h.nOut == 2 && t.Out(1) != typeError:
		return nil, fmt.Errorf("airlock: bridged function %s: the second result must be an error", t)
	}
	h.errLast = h.nOut > 0 && t.Out(h.nOut-1) == typeError
	h.fast = fastPath(v.Interface())
	h.typed = typedPath(v.Interface())
	return h, nil
}

func funcName(v reflect.Value) string {
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return "function"
	}
	name := f.Name()
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// call converts the arguments and calls the function. It returns the
// function's value, or an error to throw in the sandbox. A panic is
// reported as panicked, with a message that reveals nothing of it.
func (h *hostFunc) call(ctx context.Context, args []any) (result any, err error, panicked bool) {
	if h.json != nil {
		defer func() {
			if p := recover(); p != nil {
				result, err, panicked = nil, fmt.Errorf("host function %s failed", funcName(h.fn)), true
			}
		}()
		text, _ := argAt(args, 0).(string)
		out, err := h.json(ctx, json.RawMessage(text))
		if err != nil {
			return nil, err, false
		}
		// A synchronous answer is checked by the engine's parser, which
		// reads it anyway; an asynchronous one settles a promise later.
		if h.async && len(out) > 0 && !json.Valid(out) {
			return nil, fmt.Errorf("host function %s returned text that is not JSON", funcName(h.fn)), false
		}
		return jsonText(out), nil, false
	}
	if h.fast != nil {
		return h.callFast(args)
	}
	in := make([]reflect.Value, 0, len(h.params)+1)
	if h.withCtx {
		in = append(in, reflect.ValueOf(ctx))
	}
	variadic := h.fn.Type().IsVariadic()
	for i, p := range h.params {
		if variadic && i == len(h.params)-1 {
			elem := p.Elem()
			for j := i; j < len(args); j++ {
				v, err := convertArg(args[j], elem)
				if err != nil {
					return nil, fmt.Errorf("argument %d: %w", j+1, err), false
				}
				in = append(in, v)
			}
			break
		}
		var a any = js.Undefined{}
		if i < len(args) {
			a = args[i]
		}
		v, err := convertArg(a, p)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err), false
		}
		in = append(in, v)
	}
	defer func() {
		if p := recover(); p != nil {
			result, err, panicked = nil, fmt.Errorf("host function %s failed", funcName(h.fn)), true
		}
	}()
	out := h.fn.Call(in)
	if h.errLast {
		if e, _ := out[h.nOut-1].Interface().(error); e != nil {
			return nil, e, false
		}
		out = out[:h.nOut-1]
	}
	if len(out) == 0 {
		return js.Undefined{}, nil, false
	}
	return out[0].Interface(), nil, false
}

// callFast is call for a function with a fast path. It is a function of
// its own so that its deferred recover is open-coded: call has too many
// returns for that, and its defer records were 3% of a host call.
func (h *hostFunc) callFast(args []any) (result any, err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			result, err, panicked = nil, fmt.Errorf("host function %s failed", funcName(h.fn)), true
		}
	}()
	result, err = h.fast(args)
	return result, err, false
}

// callTyped is call for a function with a typed path (h.typed).
func (h *hostFunc) callTyped(args []engine.Arg) (result engine.Arg, err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			result, err, panicked = engine.Arg{}, fmt.Errorf("host function %s failed", funcName(h.fn)), true
		}
	}()
	result, err = h.typed(args)
	return result, err, false
}

// convertArg converts a value that came from the sandbox to a parameter type.
func convertArg(a any, t reflect.Type) (reflect.Value, error) { return codec.Convert(a, t) }

// reply turns a host function's result into the engine's reply.
func (r *run) reply(v any, err error) engine.Reply {
	return budgetedReply(hostReply(v, err, r.register), r.budget.spend, errRunBudgetSpent)
}

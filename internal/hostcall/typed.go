package hostcall

import (
	"context"
	"reflect"
	"sync"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/wasmvm"
)

// A typedCaller calls a function of primitives with the arguments as the
// engine typed them and gives its answer typed: nothing is boxed, nothing
// allocated, nothing reflected.
type typedCaller func(ctx context.Context, args []engine.Arg) (engine.Arg, error)

// prim is the types typed callers take and give. A function of other types
// (or more parameters) goes through reflection, converted the same way.
type prim interface {
	int | int64 | uint | float64 | string | bool
}

// typedMakers makes, for each function type of the typed shapes, the
// caller of a function of that type.
var (
	typedOnce   sync.Once
	typedMakers map[reflect.Type]func(fn any) typedCaller
)

// typedCallerOf returns the typed caller of fn, of type t, or nil.
func typedCallerOf(t reflect.Type, fn any) typedCaller {
	typedOnce.Do(func() {
		typedMakers = map[reflect.Type]func(fn any) typedCaller{}
		shapes0(typedMakers)
		shapes1(typedMakers)
		shapes2(typedMakers)
	})
	if m := typedMakers[t]; m != nil {
		return m(fn)
	}
	return nil
}

// getter returns the reader of argument i for a parameter of type A,
// chosen once per shape: the call reads with it, with no type switch. A
// missing argument is undefined.
func getter[A prim]() func(args []engine.Arg, i int) (A, error) {
	var f any
	switch any(*new(A)).(type) {
	case float64:
		f = func(args []engine.Arg, i int) (float64, error) {
			if i < len(args) && args[i].Kind == wasmvm.Number {
				return args[i].Number, nil
			}
			x, err := number(arg(args, i), typeFloat64)
			return x, wrap(i, err)
		}
	case int:
		f = func(args []engine.Arg, i int) (int, error) {
			// An integral number in range, the common case, at once: int64
			// of anything else (a fraction, NaN, past the range) is not it.
			if i < len(args) && args[i].Kind == wasmvm.Number && float64(int(args[i].Number)) == args[i].Number {
				return int(args[i].Number), nil
			}
			n, err := integer(arg(args, i), typeInt)
			return int(n), wrap(i, err)
		}
	case int64:
		f = func(args []engine.Arg, i int) (int64, error) {
			if i < len(args) && args[i].Kind == wasmvm.Number && float64(int64(args[i].Number)) == args[i].Number {
				return int64(args[i].Number), nil
			}
			n, err := integer(arg(args, i), typeInt64)
			return n, wrap(i, err)
		}
	case uint:
		f = func(args []engine.Arg, i int) (uint, error) {
			n, err := unsigned(arg(args, i), typeUint)
			return uint(n), wrap(i, err)
		}
	case string:
		f = func(args []engine.Arg, i int) (string, error) {
			if i < len(args) && args[i].Kind == wasmvm.String {
				return args[i].Text, nil
			}
			s, err := text(arg(args, i))
			return s, wrap(i, err)
		}
	case bool:
		f = func(args []engine.Arg, i int) (bool, error) {
			b, err := boolean(arg(args, i))
			return b, wrap(i, err)
		}
	}
	return f.(func([]engine.Arg, int) (A, error))
}

// wrap is argError of argument i, or nil.
func wrap(i int, err error) error {
	if err != nil {
		return argError(i, err)
	}
	return nil
}

// putter returns the writer of an answer of type R as a typed primitive.
func putter[R prim]() func(r R) engine.Arg {
	var f any
	switch any(*new(R)).(type) {
	case float64:
		f = func(x float64) engine.Arg { return engine.Arg{Kind: wasmvm.Number, Number: x} }
	case int:
		f = func(x int) engine.Arg { return engine.Arg{Kind: wasmvm.Number, Number: float64(x)} }
	case int64:
		f = func(x int64) engine.Arg { return engine.Arg{Kind: wasmvm.Number, Number: float64(x)} }
	case uint:
		f = func(x uint) engine.Arg { return engine.Arg{Kind: wasmvm.Number, Number: float64(x)} }
	case string:
		f = func(x string) engine.Arg { return engine.Arg{Kind: wasmvm.String, Text: x} }
	case bool:
		f = func(x bool) engine.Arg { return engine.Arg{Kind: wasmvm.Bool, Bool: x} }
	}
	return f.(func(R) engine.Arg)
}

// arg is argument i: undefined when it is missing.
func arg(args []engine.Arg, i int) engine.Arg {
	if i < len(args) {
		return args[i]
	}
	return engine.Arg{}
}

var (
	typeFloat64 = reflect.TypeFor[float64]()
	typeInt     = reflect.TypeFor[int]()
	typeInt64   = reflect.TypeFor[int64]()
	typeUint    = reflect.TypeFor[uint]()
	typeString  = reflect.TypeFor[string]()
	typeBool    = reflect.TypeFor[bool]()
)

// The conversions of a primitive, as codec.Convert converts its value.

func number(a engine.Arg, t reflect.Type) (float64, error) {
	switch a.Kind {
	case wasmvm.Number:
		return a.Number, nil
	case wasmvm.Undefined, wasmvm.Null:
		return 0, nil
	}
	return 0, codec.CannotConvert(codec.JSType(fromArg(a)), t)
}

func integer(a engine.Arg, t reflect.Type) (int64, error) {
	switch a.Kind {
	case wasmvm.Number:
		return codec.IntOf(a.Number, t)
	case wasmvm.Undefined, wasmvm.Null:
		return 0, nil
	}
	return 0, codec.CannotConvert(codec.JSType(fromArg(a)), t)
}

func unsigned(a engine.Arg, t reflect.Type) (uint64, error) {
	switch a.Kind {
	case wasmvm.Number:
		return codec.UintOf(a.Number, t)
	case wasmvm.Undefined, wasmvm.Null:
		return 0, nil
	}
	return 0, codec.CannotConvert(codec.JSType(fromArg(a)), t)
}

func text(a engine.Arg) (string, error) {
	switch a.Kind {
	case wasmvm.String:
		return a.Text, nil
	case wasmvm.Undefined, wasmvm.Null:
		return "", nil
	}
	return "", codec.CannotConvert(codec.JSType(fromArg(a)), typeString)
}

func boolean(a engine.Arg) (bool, error) {
	switch a.Kind {
	case wasmvm.Bool:
		return a.Bool, nil
	case wasmvm.Undefined, wasmvm.Null:
		return false, nil
	}
	return false, codec.CannotConvert(codec.JSType(fromArg(a)), typeBool)
}

type makers = map[reflect.Type]func(fn any) typedCaller

// The shapes are registered by generic functions, one level per type
// parameter, each listing prim's types once: Go cannot range over types.

func shapes0(m makers) {
	noResult0(m)
	result0[int](m)
	result0[int64](m)
	result0[uint](m)
	result0[float64](m)
	result0[string](m)
	result0[bool](m)
}

func shapes1(m makers) {
	shapes1Of[int](m)
	shapes1Of[int64](m)
	shapes1Of[uint](m)
	shapes1Of[float64](m)
	shapes1Of[string](m)
	shapes1Of[bool](m)
}

func shapes1Of[A prim](m makers) {
	noResult1[A](m)
	result1[A, int](m)
	result1[A, int64](m)
	result1[A, uint](m)
	result1[A, float64](m)
	result1[A, string](m)
	result1[A, bool](m)
}

// The functions of two parameters are the commonest mixes only (each
// shape is compiled code of its own): parameters of int, float64, string
// and bool, a result of one of them or none, with an error or not, with a
// context and an error.
func shapes2(m makers) {
	shapes2Of[int](m)
	shapes2Of[float64](m)
	shapes2Of[string](m)
	shapes2Of[bool](m)
}

func shapes2Of[A prim](m makers) {
	shapes2With[A, int](m)
	shapes2With[A, float64](m)
	shapes2With[A, string](m)
	shapes2With[A, bool](m)
}

func shapes2With[A, B prim](m makers) {
	noResult2[A, B](m)
	result2[A, B, int](m)
	result2[A, B, float64](m)
	result2[A, B, string](m)
	result2[A, B, bool](m)
}

// noResult0 registers func(), func() error, func(ctx), func(ctx) error.
func noResult0(m makers) {
	m[reflect.TypeFor[func()]()] = func(fn any) typedCaller {
		f := fn.(func())
		return func(context.Context, []engine.Arg) (engine.Arg, error) { f(); return engine.Arg{}, nil }
	}
	m[reflect.TypeFor[func() error]()] = func(fn any) typedCaller {
		f := fn.(func() error)
		return func(context.Context, []engine.Arg) (engine.Arg, error) { return engine.Arg{}, f() }
	}
	m[reflect.TypeFor[func(context.Context)]()] = func(fn any) typedCaller {
		f := fn.(func(context.Context))
		return func(ctx context.Context, _ []engine.Arg) (engine.Arg, error) { f(ctx); return engine.Arg{}, nil }
	}
	m[reflect.TypeFor[func(context.Context) error]()] = func(fn any) typedCaller {
		f := fn.(func(context.Context) error)
		return func(ctx context.Context, _ []engine.Arg) (engine.Arg, error) { return engine.Arg{}, f(ctx) }
	}
}

// result0 registers func() R, func() (R, error), func(ctx) R and
// func(ctx) (R, error).
func result0[R prim](m makers) {
	m[reflect.TypeFor[func() R]()] = func(fn any) typedCaller {
		f, put := fn.(func() R), putter[R]()
		return func(context.Context, []engine.Arg) (engine.Arg, error) { return put(f()), nil }
	}
	m[reflect.TypeFor[func() (R, error)]()] = func(fn any) typedCaller {
		f, put := fn.(func() (R, error)), putter[R]()
		return func(context.Context, []engine.Arg) (engine.Arg, error) { r, err := f(); return put(r), err }
	}
	m[reflect.TypeFor[func(context.Context) R]()] = func(fn any) typedCaller {
		f, put := fn.(func(context.Context) R), putter[R]()
		return func(ctx context.Context, _ []engine.Arg) (engine.Arg, error) { return put(f(ctx)), nil }
	}
	m[reflect.TypeFor[func(context.Context) (R, error)]()] = func(fn any) typedCaller {
		f, put := fn.(func(context.Context) (R, error)), putter[R]()
		return func(ctx context.Context, _ []engine.Arg) (engine.Arg, error) { r, err := f(ctx); return put(r), err }
	}
}

func noResult1[A prim](m makers) {
	m[reflect.TypeFor[func(A)]()] = func(fn any) typedCaller {
		f, get := fn.(func(A)), getter1[A]()
		return func(_ context.Context, args []engine.Arg) (engine.Arg, error) {
			a, err := get(args)
			if err == nil {
				f(a)
			}
			return engine.Arg{}, err
		}
	}
	m[reflect.TypeFor[func(A) error]()] = func(fn any) typedCaller {
		f, get := fn.(func(A) error), getter1[A]()
		return func(_ context.Context, args []engine.Arg) (engine.Arg, error) {
			a, err := get(args)
			if err == nil {
				err = f(a)
			}
			return engine.Arg{}, err
		}
	}
	m[reflect.TypeFor[func(context.Context, A)]()] = func(fn any) typedCaller {
		f, get := fn.(func(context.Context, A)), getter1[A]()
		return func(ctx context.Context, args []engine.Arg) (engine.Arg, error) {
			a, err := get(args)
			if err == nil {
				f(ctx, a)
			}
			return engine.Arg{}, err
		}
	}
	m[reflect.TypeFor[func(context.Context, A) error]()] = func(fn any) typedCaller {
		f, get := fn.(func(context.Context, A) error), getter1[A]()
		return func(ctx context.Context, args []engine.Arg) (engine.Arg, error) {
			a, err := get(args)
			if err == nil {
				err = f(ctx, a)
			}
			return engine.Arg{}, err
		}
	}
}

func result1[A, R prim](m makers) {
	m[reflect.TypeFor[func(A) R]()] = func(fn any) typedCaller {
		f, get, put := fn.(func(A) R), getter1[A](), putter[R]()
		return func(_ context.Context, args []engine.Arg) (engine.Arg, error) {
			a, err := get(args)
			if err != nil {
				return engine.Arg{}, err
			}
			return put(f(a)), nil
		}
	}
	m[reflect.TypeFor[func(A) (R, error)]()] = func(fn any) typedCaller {
		f, get, put := fn.(func(A) (R, error)), getter1[A](), putter[R]()
		return func(_ context.Context, args []engine.Arg) (engine.Arg, error) {
			a, err := get(args)
			if err != nil {
				return engine.Arg{}, err
			}
			r, err := f(a)
			return put(r), err
		}
	}
	m[reflect.TypeFor[func(context.Context, A) R]()] = func(fn any) typedCaller {
		f, get, put := fn.(func(context.Context, A) R), getter1[A](), putter[R]()
		return func(ctx context.Context, args []engine.Arg) (engine.Arg, error) {
			a, err := get(args)
			if err != nil {
				return engine.Arg{}, err
			}
			return put(f(ctx, a)), nil
		}
	}
	m[reflect.TypeFor[func(context.Context, A) (R, error)]()] = func(fn any) typedCaller {
		f, get, put := fn.(func(context.Context, A) (R, error)), getter1[A](), putter[R]()
		return func(ctx context.Context, args []engine.Arg) (engine.Arg, error) {
			a, err := get(args)
			if err != nil {
				return engine.Arg{}, err
			}
			r, err := f(ctx, a)
			return put(r), err
		}
	}
}

func noResult2[A, B prim](m makers) {
	m[reflect.TypeFor[func(A, B)]()] = func(fn any) typedCaller {
		f, get := fn.(func(A, B)), getter2[A, B]()
		return func(_ context.Context, args []engine.Arg) (engine.Arg, error) {
			a, b, err := get(args)
			if err == nil {
				f(a, b)
			}
			return engine.Arg{}, err
		}
	}
	m[reflect.TypeFor[func(A, B) error]()] = func(fn any) typedCaller {
		f, get := fn.(func(A, B) error), getter2[A, B]()
		return func(_ context.Context, args []engine.Arg) (engine.Arg, error) {
			a, b, err := get(args)
			if err == nil {
				err = f(a, b)
			}
			return engine.Arg{}, err
		}
	}
	m[reflect.TypeFor[func(context.Context, A, B) error]()] = func(fn any) typedCaller {
		f, get := fn.(func(context.Context, A, B) error), getter2[A, B]()
		return func(ctx context.Context, args []engine.Arg) (engine.Arg, error) {
			a, b, err := get(args)
			if err == nil {
				err = f(ctx, a, b)
			}
			return engine.Arg{}, err
		}
	}
}

func result2[A, B, R prim](m makers) {
	m[reflect.TypeFor[func(A, B) R]()] = func(fn any) typedCaller {
		f, get, put := fn.(func(A, B) R), getter2[A, B](), putter[R]()
		return func(_ context.Context, args []engine.Arg) (engine.Arg, error) {
			a, b, err := get(args)
			if err != nil {
				return engine.Arg{}, err
			}
			return put(f(a, b)), nil
		}
	}
	m[reflect.TypeFor[func(A, B) (R, error)]()] = func(fn any) typedCaller {
		f, get, put := fn.(func(A, B) (R, error)), getter2[A, B](), putter[R]()
		return func(_ context.Context, args []engine.Arg) (engine.Arg, error) {
			a, b, err := get(args)
			if err != nil {
				return engine.Arg{}, err
			}
			r, err := f(a, b)
			return put(r), err
		}
	}
	m[reflect.TypeFor[func(context.Context, A, B) (R, error)]()] = func(fn any) typedCaller {
		f, get, put := fn.(func(context.Context, A, B) (R, error)), getter2[A, B](), putter[R]()
		return func(ctx context.Context, args []engine.Arg) (engine.Arg, error) {
			a, b, err := get(args)
			if err != nil {
				return engine.Arg{}, err
			}
			r, err := f(ctx, a, b)
			return put(r), err
		}
	}
}

// getter1 returns the reader of the argument of a function of one
// parameter.
func getter1[A prim]() func(args []engine.Arg) (A, error) {
	g := getter[A]()
	return func(args []engine.Arg) (A, error) { return g(args, 0) }
}

// getter2 returns the reader of the arguments of a function of two
// parameters.
func getter2[A, B prim]() func(args []engine.Arg) (A, B, error) {
	ga, gb := getter[A](), getter[B]()
	return func(args []engine.Arg) (A, B, error) {
		a, err := ga(args, 0)
		if err != nil {
			var b B
			return a, b, err
		}
		b, err := gb(args, 1)
		return a, b, err
	}
}

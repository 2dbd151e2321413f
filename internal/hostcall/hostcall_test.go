package hostcall

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/wasmvm"
	"github.com/airlockrun/airlock/js"
)

func num(f float64) engine.Arg { return engine.Arg{Kind: wasmvm.Number, Number: f} }
func str(s string) engine.Arg  { return engine.Arg{Kind: wasmvm.String, Text: s} }
func boolean_(b bool) engine.Arg {
	return engine.Arg{Kind: wasmvm.Bool, Bool: b}
}

func mustNew(t testing.TB, fn any) *Func {
	t.Helper()
	f, err := New(reflect.ValueOf(fn))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The functions of numbers, strings and booleans are called without
// allocating: their arguments are read as the engine typed them, their
// answers given typed, nothing boxed (the four shapes, and the
// others of the table).
func TestTypedCallsDoNotAllocate(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		fn   any
		args []engine.Arg
		want engine.Arg
	}{
		{"func(int) int", func(x int) int { return x + 1 }, []engine.Arg{num(41)}, num(42)},
		{"func(string) string", func(s string) string { return s }, []engine.Arg{str("héllo")}, str("héllo")},
		{"func(float64, int) bool", func(f float64, n int) bool { return f > float64(n) }, []engine.Arg{num(2.5), num(2)}, boolean_(true)},
		{"func(ctx, int) (int, error)", func(_ context.Context, x int) (int, error) { return 2 * x, nil }, []engine.Arg{num(21)}, num(42)},
		{"func(int, string) string", func(n int, s string) string { return s }, []engine.Arg{num(1), str("s")}, str("s")},
		{"func(uint) uint", func(n uint) uint { return n * 2 }, []engine.Arg{num(4)}, num(8)},
		{"func(bool)", func(bool) {}, []engine.Arg{boolean_(false)}, engine.Arg{}},
		{"func() float64", func() float64 { return 0.5 }, nil, num(0.5)},
		{"func(string, string) (string, error)", func(a, b string) (string, error) { return a, nil }, []engine.Arg{str("a"), str("b")}, str("a")},
	} {
		f := mustNew(t, c.fn)
		if !f.Typed() {
			t.Errorf("%s is not called typed", c.name)
			continue
		}
		var got engine.Arg
		allocs := testing.AllocsPerRun(1000, func() {
			got, _, _ = f.CallTyped(ctx, c.args)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations a call", c.name, allocs)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// Typed calls convert their arguments as every bridged function does
// (codec.Convert of the value), errors included, word for word.
func TestTypedConversionsAgree(t *testing.T) {
	args := []engine.Arg{
		{}, {Kind: wasmvm.Null}, boolean_(true), num(0), num(math.Copysign(0, -1)), num(1.5), num(-1), num(255),
		num(1 << 53), num(1e20), num(math.NaN()), num(math.Inf(1)), num(-(1 << 63)), num(1 << 63), str(""), str("1"),
		str("a\xed\xa0\x80"),
	}
	for _, fn := range []any{
		func(int) {}, func(int64) {}, func(uint) {}, func(float64) {}, func(string) {}, func(bool) {},
	} {
		f := mustNew(t, fn)
		pt := reflect.TypeOf(fn).In(0)
		for _, a := range args {
			_, err, _ := f.CallTyped(context.Background(), []engine.Arg{a})
			_, cerr := codec.Convert(fromArg(a), pt)
			if cerr != nil {
				cerr = argError(0, cerr)
			}
			if (err == nil) != (cerr == nil) || err != nil && err.Error() != cerr.Error() {
				t.Errorf("%v of %+v: typed %v, Convert %v", pt, a, err, cerr)
			}
		}
	}
	// Values too, through a function that gives its argument back.
	for _, c := range []struct {
		fn   any
		arg  engine.Arg
		want engine.Arg
	}{
		{func(x int) int { return x }, num(-7), num(-7)},
		{func(x int) int { return x }, engine.Arg{}, num(0)},
		{func(x int64) int64 { return x }, num(1 << 53), num(1 << 53)},
		{func(x uint) uint { return x }, num(math.Copysign(0, -1)), num(0)},
		{func(x float64) float64 { return x }, engine.Arg{Kind: wasmvm.Null}, num(0)},
		{func(s string) string { return s }, engine.Arg{}, str("")},
		{func(b bool) bool { return b }, engine.Arg{Kind: wasmvm.Null}, boolean_(false)},
	} {
		got, err, _ := mustNew(t, c.fn).CallTyped(context.Background(), []engine.Arg{c.arg})
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%T of %+v: %+v, %v, want %+v", c.fn, c.arg, got, err, c.want)
		}
	}
}

// A typed function's error, and its panic, come back as a call's: the
// panic's text never.
func TestTypedErrorsAndPanics(t *testing.T) {
	ctx := context.Background()
	_, err, panicked := mustNew(t, func(int) (int, error) { return 0, errors.New("no") }).CallTyped(ctx, []engine.Arg{num(1)})
	if err == nil || err.Error() != "no" || panicked {
		t.Errorf("error: %v %v", err, panicked)
	}
	_, err, panicked = mustNew(t, func(int) int { panic("secret") }).CallTyped(ctx, []engine.Arg{num(1)})
	if !panicked || strings.Contains(err.Error(), "secret") {
		t.Errorf("panic: %v %v", err, panicked)
	}
	var got context.Context
	mustNew(t, func(c context.Context, s string) error { got = c; return nil }).CallTyped(ctx, []engine.Arg{str("x")})
	if got != ctx {
		t.Error("the context did not reach the function")
	}
}

// Only the typed shapes are called typed; the others (other widths, more
// parameters, other types) go through reflection, converted alike.
func TestTypedShapes(t *testing.T) {
	for _, fn := range []any{
		func() {}, func() error { return nil }, func(context.Context) error { return nil }, func() (string, error) { return "", nil },
		func(int) {}, func(int64) error { return nil }, func(context.Context, uint) {}, func(bool) (float64, error) { return 0, nil },
		func(context.Context, string) (bool, error) { return false, nil }, func(int, int) int { return 0 },
		func(float64, string) (bool, error) { return false, nil }, func(context.Context, bool, int) (string, error) { return "", nil },
		func(string, string) {}, func(int, float64) error { return nil },
	} {
		if !mustNew(t, fn).Typed() {
			t.Errorf("%T is not called typed", fn)
		}
	}
	for _, fn := range []any{
		func(int8) int8 { return 0 }, func(float32) {}, func(int, int, int) int { return 0 }, func([]int) {}, func(any) any { return nil },
		func(int64, int64) int64 { return 0 }, func(...int) {}, func(context.Context, int, int) int { return 0 },
	} {
		if mustNew(t, fn).Typed() {
			t.Errorf("%T is called typed", fn)
		}
	}
}

// A function type's converters are built once, however many functions of
// the type are bridged.
func TestSignatureCached(t *testing.T) {
	type point struct{ X, Y int }
	a := mustNew(t, func(p point, n int8) int8 { return n })
	b := mustNew(t, func(p point, n int8) int8 { return -n })
	if a.sig != b.sig {
		t.Error("two functions of one type built two signatures")
	}
}

// call runs f with primitive args or the binary text of a list, as the
// engine gives them.
func call(t *testing.T, f *Func, prims []engine.Arg, list []any) (any, error) {
	t.Helper()
	var encoded []byte
	if list != nil {
		var err error
		if encoded, err = codec.AppendBinary(nil, list, nil); err != nil {
			t.Fatal(err)
		}
	}
	args, err := callArgs(f, prims, encoded, func(int) bool { return true }, nil, 1<<20)
	if err != nil {
		return nil, err
	}
	v, err, _ := f.Call(context.Background(), args)
	return v, err
}

type shape struct {
	N    int      `json:"n"`
	Tag  string   `json:"tag"`
	Tags []string `json:"tags,omitempty"`
	In   *shape   `json:"in"`
}

// Every other signature converts its arguments by its type's converters:
// structs by their json tags, slices, maps, pointers, any, a leading
// context, a trailing error, variadics; a wrong argument is an error that
// names it.
func TestReflectedCalls(t *testing.T) {
	for _, c := range []struct {
		name  string
		fn    any
		prims []engine.Arg
		list  []any
		want  any
		err   string
	}{
		{"struct", func(s shape) string { return s.Tag + strings.Join(s.Tags, "") }, nil,
			[]any{map[string]any{"n": 1.0, "tag": "t", "tags": []any{"a", "b"}}}, "tab", ""},
		{"pointer, nested", func(s *shape) int { return s.N + s.In.N }, nil,
			[]any{map[string]any{"n": 1.0, "in": map[string]any{"n": 2.0}}}, 3.0, ""},
		{"int8 from a primitive", func(n int8) int8 { return -n }, []engine.Arg{num(5)}, nil, -5.0, ""},
		{"int8 overflow", func(n int8) int8 { return n }, []engine.Arg{num(300)}, nil, nil, "argument 1: 300 overflows int8"},
		{"not an integer", func(_ string, n int32) int32 { return n }, []engine.Arg{str(""), num(1.5)}, nil, nil, "argument 2: expected an integer (int32), got 1.5"},
		{"variadic", func(sep string, xs ...int) int { return len(sep) + len(xs) }, []engine.Arg{str("--"), num(1), num(2)}, nil, 4.0, ""},
		{"variadic, encoded", func(xs ...float32) float32 { return xs[1] }, nil, []any{1.0, 2.5}, 2.5, ""},
		{"variadic, wrong", func(xs ...uint) int { return len(xs) }, []engine.Arg{num(1), num(-1)}, nil, nil,
			"argument 2: expected a non-negative integer (uint), got -1"},
		{"context and error", func(ctx context.Context, m map[string]int) (int, error) { return m["a"], ctx.Err() }, nil,
			[]any{map[string]any{"a": 4.0}}, 4.0, ""},
		{"error", func([]int) error { return errors.New("bad") }, nil, []any{[]any{1.0}}, nil, "bad"},
		{"object to float", func(float32) {}, nil, []any{map[string]any{}}, nil, "argument 1: cannot convert an object to float32"},
		{"array to struct", func(shape) {}, nil, []any{[]any{}}, nil, "argument 1: cannot convert an array to hostcall.shape"},
		{"any", func(v any) any { return v }, nil, []any{&js.Map{}}, &js.Map{Entries: []js.MapEntry{}}, ""},
		{"typed, encoded", func(x float64) float64 { return x }, nil, []any{2.0, "extra"}, 2.0, ""},
		{"bytes from a Uint8Array", func(b []byte) int { return int(b[1]) }, nil, []any{[]byte{1, 2}}, 2.0, ""},
		{"bytes from an Array", func(b []byte) int { return int(b[1]) }, nil, []any{[]any{1.0, 3.0}}, 3.0, ""},
		{"array", func(a [2]int) int { return a[0] + a[1] }, nil, []any{[]any{1.0, 3.0}}, 4.0, ""},
		{"map of slices", func(m map[string][]string) int { return len(m["k"]) }, nil, []any{map[string]any{"k": []any{"a", "b"}}}, 2.0, ""},
		{"slice from a typed array", func(x []float64) float64 { return x[0] }, nil, []any{js.Float64Array{1.5}}, 1.5, ""},
		{"uint64, int16", func(a uint64, b int16) float64 { return float64(a) + float64(b) }, []engine.Arg{num(1 << 40), num(-2)}, nil, float64(1<<40 - 2), ""},
		{"typed, wrong, encoded", func(x float64) float64 { return x }, nil, []any{[]any{1.0}}, nil, "argument 1: cannot convert an array to float64"},
	} {
		got, err := call(t, mustNew(t, c.fn), c.prims, c.list)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) && !(reflect.DeepEqual(toF(got), c.want)) {
			t.Errorf("%s: %#v, %v, want %#v", c.name, got, err, c.want)
		}
	}
}

// toF is a number answer as a float64, as the sandbox gets it.
func toF(v any) any {
	if raw, ok := toRaw(v); ok {
		if n, ok := raw.(int); ok {
			return float64(n)
		}
		return raw
	}
	return v
}

// An asynchronous call's conversion error is its promise's: Call gives it,
// not callArgs.
func TestConversionErrorIsTheCalls(t *testing.T) {
	f, _ := New(reflect.ValueOf(AsyncFunc{Fn: reflect.ValueOf(func(int8) {})}))
	args, err := callArgs(f, []engine.Arg{num(1000)}, nil, func(int) bool { return true }, nil, 1<<20)
	if err != nil {
		t.Fatalf("callArgs: %v", err)
	}
	if _, err, _ := f.Call(context.Background(), args); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Fatalf("Call: %v", err)
	}
}

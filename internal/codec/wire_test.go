package codec

import (
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/airlockrun/airlock/js"
)

// wireSeeds are Go values of every kind the encoder takes.
func wireSeeds() []any {
	cyclic := map[string]any{"a": 1.0}
	cyclic["self"] = cyclic
	list := []any{1.0, "x"}
	type point struct {
		X, Y int
		Tag  string `json:"tag,omitempty"`
		skip int
	}
	return []any{
		nil, true, 1.5, math.Copysign(0, -1), math.NaN(), math.Inf(1), 7, int64(1 << 40), "s", "a\xed\xa0\x80b", "\xff",
		[]any{}, map[string]any{}, cyclic, []any{list, list},
		map[string]any{"rows": []map[string]any{{"id": 1, "name": "n"}}},
		&js.Map{Entries: []js.MapEntry{{Key: 1.0, Value: "v"}}}, &js.Set{Values: []any{js.Undefined{}}},
		time.UnixMilli(5).UTC(), time.Time{}, big.NewInt(-9), js.Float64Array{1, math.NaN()}, []byte{1, 2},
		js.ArrayBuffer{3}, js.DataView{4}, &js.Boxed{Value: 1.0}, &js.RegExp{Source: "a", Flags: "g"},
		&js.Array{Elements: []any{1.0}, Props: map[string]any{"n": true}}, &js.ErrorValue{Name: "TypeError", Message: "m"},
		point{1, 2, "t", 0}, &point{X: 3}, []point{{}}, map[int]string{2: "b", 1: "a"}, [2]float64{1, 2},
	}
}

// Every value the encoder takes decodes back as it was.
func TestEncodeDecode(t *testing.T) {
	for _, v := range wireSeeds() {
		if _, err := DecodeBinary(mustBinaryOf(t, v), 1<<20); err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
	}
	for _, c := range []struct {
		v    any
		want any
	}{
		{nil, nil}, {[]any{}, []any{}}, {map[string]any{"b": 1, "a": []any{"x", true, 1.5}}, map[string]any{"b": 1.0, "a": []any{"x", true, 1.5}}},
		{"é\n", "é\n"}, {1e21, 1e21}, {[]string{"<&>"}, []any{"<&>"}}, {int64(-1 << 40), -float64(1 << 40)},
		{math.Copysign(0, -1), math.Copysign(0, -1)}, {[]js.Undefined{{}}, []any{js.Undefined{}}},
	} {
		got, err := DecodeBinary(mustBinaryOf(t, c.v), 1<<20)
		if err != nil || !reflect.DeepEqual(got, c.want) || math.Signbit(toFloat(got)) != math.Signbit(toFloat(c.want)) {
			t.Errorf("%#v: %#v, %v, want %#v", c.v, got, err, c.want)
		}
	}
}

func toFloat(v any) float64 {
	f, _ := v.(float64)
	return f
}

func mustBinaryOf(t *testing.T, v any) string {
	b, err := AppendBinary(nil, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameValue is reflect.DeepEqual with NaN equal to NaN.
func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		if fb, ok := b.(float64); ok && math.IsNaN(fa) && math.IsNaN(fb) {
			return true
		}
	}
	if x, ok := a.(js.Float64Array); ok {
		y, ok := b.(js.Float64Array)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// A string with lone surrogates crosses as WTF-8: each lone one as its
// three bytes, a high and a low one that meet as the character they make,
// any other invalid byte as U+FFFD.
func TestEncodeWTF8(t *testing.T) {
	for in, want := range map[string]string{
		"a\xed\xa0\x80b":             "a\xed\xa0\x80b",
		"\xed\xa0\xbd\xed\xb8\x80":   "\U0001F600",
		"\xed\xb8\x80\xed\xa0\xbd":   "\xed\xb8\x80\xed\xa0\xbd",
		"\xff\xed\xa0\x80":           "\uFFFD\xed\xa0\x80",
		"\xff\xfe":                   "\uFFFD\uFFFD",
		"\xed\xa0":                   "\uFFFD\uFFFD",
		"\xed\xa0\x80\U0001F600\xed": "\xed\xa0\x80\U0001F600\uFFFD",
	} {
		v, err := DecodeBinary(mustBinaryOf(t, in), 1<<20)
		if err != nil || v != want {
			t.Errorf("%q: %q, %v, want %q", in, v, err, want)
		}
	}
}

// A value nested deeper than MaxDepth, or a Go value that cannot cross, is
// an error, not a crash.
func TestEncodeRefused(t *testing.T) {
	deep := any(1.0)
	for i := 0; i < MaxDepth+1; i++ {
		deep = []any{deep}
	}
	if _, err := AppendBinary(nil, deep, nil); err == nil {
		t.Error("a value nested past MaxDepth encoded")
	}
	for _, v := range []any{make(chan int), complex(1, 2), struct{ x int }{}, func() {}, &js.Boxed{Value: []int{}}} {
		_, err := AppendBinary(nil, v, nil)
		if _, ok := err.(*js.CloneError); !ok {
			t.Errorf("%T: %v, want a *js.CloneError", v, err)
		}
	}
}

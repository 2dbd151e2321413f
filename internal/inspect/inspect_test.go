package inspect_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/inspect"
	"github.com/airlockrun/airlock/js"
)

type point struct {
	X      int    `json:"x"`
	Y      int    `json:"y,omitempty"`
	Hidden string `json:"-"`
	Label  string
	secret int
}

type node struct {
	Name   string
	Parent *node
	Kids   []*node
}

// namedError is an error that the test's Named hook names, as the root
// names its *ScriptError.
type namedError struct{ name, msg string }

func (e namedError) Error() string { return e.name + ": " + e.msg }

func nameOf(err error) (string, string, bool) {
	var e namedError
	switch x := err.(type) {
	case namedError:
		e = x
	case *namedError:
		e = *x
	default:
		return "", "", false
	}
	return e.name, e.msg, true
}

// TestInspectGo covers what Go hands Inspect that does not come from the
// sandbox, and the Go-only forms of sandbox values.
func TestInspectGo(t *testing.T) {
	root := &node{Name: "root"}
	root.Kids = []*node{{Name: "kid", Parent: root}}
	selfSlice := make([]any, 1)
	selfSlice[0] = selfSlice
	m := map[string]any{}
	m["m"] = &js.Map{Entries: []js.MapEntry{{Key: "back", Value: m}}}
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"nil", nil, "null"},
		{"int", 42, "42"},
		{"int64 beyond 2^53", int64(1) << 60, "1152921504606846976"},
		{"uint8", uint8(7), "7"},
		{"float32", float32(0.5), "0.5"},
		{"json.Number", json.Number("1.50"), "1.50"},
		{"json.RawMessage", json.RawMessage(`{"a":[1,2]}`), `{"a":[1,2]}`},
		{"zero time is an invalid Date", time.Time{}, "Invalid Date"},
		{"time in a zone", time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), "2024-01-02T02:04:05.000Z"},
		{"struct", point{X: 1, Label: "p", secret: 2}, "{ x: 1, y: 0, Label: 'p' }"},
		{"pointer to struct", &point{X: 3}, "{ x: 3, y: 0, Label: '' }"},
		{"nil pointer", (*point)(nil), "null"},
		{"tree with parent links", root, "<ref *1> { Name: 'root', Parent: null, Kids: [ { Name: 'kid', Parent: [Circular *1], Kids: null } ] }"},
		{"slice that holds itself", selfSlice, "<ref *1> [ [Circular *1] ]"},
		{"cycle through *Map", m, "<ref *1> { m: Map(1) { 'back' => [Circular *1] } }"},
		{"[]string", []string{"a", "b"}, "[ 'a', 'b' ]"},
		{"[]int", []int{1, 2}, "[ 1, 2 ]"},
		{"map[string]int", map[string]int{"b": 2, "a": 1}, "{ a: 1, b: 2 }"},
		{"map[int]string", map[int]string{2: "b", 1: "a"}, "Map(2) { 1 => 'a', 2 => 'b' }"},
		{"Go error", errors.New("disk full"), "[Error: disk full]"},
		{"error that Named names", namedError{"TypeError", "x is not a function"}, "[TypeError: x is not a function]"},
		{"pointer to an error that Named names", &namedError{"RangeError", "too far"}, "[RangeError: too far]"},
		{"ErrorValue without a message", &js.ErrorValue{Name: "Error"}, "[Error]"},
		{"Float16Array", js.Float16Array{0x3c00, 0xc000, 0x7c00, 0x0001}, "Float16Array(4) [ 1, -2, Infinity, 5.960464477539063e-8 ]"},
		{"Uint8ClampedArray", js.Uint8ClampedArray{1}, "Uint8ClampedArray(1) [ 1 ]"},
		{"nil *big.Int", (*big.Int)(nil), "null"},
		{"channel", make(chan int), "[chan int]"},
		{"func", func() {}, "[Function: func()]"},
		{"NaN float64", math.NaN(), "NaN"},
		{"Undefined in a map", map[string]any{"u": js.Undefined{}}, "{ u: undefined }"},
		{"invalid UTF-8 inside", []any{"a\xffb"}, `[ 'a\uFFFDb' ]`},
	} {
		if got := inspect.Format(c.v, inspect.Options{Named: nameOf}); got != c.want {
			t.Errorf("%s: Format = %s, want %s", c.name, got, c.want)
		}
	}
}

// TestInspectBounds: the text never passes MaxBytes (plus its marker),
// even for a value whose full text would be exponential: a chain of arrays
// that each hold the next one twice.
func TestInspectBounds(t *testing.T) {
	var v any = "leaf"
	for i := 0; i < 60; i++ {
		v = []any{v, v}
	}
	got := inspect.Format(v, inspect.Options{Depth: inspect.MaxDepth, MaxBytes: 10000})
	const marker = "... [truncated: more than 10000 bytes]"
	if !strings.HasSuffix(got, marker) || len(got) > 10000+len(marker) {
		t.Fatalf("len %d, ends %q", len(got), got[max(0, len(got)-60):])
	}
	got = inspect.Format(v, inspect.Options{})
	if len(got) > inspect.DefaultBytes+100 {
		t.Fatalf("default bound: len %d", len(got))
	}
	// A deep chain is cut at the depth, far before the stack could matter.
	var deep any = 1.0
	for i := 0; i < 200000; i++ {
		deep = []any{deep}
	}
	got = inspect.Format(deep, inspect.Options{Depth: 1 << 30})
	if !strings.Contains(got, "[Array]") || strings.Count(got, "[ ") != inspect.MaxDepth+1 {
		t.Fatalf("deep chain: %d levels shown", strings.Count(got, "[ "))
	}
	// A long string at the top is cut at MaxBytes, at a character boundary.
	got = inspect.Format("ééééé", inspect.Options{MaxBytes: 5})
	if got != "éé... [truncated: more than 5 bytes]" {
		t.Fatalf("top string: %q", got)
	}
}

// inspectBenchValue is a result of the usual shape: 100 records (all that
// Inspect shows by default) with a few fields, a nested object and a short
// array each.
func inspectBenchValue() any {
	rows := make([]any, 100)
	for i := range rows {
		rows[i] = map[string]any{"id": float64(i), "name": "customer-" + string(rune('a'+i%26)), "active": i%3 == 0,
			"address": map[string]any{"city": "Oslo", "zip": "0150"}, "tags": []any{"x", "y", float64(i)}}
	}
	return map[string]any{"rows": rows, "count": 100.0}
}

// BenchmarkInspect measures Inspect against json.Marshal of the same value
// (the form Airlock used before), as a ratio in one run.
func BenchmarkInspect(b *testing.B) {
	v := inspectBenchValue()
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Inspect", func(b *testing.B) {
		for b.Loop() {
			_ = inspect.Format(v, inspect.Options{})
		}
	})
}

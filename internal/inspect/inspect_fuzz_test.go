package inspect

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/js"
)

// FuzzInspect decodes arbitrary binary text, as values from the sandbox
// arrive, and formats what decodes: Inspect must never panic, must return
// valid UTF-8 when the strings in the value are, and must stay within its
// bound on bytes, whatever the shape (cycles and shared containers
// included); js.JSONValue of it must always encode.
func FuzzInspect(f *testing.F) {
	self := map[string]any{"a": 1.0}
	self["self"] = self
	list := []any{"leaf", "leaf"}
	ring := []any{nil, []any{}}
	ring[0] = ring
	deep := any(1.0)
	for i := 0; i < 3000; i++ {
		deep = []any{deep}
	}
	m := &js.Map{}
	m.Entries = []js.MapEntry{{Key: m, Value: &js.Set{Values: []any{m}}}}
	for _, v := range []any{
		1.0, "s", js.Undefined{}, math.NaN(), math.Copysign(0, -1), big.NewInt(-123), self, ring,
		&js.Array{Elements: []any{1.0, js.Undefined{}, js.Undefined{}, js.Undefined{}, 2.0}}, m,
		time.UnixMilli(0).UTC(), time.Time{}, time.UnixMilli(8640000000000000).UTC(), js.Float64Array{math.NaN()},
		js.BigInt64Array{-1}, js.ArrayBuffer{1, 2}, &js.ErrorValue{Name: "TypeError", Message: "it's \"quoted\"\n"},
		map[string]any{"it's": map[string]any{"a b": []any{"x\u0085y"}}}, deep, []any{list, list, []any{list}},
	} {
		b, err := codec.AppendBinary(nil, v, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), 3, 5, 20, 400)
	}
	f.Fuzz(func(t *testing.T, s string, depth, items, chars, limit int) {
		v, err := codec.DecodeBinary(s, 1<<20)
		if err != nil {
			return
		}
		limit = limit%100000 + 1
		if limit < 0 {
			limit = -limit
		}
		o := Options{Depth: depth % 2000, MaxArrayLength: items % 1000, MaxStringLength: chars % 1000, MaxBytes: limit}
		got := Format(v, o)
		const marker = len("... [truncated: more than  bytes]") + 20
		if len(got) > limit+marker {
			t.Fatalf("%d bytes for a bound of %d", len(got), limit)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		_ = Format(v, Options{})
		if _, err := json.Marshal(js.JSONValue(v)); err != nil {
			t.Fatalf("JSON of %s: %v", s, err)
		}
	})
}

package codec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/js"
)

// bin builds binary text for the tests: the header's counts and the body.
func bin(values, objects uint32, body ...any) string {
	b := []byte{Magic}
	b = binary.LittleEndian.AppendUint32(b, values)
	b = binary.LittleEndian.AppendUint32(b, objects)
	for _, x := range body {
		switch x := x.(type) {
		case byte:
			b = append(b, x)
		case int: // a tag or a kind byte
			b = append(b, byte(x))
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, x)
		case float64:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		case string: // a str: length and bytes
			b = binary.LittleEndian.AppendUint32(b, uint32(len(x)))
			b = append(b, x...)
		}
	}
	return string(b)
}

var binarySeeds = []string{
	bin(1, 0, tI32, uint32(7)),
	bin(1, 0, tString, "x\xed\xa0\x80"),
	bin(1, 0, tBigInt, "-123456789012345678901234567890"),
	bin(3, 1, tArray, uint32(2), tF64, math.NaN(), tUndefined),
	bin(4, 2, tObject, uint32(2), "a", tNull, "self", tRef, uint32(0)),
	bin(3, 1, tSparse, uint32(5), byte(1), uint32(2), byte(0), uint32(4), tTrue, byte(1), "name", tFalse),
	bin(5, 3, tMap, uint32(2), tObject, uint32(0), tString, "v", tRef, uint32(1), tRef, uint32(0)),
	bin(2, 1, tSet, uint32(1), tDate, math.NaN()),
	bin(1, 1, tDate, 8.64e15),
	bin(1, 1, tTyped, byte(11), "\x00\x00\x00\x00\x00\x00\xf8\x3f"),
	bin(1, 1, tTyped, byte(7), "\xff\xff\xff\xff\xff\xff\xff\xff"),
	bin(1, 1, tBuffer, "\x01\x02"),
	bin(1, 1, tView, "\x03"),
	bin(1, 1, tError, "TypeError", "m"),
	bin(1, 1, tRegExp, "a+", "gi"),
	bin(2, 1, tBoxed, tBigInt, "5"),
	bin(2, 1, tBoxed, tObject, uint32(0)),
	bin(1, 1, tArray, uint32(0xffffffff)),
	bin(1, 1, tSparse, uint32(0xfffffffe), byte(0), uint32(0)),
	bin(1, 0, tRef, uint32(0)),
	bin(0, 0, tNull),
	bin(1, 0, 99),
	bin(1, 1, tTyped, byte(3), "\x01"),
	strings.Repeat("\xb1", 20),
	"",
}

// FuzzDecodeBinary feeds arbitrary bytes to the decoder of what the
// sandbox's C encoder writes: it returns a value or an error, never
// panics, allocates nothing a container's claimed size could inflate
// beyond the text (each item needs a byte), and what it returns encodes
// again.
func FuzzDecodeBinary(f *testing.F) {
	for _, s := range binarySeeds {
		f.Add(s)
	}
	for _, v := range wireSeeds() {
		b, err := AppendBinary(nil, v, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeBinary(s, 1<<20)
		if err != nil {
			return
		}
		if _, err := json.Marshal(js.JSONValue(v)); err != nil {
			t.Fatalf("decoded %q, but it does not marshal: %v", s, err)
		}
		if _, err := AppendBinary(nil, v, nil); err != nil {
			t.Fatalf("decoded %q, but it does not encode again: %v", s, err)
		}
	})
}

// The decoder holds the text to its header's counts (what the budget
// charged), refuses a container larger than the bytes left, and keeps
// identity.
func TestDecodeBinary(t *testing.T) {
	v, err := DecodeBinary(bin(4, 2, tObject, uint32(2), "a", tNull, "self", tRef, uint32(0)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if reflect.ValueOf(m["self"]).Pointer() != reflect.ValueOf(m).Pointer() {
		t.Fatal("a cycle lost its identity")
	}
	for _, s := range []string{
		bin(2, 2, tObject, uint32(2), "a", tNull, "self", tRef, uint32(0)), // more values than the header says
		bin(4, 0, tObject, uint32(2), "a", tNull, "self", tRef, uint32(0)), // more objects
		bin(1, 1, tArray, uint32(1<<30)),                                   // larger than the text
		bin(2, 1, tArray, uint32(1), tNull, tNull),                         // bytes after the value
	} {
		if _, err := DecodeBinary(s, 1<<20); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want malformed", s, err)
		}
	}
	if _, err := DecodeBinary(bin(1, 1, tSparse, uint32(1<<30), byte(0), uint32(0)), 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a sparse array of 2^30 under a budget of 1 MiB: %v", err)
	}
	if c := BinaryCost(bin(3, 1, tArray, uint32(2), tNull, tNull)); c != 9+7+16*3+64 {
		t.Errorf("cost %d", c)
	}
}

// What the host writes in the binary format (values that are not plain
// data) reads back as it was: worker processes copy values this way.
func TestEncodeRoundTrip(t *testing.T) {
	shared := []any{1.0}
	in := map[string]any{
		"m":    &js.Map{Entries: []js.MapEntry{{Key: "k", Value: js.Int16Array{-1, 2}}}},
		"s":    &js.Set{Values: []any{true, nil, js.Undefined{}}},
		"d":    time.UnixMilli(-5).UTC(),
		"inv":  time.Time{},
		"nan":  math.NaN(),
		"big":  big.NewInt(-42),
		"re":   &js.RegExp{Source: "a", Flags: "g"},
		"box":  &js.Boxed{Value: "s\xed\xa0\x80"},
		"dv":   js.DataView{1},
		"ab":   js.ArrayBuffer{2},
		"err":  &js.ErrorValue{Name: "TypeError", Message: "m"},
		"arr":  &js.Array{Elements: []any{1.0}, Props: map[string]any{"n": "x"}},
		"lone": "\xed\xb0\x80",
		"a":    shared, "b": shared,
	}
	text, err := AppendBinary(nil, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := DecodeBinaryBytes(text, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out := v.(map[string]any)
	if math.IsNaN(out["nan"].(float64)) {
		out["nan"], in["nan"] = 0.0, 0.0
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("got %#v", out)
	}
	if reflect.ValueOf(out["a"]).Pointer() != reflect.ValueOf(out["b"]).Pointer() {
		t.Fatal("a shared slice became two")
	}
	if c := BinaryCost(text); c < len(text)+16*10 {
		t.Fatalf("cost %d for %d bytes", c, len(text))
	}
}

package codec

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
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

// FuzzDecode feeds arbitrary text to the decoder of values coming from the
// sandbox and of wire text: it must return a value or an error, never
// panic, never allocate past its budget, and what it returns must encode
// again and marshal as JSON.
func FuzzDecode(f *testing.F) {
	for _, v := range wireSeeds() {
		text, err := Encode(v, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
		if bin, ok := Binary(text); ok {
			f.Add(bin)
		}
	}
	for _, s := range binarySeeds {
		f.Add(s)
		f.Add("B" + base64.StdEncoding.EncodeToString([]byte(s)))
	}
	for _, s := range []string{"J1", `J{"a":[1,"x",null]}`, "J", "B", "B!!", "Bsw==", "", "x",
		"J" + strings.Repeat("[", 20000) + strings.Repeat("]", 20000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Decode(s, 1<<20)
		if err != nil {
			return
		}
		if _, err := json.Marshal(js.JSONValue(v)); err != nil {
			t.Fatalf("decoded %q, but it does not marshal: %v", s, err)
		}
		if _, err := Encode(v, nil); err != nil {
			t.Fatalf("decoded %q but cannot encode it again: %v", s, err)
		}
	})
}

// Every value the encoder takes decodes back as it was, through wire text
// of either form, and plain data crosses as plain JSON.
func TestEncodeDecode(t *testing.T) {
	for _, v := range wireSeeds() {
		text, err := Encode(v, nil)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		got, err := Decode(text, 1<<20)
		if err != nil {
			t.Fatalf("%#v: %.40q: %v", v, text, err)
		}
		want := v
		if text[0] == 'J' { // plain data: what encoding/json gives
			b, _ := json.Marshal(v)
			var w any
			json.Unmarshal(b, &w)
			want = w
		} else {
			want, _ = Decode(mustBinaryOf(t, v), 1<<20)
		}
		if !sameValue(got, want) {
			t.Errorf("%#v: got %#v, want %#v (%.40q)", v, got, want, text)
		}
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "Jnull"}, {[]any{}, "J[]"}, {map[string]any{"b": 1, "a": []any{"x", true, 1.5}}, `J{"a":["x",true,1.5],"b":1}`},
		{"é\n", `J"é\n"`}, {1e21, "J1e+21"}, {[]string{"<&>"}, `J["<&>"]`},
	} {
		if got, err := Encode(c.v, nil); err != nil || got != c.want {
			t.Errorf("%#v: %q, %v, want %q", c.v, got, err, c.want)
		}
	}
	for _, v := range []any{math.Copysign(0, -1), math.NaN(), "a\xed\xa0\x80", js.Undefined{}, []any{js.Undefined{}}, time.Time{}} {
		if got, _ := Encode(v, nil); got[0] != 'B' {
			t.Errorf("%#v crossed as %q, which plain JSON cannot hold", v, got)
		}
	}
}

func mustBinaryOf(t *testing.T, v any) string {
	b, _, err := AppendBinary(nil, v, nil)
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
		v, err := Decode(mustBinaryOf(t, in), 1<<20)
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
	if _, err := Encode(deep, nil); err == nil {
		t.Error("a value nested past MaxDepth encoded")
	}
	for _, v := range []any{make(chan int), complex(1, 2), struct{ x int }{}, func() {}, &js.Boxed{Value: []int{}}} {
		_, err := Encode(v, nil)
		if _, ok := err.(*js.CloneError); !ok {
			t.Errorf("%T: %v, want a *js.CloneError", v, err)
		}
	}
}

// FuzzJSONString checks the codec's JSON string writer against encoding/json.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\x00\x1f\u2028", "\xff\xfe", "ß€😀", "</script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want string
		if err := json.Unmarshal(AppendJSONString(nil, s), &want); err != nil {
			t.Fatalf("%q: not JSON: %v", s, err)
		}
		if valid := strings.ToValidUTF8(s, "\uFFFD"); want != valid {
			t.Fatalf("%q: decodes to %q", s, want)
		}
	})
}

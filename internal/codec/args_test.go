package codec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/airlockrun/airlock/js"
)

type argPoint struct {
	X, Y float64
	Name string   `json:"name"`
	Tags []string `json:"tags,omitempty"`
}

type argRecord struct {
	ID      int               `json:"id"`
	Small   int8              `json:"small"`
	Count   uint16            `json:"count"`
	Ratio   float32           `json:"ratio"`
	OK      bool              `json:"ok"`
	Where   *argPoint         `json:"where"`
	Points  []argPoint        `json:"points"`
	Pair    [2]int            `json:"pair"`
	Attrs   map[string]string `json:"attrs"`
	Extra   any               `json:"extra"`
	Nested  map[string][]int  `json:"nested"`
	private int
}

type argNamed string

// argTypes are the parameter types the differential tests convert to.
var argTypes = []reflect.Type{
	reflect.TypeFor[argPoint](), reflect.TypeFor[*argPoint](), reflect.TypeFor[argRecord](),
	reflect.TypeFor[[]argPoint](), reflect.TypeFor[[]int](), reflect.TypeFor[[]float32](),
	reflect.TypeFor[[]byte](), reflect.TypeFor[[2]string](), reflect.TypeFor[map[string]int](),
	reflect.TypeFor[map[argNamed]float64](), reflect.TypeFor[map[string]any](), reflect.TypeFor[[]any](),
	reflect.TypeFor[any](), reflect.TypeFor[int](), reflect.TypeFor[uint8](), reflect.TypeFor[int64](),
	reflect.TypeFor[float32](), reflect.TypeFor[string](), reflect.TypeFor[argNamed](), reflect.TypeFor[bool](),
	reflect.TypeFor[*int](), reflect.TypeFor[[]*argPoint](), reflect.TypeFor[time.Time](),
	reflect.TypeFor[map[string]map[string]bool](), reflect.TypeFor[js.Float64Array](),
	reflect.TypeFor[[]float64](), reflect.TypeFor[error](),
}

// randomValue makes a value of the kinds that cross, biased to the plain
// data the direct decoders read and to the numbers and keys at their
// edges.
func randomValue(r *rand.Rand, depth int) any {
	numbers := []float64{0, math.Copysign(0, -1), 1, -1, 1.5, 255, 256, -129, 65535, 1 << 31, 1<<53 - 1, 1 << 53,
		1 << 60, 1e21, 1e-7, math.NaN(), math.Inf(1), 3.4e38, 3.5e38, 16777217, 0.1}
	keys := []string{"X", "x", "Y", "name", "Name", "tags", "id", "ID", "small", "count", "ratio", "ok", "where",
		"points", "pair", "attrs", "extra", "nested", "private", "other", "a", "é", "K", "\xff"}
	strs := []string{"", "s", "é😀", "a\xed\xa0\x80", "\xff", "AQI=", "2024-01-02T03:04:05Z", "true", "1"}
	n := r.IntN(16)
	if depth > 3 {
		n %= 6
	}
	switch n {
	case 0:
		return nil
	case 1:
		return js.Undefined{}
	case 2:
		return r.IntN(2) == 0
	case 3, 4:
		return numbers[r.IntN(len(numbers))]
	case 5:
		return strs[r.IntN(len(strs))]
	case 6, 7, 8:
		m := map[string]any{}
		for i := r.IntN(5); i > 0; i-- {
			m[keys[r.IntN(len(keys))]] = randomValue(r, depth+1)
		}
		return m
	case 9, 10:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randomValue(r, depth+1)
		}
		return a
	case 11:
		return big.NewInt(int64(r.IntN(100)))
	case 12:
		return time.UnixMilli(int64(r.IntN(1e6))).UTC()
	case 13:
		return js.Float64Array{1.5, 2}
	case 14:
		return &js.Map{Entries: []js.MapEntry{{Key: "k", Value: 1.0}}}
	default:
		shared := []any{1.0}
		return []any{shared, shared}
	}
}

// The direct decoders give what Convert gives through the decoded value
// and encoding/json, or leave the value to it: for random values of every
// kind, to parameters of every shape.
func TestArgsDirectAgreesWithConvert(t *testing.T) {
	for seed := uint64(0); seed < 3000; seed++ {
		checkArgs(t, seed)
	}
}

func FuzzArgsDirect(f *testing.F) {
	for seed := uint64(0); seed < 20; seed++ {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkArgs(t, seed) })
}

func checkArgs(t *testing.T, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	v := randomValue(r, 0)
	text, err := AppendBinary(nil, []any{v}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range argTypes {
		p := NewParams([]reflect.Type{typ}, false)
		fast := []reflect.Value{reflect.New(typ).Elem()}
		fastOut, ok := p.fast(string(text), 1<<20, fast, nil)
		slow := []reflect.Value{reflect.New(typ).Elem()}
		_, _, err := p.ArgsOf(string(text), 1<<20, slow, nil) // fast again, then slow
		list, derr := DecodeBinary(string(text), 1<<20)
		want := reflect.New(typ).Elem()
		cerr := derr
		if derr == nil {
			cerr = ConvertInto(list.([]any)[0], want)
		}
		if (err == nil) != (cerr == nil) || err != nil && err.Error() != cerr.Error() {
			t.Fatalf("seed %d, %v: ArgsOf %v, Convert %v", seed, typ, err, cerr)
		}
		if !ok {
			continue
		}
		if cerr != nil {
			t.Fatalf("seed %d, %v: %#v: the direct decoder took what Convert refuses (%v)", seed, typ, v, cerr)
		}
		if !reflect.DeepEqual(fastOut[0].Interface(), want.Interface()) && !sameNaN(fastOut[0], want) {
			t.Fatalf("seed %d, %v: %#v:\ndirect  %#v\nConvert %#v", seed, typ, v, fastOut[0].Interface(), want.Interface())
		}
	}
}

// sameNaN reports two values equal but for NaNs in the same places, which
// DeepEqual never finds equal: their encodings are the same.
func sameNaN(a, b reflect.Value) bool {
	x, err1 := AppendBinary(nil, a.Interface(), nil)
	y, err2 := AppendBinary(nil, b.Interface(), nil)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// The direct decoders take the common shapes: they are what makes a struct
// argument fast, so that they do is tested too.
func TestArgsDirectTakesPlainData(t *testing.T) {
	for _, c := range []struct {
		typ reflect.Type
		v   any
	}{
		{reflect.TypeFor[argPoint](), map[string]any{"X": 1.0, "Y": 2.5, "name": "p", "tags": []any{"a"}, "other": map[string]any{"z": nil}}},
		{reflect.TypeFor[*argPoint](), map[string]any{"X": 1.0}},
		{reflect.TypeFor[argRecord](), map[string]any{"id": 7.0, "small": -3.0, "count": 9.0, "ratio": 0.1, "ok": true,
			"where": map[string]any{"X": 1.0}, "points": []any{map[string]any{"Y": 2.0}}, "pair": []any{1.0, 2.0},
			"attrs": map[string]any{"k": "v"}, "extra": []any{1.0, "x", nil}, "nested": map[string]any{"n": []any{1.0}}}},
		{reflect.TypeFor[[]int](), []any{1.0, -2.0, js.Undefined{}}},
		{reflect.TypeFor[map[string]int](), map[string]any{"a": 1.0}},
		{reflect.TypeFor[int](), 5.0},
		{reflect.TypeFor[string](), "a\xed\xa0\x80"},
		{reflect.TypeFor[map[string]any](), map[string]any{"a": js.Undefined{}}},
		{reflect.TypeFor[any](), &js.Map{}},
	} {
		text, err := AppendBinary(nil, []any{c.v}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := NewParams([]reflect.Type{c.typ}, false)
		if _, ok := p.fast(string(text), 1<<20, []reflect.Value{reflect.New(c.typ).Elem()}, nil); !ok {
			t.Errorf("%v of %#v went the slow way", c.typ, c.v)
		}
	}
}

type deepList []deepList

// A value nested to the format's bound, given to a parameter of a
// recursive type, converts or is refused, as Convert would: the direct
// decoders recurse no deeper than MaxDepth.
func TestArgsDeep(t *testing.T) {
	for _, depth := range []int{100, MaxDepth - 2, MaxDepth + 5} {
		v := any([]any{})
		for i := 0; i < depth; i++ {
			v = []any{v}
		}
		text, err := AppendBinary(nil, []any{v}, nil)
		if err != nil {
			if depth > MaxDepth {
				continue // the encoder refuses it first
			}
			t.Fatal(err)
		}
		p := NewParams([]reflect.Type{reflect.TypeFor[deepList]()}, false)
		dst := []reflect.Value{reflect.New(reflect.TypeFor[deepList]()).Elem()}
		_, _, err = p.ArgsOf(string(text), 1<<30, dst, nil)
		list, _ := DecodeBinary(string(text), 1<<30)
		want := reflect.New(reflect.TypeFor[deepList]()).Elem()
		cerr := ConvertInto(list.([]any)[0], want)
		if (err == nil) != (cerr == nil) {
			t.Errorf("depth %d: ArgsOf %v, Convert %v", depth, err, cerr)
		}
	}
}

package codec

import (
	"encoding/binary"
	"math"
	"reflect"

	"github.com/airlockrun/airlock/js"
)

// Magic is the first byte of binary text.
const Magic = 0xB1

// headerSize is the size of the header: Magic, u32 values, u32 objects.
const headerSize = 9

// The tags (codec.c).
const (
	tUndefined = iota
	tNull
	tFalse
	tTrue
	tF64
	tI32
	tString
	tBigInt
	tRef
	tObject
	tArray
	tSparse
	tMap
	tSet
	tDate
	tTyped
	tBuffer
	tView
	tError
	tRegExp
	tBoxed
	tFunc // host to sandbox only: u32 id, str name, u8 mode; takes no id
)

// BinaryCost is what binary text costs a run's budget: its bytes, 16 for
// each value and 64 for each object, by the counts of its header (which
// the decoder holds the text to), a measure of what decoding it costs in
// Go memory beyond the text.
func BinaryCost[T ~string | ~[]byte](s T) int {
	if len(s) < headerSize {
		return len(s)
	}
	values := int64(le32(s[1:5]))
	objects := int64(le32(s[5:9]))
	c := int64(len(s)) + 16*values + 64*objects
	if c > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(c)
}

func le32[T ~string | ~[]byte](s T) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// JSONCost is what JSON text (a JSON host function's argument list or
// answer) costs a run's budget: its bytes, 16 more for each value in a
// list and 64 for each list or object: decoded, the text's values take at
// most about three times their cost at the peak, as BinaryCost counts
// binary text.
func JSONCost[T ~string | ~[]byte](text T) int {
	n, inString := len(text), false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',':
			n += 16
		case c == '[' || c == '{':
			n += 64
		}
	}
	return n
}

// typedArrays is, for each typed array, its name, the Go type it arrives
// as (package js's table) and the size of its element, in the order of
// QuickJS's JSTypedArrayEnum: the kind byte of tag 15 is an index.
var typedArrays = [...]struct {
	name string
	typ  reflect.Type
	size int
}{
	{"Uint8ClampedArray", reflect.TypeFor[js.Uint8ClampedArray](), 1},
	{"Int8Array", reflect.TypeFor[js.Int8Array](), 1},
	{"Uint8Array", reflect.TypeFor[[]byte](), 1},
	{"Int16Array", reflect.TypeFor[js.Int16Array](), 2},
	{"Uint16Array", reflect.TypeFor[js.Uint16Array](), 2},
	{"Int32Array", reflect.TypeFor[js.Int32Array](), 4},
	{"Uint32Array", reflect.TypeFor[js.Uint32Array](), 4},
	{"BigInt64Array", reflect.TypeFor[js.BigInt64Array](), 8},
	{"BigUint64Array", reflect.TypeFor[js.BigUint64Array](), 8},
	{"Float16Array", reflect.TypeFor[js.Float16Array](), 2},
	{"Float32Array", reflect.TypeFor[js.Float32Array](), 4},
	{"Float64Array", reflect.TypeFor[js.Float64Array](), 8},
}

// The kind bytes the encoder writes itself.
const (
	kindClamped = 0
	kindUint8   = 2
	kindFloat16 = 9
)

// typedKinds is the kind byte of each Go type of typedArrays.
var typedKinds = func() map[reflect.Type]byte {
	m := map[reflect.Type]byte{}
	for i, a := range typedArrays {
		m[a.typ] = byte(i)
	}
	return m
}()

// TypedName is the typed array a slice type stands for, as package js's
// table maps them ([]byte is a Uint8Array), or "" for another type.
func TypedName(t reflect.Type) string {
	if k, ok := typedKinds[t]; ok {
		return typedArrays[k].name
	}
	return ""
}

// typedArray makes the Go value of a typed array of kind k from its bytes.
func typedArray(k byte, b []byte) (any, error) {
	if int(k) >= len(typedArrays) || len(b)%typedArrays[k].size != 0 {
		return nil, ErrMalformed
	}
	ne := binary.LittleEndian // the sandbox's memory, wasm's byte order
	n := len(b) / typedArrays[k].size
	switch typedArrays[k].name {
	case "Uint8Array":
		return b, nil
	case "Uint8ClampedArray":
		return js.Uint8ClampedArray(b), nil
	case "Int8Array":
		out := make(js.Int8Array, n)
		for i := range out {
			out[i] = int8(b[i])
		}
		return out, nil
	case "Int16Array":
		out := make(js.Int16Array, n)
		for i := range out {
			out[i] = int16(ne.Uint16(b[2*i:]))
		}
		return out, nil
	case "Uint16Array":
		out := make(js.Uint16Array, n)
		for i := range out {
			out[i] = ne.Uint16(b[2*i:])
		}
		return out, nil
	case "Float16Array":
		out := make(js.Float16Array, n)
		for i := range out {
			out[i] = ne.Uint16(b[2*i:])
		}
		return out, nil
	case "Int32Array":
		out := make(js.Int32Array, n)
		for i := range out {
			out[i] = int32(ne.Uint32(b[4*i:]))
		}
		return out, nil
	case "Uint32Array":
		out := make(js.Uint32Array, n)
		for i := range out {
			out[i] = ne.Uint32(b[4*i:])
		}
		return out, nil
	case "Float32Array":
		out := make(js.Float32Array, n)
		for i := range out {
			out[i] = math.Float32frombits(ne.Uint32(b[4*i:]))
		}
		return out, nil
	case "Float64Array":
		out := make(js.Float64Array, n)
		for i := range out {
			out[i] = math.Float64frombits(ne.Uint64(b[8*i:]))
		}
		return out, nil
	case "BigInt64Array":
		out := make(js.BigInt64Array, n)
		for i := range out {
			out[i] = int64(ne.Uint64(b[8*i:]))
		}
		return out, nil
	default: // BigUint64Array
		out := make(js.BigUint64Array, n)
		for i := range out {
			out[i] = ne.Uint64(b[8*i:])
		}
		return out, nil
	}
}

package airlock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/airlockrun/airlock/js"
)

// The sandbox encodes the values it sends to the host (results, host
// function arguments, console arguments, reports) in C, in the binary
// format that internal/qjs/shim/codec.c describes, and the host decodes
// them here from the bytes it read out of linear memory. A binary text
// starts with binaryMagic, which no JSON text starts with, so the wire
// format's readers (decodeWire, wireCost) tell the two apart.

const binaryMagic = 0xB1

// The binary format's tags (codec.c).
const (
	bUndefined = iota
	bNull
	bFalse
	bTrue
	bF64
	bI32
	bString
	bBigInt
	bRef
	bObject
	bArray
	bSparse
	bMap
	bSet
	bDate
	bTyped
	bBuffer
	bView
	bError
	bRegExp
	bBoxed
)

// binaryTyped names the typed arrays by their kind byte (QuickJS's
// JSTypedArrayEnum).
var binaryTyped = [...]string{"Uint8ClampedArray", "Int8Array", "Uint8Array", "Int16Array", "Uint16Array",
	"Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array", "Float16Array", "Float32Array", "Float64Array"}

func isBinary(s string) bool { return len(s) > 0 && s[0] == binaryMagic }

// binaryCost is what binary text costs the run's budget, as wireCost
// counts JSON text: its bytes, 16 for each value and 64 for each object,
// by the counts of its header (which the decoder holds it to).
func binaryCost(s string) int {
	if len(s) < 9 {
		return len(s)
	}
	values := int64(binary.LittleEndian.Uint32([]byte(s[1:5])))
	objects := int64(binary.LittleEndian.Uint32([]byte(s[5:9])))
	c := int64(len(s)) + 16*values + 64*objects
	if c > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(c)
}

var errMalformed = errors.New("airlock: malformed value from the sandbox")

type binReader struct {
	s   string
	pos int
}

func (r *binReader) u8() (byte, bool) {
	if r.pos >= len(r.s) {
		return 0, false
	}
	r.pos++
	return r.s[r.pos-1], true
}

func (r *binReader) u32() (uint32, bool) {
	if r.pos+4 > len(r.s) {
		return 0, false
	}
	v := uint32(r.s[r.pos]) | uint32(r.s[r.pos+1])<<8 | uint32(r.s[r.pos+2])<<16 | uint32(r.s[r.pos+3])<<24
	r.pos += 4
	return v, true
}

func (r *binReader) f64() (float64, bool) {
	lo, ok1 := r.u32()
	hi, ok2 := r.u32()
	return math.Float64frombits(uint64(hi)<<32 | uint64(lo)), ok1 && ok2
}

// raw reads a length and as many bytes, as a part of the text.
func (r *binReader) raw() (string, bool) {
	n, ok := r.u32()
	if !ok || uint64(r.pos)+uint64(n) > uint64(len(r.s)) {
		return "", false
	}
	s := r.s[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, true
}

// str reads a string of its own: a part of the text would keep all of it
// alive as long as the string lives (a host function that caches one
// short argument would hold the whole call's text).
func (r *binReader) str() (string, bool) {
	s, ok := r.raw()
	return strings.Clone(s), ok
}

// left is how many bytes are left: a container of n items needs n of them
// at least, so n is checked against it before anything is allocated.
func (r *binReader) left() int { return len(r.s) - r.pos }

type binFrame struct {
	tag    byte
	n, i   int // items, next item
	arr    []any
	obj    map[string]any
	m      *js.Map
	set    *js.Set
	named  *js.Array
	length int  // sparse: the array's length
	value  bool // Map: the entry's value is next
}

// decodeBinary decodes binary text into Go values without recursion.
// budget bounds what the text can make the host allocate beyond itself:
// sparse arrays' lengths, in elements of 16 bytes.
func decodeBinary(s string, budget int) (any, error) {
	r := &binReader{s: s, pos: 9}
	if len(s) < 9 || s[0] != binaryMagic {
		return nil, errMalformed
	}
	maxValues := int64(binary.LittleEndian.Uint32([]byte(s[1:5])))
	maxObjects := int64(binary.LittleEndian.Uint32([]byte(s[5:9])))
	var values, objects int64
	var refs []any
	var stack []binFrame
	var out any
	budget -= len(s)

	// read reads one value; a container is returned empty, with its frame
	// pushed, and filled by the loop below.
	var read func() (any, error)
	read = func() (any, error) {
		values++
		if values > maxValues {
			return nil, errMalformed
		}
		tag, ok := r.u8()
		if !ok {
			return nil, errMalformed
		}
		if tag >= bObject {
			objects++
			if objects > maxObjects {
				return nil, errMalformed
			}
		}
		switch tag {
		case bUndefined:
			return js.Undefined{}, nil
		case bNull:
			return nil, nil
		case bFalse:
			return false, nil
		case bTrue:
			return true, nil
		case bF64:
			f, ok := r.f64()
			if !ok {
				return nil, errMalformed
			}
			return f, nil
		case bI32:
			n, ok := r.u32()
			if !ok {
				return nil, errMalformed
			}
			return float64(int32(n)), nil
		case bString:
			str, ok := r.str()
			if !ok {
				return nil, errMalformed
			}
			return str, nil
		case bBigInt:
			str, ok := r.raw()
			if !ok {
				return nil, errMalformed
			}
			if len(str) > budget {
				return nil, errValueTooLarge
			}
			n, ok := new(big.Int).SetString(str, 10)
			if !ok {
				return nil, errMalformed
			}
			return n, nil
		case bRef:
			id, ok := r.u32()
			if !ok || int64(id) >= int64(len(refs)) {
				return nil, errMalformed
			}
			return refs[id], nil
		}
		if len(stack) >= maxWireDepth {
			return nil, fmt.Errorf("airlock: value nested deeper than %d levels", maxWireDepth)
		}
		var v any
		switch tag {
		case bObject, bArray, bMap, bSet:
			n, ok := r.u32()
			if !ok || int64(n) > int64(r.left()) {
				return nil, errMalformed
			}
			f := binFrame{tag: tag, n: int(n)}
			switch tag {
			case bObject:
				f.obj = make(map[string]any, n)
				v = f.obj
			case bArray:
				f.arr = make([]any, n)
				v = f.arr
			case bMap:
				f.m = &js.Map{Entries: make([]js.MapEntry, n)}
				v = f.m
			case bSet:
				f.set = &js.Set{Values: make([]any, n)}
				v = f.set
			}
			stack = append(stack, f)
		case bSparse:
			length, ok1 := r.u32()
			named, ok2 := r.u8()
			n, ok3 := r.u32()
			if !ok1 || !ok2 || !ok3 || int64(n) > int64(r.left()) {
				return nil, errMalformed
			}
			if int64(length)*16 > int64(budget) {
				return nil, fmt.Errorf("%w: a sparse array of length %d", errValueTooLarge, length)
			}
			budget -= int(length) * 16
			a := make([]any, length)
			for i := range a {
				a[i] = js.Undefined{}
			}
			f := binFrame{tag: tag, n: int(n), arr: a, length: int(length)}
			v = a
			if named != 0 {
				f.named = &js.Array{Elements: a, Props: map[string]any{}}
				v = f.named
			}
			stack = append(stack, f)
		case bDate:
			ms, ok := r.f64()
			if !ok {
				return nil, errMalformed
			}
			var d time.Time // an invalid Date is the zero Time
			if !math.IsNaN(ms) && !math.IsInf(ms, 0) && math.Abs(ms) <= 8.64e15 {
				d = time.UnixMilli(int64(ms)).UTC()
			}
			v = d
		case bTyped:
			kind, ok1 := r.u8()
			b, ok2 := r.raw()
			if !ok1 || !ok2 || int(kind) >= len(binaryTyped) {
				return nil, errMalformed
			}
			x, err := typedArray(binaryTyped[kind], []byte(b))
			if err != nil {
				return nil, err
			}
			v = x
		case bBuffer, bView:
			b, ok := r.raw()
			if !ok {
				return nil, errMalformed
			}
			if tag == bBuffer {
				v = js.ArrayBuffer(b)
			} else {
				v = js.DataView(b)
			}
		case bError:
			name, ok1 := r.str()
			msg, ok2 := r.str()
			if !ok1 || !ok2 {
				return nil, errMalformed
			}
			v = &js.ErrorValue{Name: name, Message: msg}
		case bRegExp:
			src, ok1 := r.str()
			flags, ok2 := r.str()
			if !ok1 || !ok2 {
				return nil, errMalformed
			}
			v = &js.RegExp{Source: src, Flags: flags}
		case bBoxed:
			b := &js.Boxed{}
			refs = append(refs, b)
			x, err := read()
			if err != nil {
				return nil, err
			}
			switch x.(type) {
			case float64, string, bool, *big.Int:
			default:
				return nil, errMalformed
			}
			b.Value = x
			return b, nil
		default:
			return nil, errMalformed
		}
		refs = append(refs, v)
		return v, nil
	}

	v, err := read()
	if err != nil {
		return nil, err
	}
	out = v
	// Each step reads one item of the container on top; read may push
	// another, so the frame is copied, and what it fills (slices, maps,
	// pointers) is reached through the copy.
	for len(stack) > 0 {
		top := len(stack) - 1
		f := stack[top]
		if f.i >= f.n && !f.value {
			stack = stack[:top]
			continue
		}
		switch f.tag {
		case bArray, bSet:
			stack[top].i++
			x, err := read()
			if err != nil {
				return nil, err
			}
			if f.tag == bArray {
				f.arr[f.i] = x
			} else {
				f.set.Values[f.i] = x
			}
		case bObject:
			stack[top].i++
			k, ok := r.str()
			if !ok {
				return nil, errMalformed
			}
			x, err := read()
			if err != nil {
				return nil, err
			}
			f.obj[k] = x
		case bMap:
			if !f.value {
				stack[top].value = true
				x, err := read()
				if err != nil {
					return nil, err
				}
				f.m.Entries[f.i].Key = x
			} else {
				stack[top].value = false
				stack[top].i++
				x, err := read()
				if err != nil {
					return nil, err
				}
				f.m.Entries[f.i].Value = x
			}
		case bSparse:
			stack[top].i++
			kind, ok := r.u8()
			if !ok {
				return nil, errMalformed
			}
			if kind == 0 {
				idx, ok := r.u32()
				if !ok || int64(idx) >= int64(f.length) {
					return nil, errMalformed
				}
				x, err := read()
				if err != nil {
					return nil, err
				}
				f.arr[idx] = x
				continue
			}
			name, ok := r.str()
			if !ok || kind != 1 || f.named == nil {
				return nil, errMalformed
			}
			x, err := read()
			if err != nil {
				return nil, err
			}
			f.named.Props[name] = x
		}
	}
	if r.pos != len(s) {
		return nil, errMalformed
	}
	return out, nil
}

// bFunc is a host function in a value going into the sandbox: u32 id, str
// name, u8 mode (0 a function, 1 a JSONFunc, 2 a function whose arguments
// are shown: see shownFunc). It takes no id.
const bFunc = 21

// binaryWriter writes a wire tree (encodeTree's) in the binary format, for
// the sandbox's native decoder.
type binaryWriter struct {
	b               []byte
	values, objects uint32
}

var typedKinds = func() map[string]byte {
	m := map[string]byte{}
	for i, n := range binaryTyped {
		m[n] = byte(i)
	}
	return m
}()

func (w *binaryWriter) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *binaryWriter) f64(f float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(f))
}
func (w *binaryWriter) str(s string) {
	w.u32(uint32(len(s)))
	w.b = append(w.b, s...)
}

var errBadTree = errors.New("airlock: a value could not be encoded")

// binaryTree writes a wire tree as binary text: the header and the value.
func binaryTree(tree any) ([]byte, error) {
	w := &binaryWriter{b: make([]byte, 9, 256)}
	w.b[0] = binaryMagic
	if err := w.node(tree, 0); err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint32(w.b[1:], w.values)
	binary.LittleEndian.PutUint32(w.b[5:], w.objects)
	return w.b, nil
}

func (w *binaryWriter) node(n any, depth int) error {
	if depth > maxWireDepth {
		return fmt.Errorf("airlock: value nested deeper than %d levels", maxWireDepth)
	}
	w.values++
	switch x := n.(type) {
	case nil:
		w.b = append(w.b, bNull)
		return nil
	case bool:
		if x {
			w.b = append(w.b, bTrue)
		} else {
			w.b = append(w.b, bFalse)
		}
		return nil
	case string:
		w.b = append(w.b, bString)
		w.str(x)
		return nil
	case float64:
		w.b = append(w.b, bF64)
		w.f64(x)
		return nil
	case int64:
		w.b = append(w.b, bF64)
		w.f64(float64(x))
		return nil
	case uint64:
		w.b = append(w.b, bF64)
		w.f64(float64(x))
		return nil
	case []any:
		return w.tagged(x, depth)
	}
	return errBadTree
}

func (w *binaryWriter) tagged(x []any, depth int) error {
	if len(x) == 0 {
		return errBadTree
	}
	tag, _ := x[0].(string)
	arg := func(i int) any {
		if i < len(x) {
			return x[i]
		}
		return nil
	}
	text := func(i int) string { s, _ := arg(i).(string); return s }
	bytes := func(i int) []byte { b, _ := arg(i).([]byte); return b }
	switch tag {
	case "u":
		w.b = append(w.b, bUndefined)
		return nil
	case "n":
		f, _ := specialNumber(text(1))
		w.b = append(w.b, bF64)
		w.f64(f)
		return nil
	case "i":
		w.b = append(w.b, bBigInt)
		w.str(text(1))
		return nil
	case "w":
		s, ok := unitsString(x)
		if !ok {
			return errBadTree
		}
		w.b = append(w.b, bString)
		w.str(s)
		return nil
	case "r":
		id, _ := arg(1).(int)
		w.b = append(w.b, bRef)
		w.u32(uint32(id))
		return nil
	case "f":
		id, _ := arg(1).(int)
		mode := byte(0)
		switch m := arg(3).(type) {
		case bool:
			if m {
				mode = 1
			}
		case int:
			mode = byte(m)
		}
		w.b = append(w.b, bFunc)
		w.u32(uint32(id))
		w.str(text(2))
		w.b = append(w.b, mode)
		return nil
	}
	w.objects++
	switch tag {
	case "o", "m":
		if tag == "o" {
			w.b = append(w.b, bObject)
		} else {
			w.b = append(w.b, bMap)
		}
		w.u32(uint32((len(x) - 1) / 2))
		for i := 1; i+1 < len(x); i += 2 {
			if tag == "o" {
				w.str(text(i))
			} else if err := w.node(x[i], depth+1); err != nil {
				return err
			}
			if err := w.node(x[i+1], depth+1); err != nil {
				return err
			}
		}
	case "a", "s":
		if tag == "a" {
			w.b = append(w.b, bArray)
		} else {
			w.b = append(w.b, bSet)
		}
		w.u32(uint32(len(x) - 1))
		for _, c := range x[1:] {
			if err := w.node(c, depth+1); err != nil {
				return err
			}
		}
	case "h":
		length, _ := arg(1).(float64)
		named := byte(0)
		for i := 2; i < len(x); i += 2 {
			if _, ok := x[i].(string); ok {
				named = 1
			}
		}
		w.b = append(w.b, bSparse)
		w.u32(uint32(length))
		w.b = append(w.b, named)
		w.u32(uint32((len(x) - 2) / 2))
		for i := 2; i+1 < len(x); i += 2 {
			switch k := x[i].(type) {
			case string:
				w.b = append(w.b, 1)
				w.str(k)
			case float64:
				w.b = append(w.b, 0)
				w.u32(uint32(k))
			default:
				return errBadTree
			}
			if err := w.node(x[i+1], depth+1); err != nil {
				return err
			}
		}
	case "d":
		f, ok := arg(1).(float64)
		if !ok {
			f = math.NaN()
		}
		w.b = append(w.b, bDate)
		w.f64(f)
	case "x":
		kind, ok := typedKinds[text(1)]
		if !ok {
			return errBadTree
		}
		w.b = append(w.b, bTyped, kind)
		w.str(string(bytes(2)))
	case "b", "v":
		if tag == "b" {
			w.b = append(w.b, bBuffer)
		} else {
			w.b = append(w.b, bView)
		}
		w.str(string(bytes(1)))
	case "e":
		w.b = append(w.b, bError)
		w.str(text(1))
		w.str(text(2))
	case "g":
		w.b = append(w.b, bRegExp)
		w.str(text(1))
		w.str(text(2))
	case "p":
		w.b = append(w.b, bBoxed)
		return w.node(arg(1), depth+1)
	default:
		return errBadTree
	}
	return nil
}

package codec

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
	"unsafe"

	"github.com/airlockrun/airlock/js"
)

// reader reads binary text, keeping the ids of the objects it has read
// for tag 8. Every string and byte slice it returns is a copy: none keeps
// the text alive, and bytes the text was read from may be reused.
type reader struct {
	s   string
	pos int
	// values and objects count what was read, held to the header's
	// counts (maxValues, maxObjects), which the budget charged.
	values, objects       int64
	maxValues, maxObjects int64
	refs                  []any
	// budget bounds what the text can make the host allocate beyond
	// itself: sparse arrays' lengths (16 bytes an element) and bigints'
	// digits.
	budget int
}

// newReader reads binary text s under budget, after its header.
func newReader(s string, budget int) (*reader, error) {
	r := &reader{}
	return r, r.init(s, budget)
}

// init readies r to read binary text s under budget, after its header.
func (r *reader) init(s string, budget int) error {
	if len(s) < headerSize || s[0] != Magic {
		return ErrMalformed
	}
	if len(s) > budget {
		return ErrTooLarge
	}
	r.s, r.pos, r.budget = s, headerSize, budget-len(s)
	r.maxValues, r.maxObjects = int64(le32(s[1:5])), int64(le32(s[5:9]))
	return nil
}

// keep adds an object just read to refs, which holds every object read
// so far by its id, placeholders for those a direct decoder read.
func (r *reader) keep(v any) {
	for int64(len(r.refs)) < r.objects-1 {
		r.refs = append(r.refs, placeholder{})
	}
	r.refs = append(r.refs, v)
}

func (r *reader) u8() (byte, bool) {
	if r.pos >= len(r.s) {
		return 0, false
	}
	r.pos++
	return r.s[r.pos-1], true
}

func (r *reader) u32() (uint32, bool) {
	if r.pos+4 > len(r.s) {
		return 0, false
	}
	v := le32(r.s[r.pos:])
	r.pos += 4
	return v, true
}

func (r *reader) f64() (float64, bool) {
	if r.pos+8 > len(r.s) {
		return 0, false
	}
	lo, hi := le32(r.s[r.pos:]), le32(r.s[r.pos+4:])
	r.pos += 8
	return math.Float64frombits(uint64(hi)<<32 | uint64(lo)), true
}

// raw reads a length and as many bytes, as a part of the text.
func (r *reader) raw() (string, bool) {
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
func (r *reader) str() (string, bool) {
	s, ok := r.raw()
	return strings.Clone(s), ok
}

// bytes reads a length and a copy of as many bytes.
func (r *reader) bytes() ([]byte, bool) {
	s, ok := r.raw()
	return append([]byte{}, s...), ok
}

// left is how many bytes are left: a container of n items needs n of them
// at least, so n is checked against it before anything is allocated.
func (r *reader) left() int { return len(r.s) - r.pos }

// count counts a value of tag tag against the header's counts.
func (r *reader) count(tag byte) bool {
	r.values++
	if tag >= tObject && tag <= tBoxed {
		r.objects++
		return r.values <= r.maxValues && r.objects <= r.maxObjects
	}
	return r.values <= r.maxValues
}

// done checks that the text held exactly one value.
func (r *reader) done() error {
	if r.pos != len(r.s) {
		return ErrMalformed
	}
	return nil
}

// DecodeBinary decodes binary text into Go values, without recursion over
// the value: package js's table. budget bounds what the text may make the
// host allocate: the text itself and, beyond it, sparse arrays' lengths
// (16 bytes an element) and bigints' digits.
func DecodeBinary(s string, budget int) (any, error) {
	r, err := newReader(s, budget)
	if err != nil {
		return nil, err
	}
	v, err := r.value()
	if err != nil {
		return nil, err
	}
	return v, r.done()
}

type frame struct {
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

// value reads one whole value, without recursion.
func (r *reader) value() (any, error) {
	var stack []frame
	out, err := r.one(&stack)
	if err != nil {
		return nil, err
	}
	// Each step reads one item of the container on top; one may push
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
		case tArray, tSet:
			stack[top].i++
			x, err := r.one(&stack)
			if err != nil {
				return nil, err
			}
			if f.tag == tArray {
				f.arr[f.i] = x
			} else {
				f.set.Values[f.i] = x
			}
		case tObject:
			stack[top].i++
			k, ok := r.str()
			if !ok {
				return nil, ErrMalformed
			}
			x, err := r.one(&stack)
			if err != nil {
				return nil, err
			}
			f.obj[k] = x
		case tMap:
			if !f.value {
				stack[top].value = true
				x, err := r.one(&stack)
				if err != nil {
					return nil, err
				}
				f.m.Entries[f.i].Key = x
			} else {
				stack[top].value = false
				stack[top].i++
				x, err := r.one(&stack)
				if err != nil {
					return nil, err
				}
				f.m.Entries[f.i].Value = x
			}
		case tSparse:
			stack[top].i++
			kind, ok := r.u8()
			if !ok {
				return nil, ErrMalformed
			}
			if kind == 0 {
				idx, ok := r.u32()
				if !ok || int64(idx) >= int64(f.length) {
					return nil, ErrMalformed
				}
				x, err := r.one(&stack)
				if err != nil {
					return nil, err
				}
				f.arr[idx] = x
				continue
			}
			name, ok := r.str()
			if !ok || kind != 1 || f.named == nil {
				return nil, ErrMalformed
			}
			x, err := r.one(&stack)
			if err != nil {
				return nil, err
			}
			f.named.Props[name] = x
		}
	}
	return out, nil
}

// one reads one value; a container is returned empty, with its frame
// pushed on stack, for value's loop to fill.
func (r *reader) one(stack *[]frame) (any, error) {
	tag, ok := r.u8()
	if !ok || !r.count(tag) {
		return nil, ErrMalformed
	}
	switch tag {
	case tUndefined:
		return js.Undefined{}, nil
	case tNull:
		return nil, nil
	case tFalse:
		return false, nil
	case tTrue:
		return true, nil
	case tF64:
		f, ok := r.f64()
		if !ok {
			return nil, ErrMalformed
		}
		return f, nil
	case tI32:
		n, ok := r.u32()
		if !ok {
			return nil, ErrMalformed
		}
		return float64(int32(n)), nil
	case tString:
		s, ok := r.str()
		if !ok {
			return nil, ErrMalformed
		}
		return s, nil
	case tBigInt:
		return r.bigint()
	case tRef:
		id, ok := r.u32()
		switch {
		case !ok || int64(id) >= r.objects:
			return nil, ErrMalformed
		case int64(id) >= int64(len(r.refs)):
			return nil, errPlaceholder
		}
		if _, ok := r.refs[id].(placeholder); ok {
			return nil, errPlaceholder
		}
		return r.refs[id], nil
	}
	if len(*stack) >= MaxDepth {
		return nil, errDepth
	}
	var v any
	switch tag {
	case tObject, tArray, tMap, tSet:
		n, ok := r.u32()
		if !ok || int64(n) > int64(r.left()) {
			return nil, ErrMalformed
		}
		f := frame{tag: tag, n: int(n)}
		switch tag {
		case tObject:
			f.obj = make(map[string]any, n)
			v = f.obj
		case tArray:
			f.arr = make([]any, n)
			v = f.arr
		case tMap:
			f.m = &js.Map{Entries: make([]js.MapEntry, n)}
			v = f.m
		case tSet:
			f.set = &js.Set{Values: make([]any, n)}
			v = f.set
		}
		*stack = append(*stack, f)
	case tSparse:
		length, ok1 := r.u32()
		named, ok2 := r.u8()
		n, ok3 := r.u32()
		if !ok1 || !ok2 || !ok3 || int64(n) > int64(r.left()) {
			return nil, ErrMalformed
		}
		if int64(length)*16 > int64(r.budget) {
			return nil, sparseTooLarge(length)
		}
		r.budget -= int(length) * 16
		a := make([]any, length)
		for i := range a {
			a[i] = js.Undefined{}
		}
		f := frame{tag: tag, n: int(n), arr: a, length: int(length)}
		v = a
		if named != 0 {
			f.named = &js.Array{Elements: a, Props: map[string]any{}}
			v = f.named
		}
		*stack = append(*stack, f)
	case tDate:
		ms, ok := r.f64()
		if !ok {
			return nil, ErrMalformed
		}
		v = dateOf(ms)
	case tTyped:
		kind, ok1 := r.u8()
		b, ok2 := r.bytes()
		if !ok1 || !ok2 {
			return nil, ErrMalformed
		}
		x, err := typedArray(kind, b)
		if err != nil {
			return nil, err
		}
		v = x
	case tBuffer, tView:
		b, ok := r.bytes()
		if !ok {
			return nil, ErrMalformed
		}
		if tag == tBuffer {
			v = js.ArrayBuffer(b)
		} else {
			v = js.DataView(b)
		}
	case tError:
		name, ok1 := r.str()
		msg, ok2 := r.str()
		if !ok1 || !ok2 {
			return nil, ErrMalformed
		}
		v = &js.ErrorValue{Name: name, Message: msg}
	case tRegExp:
		src, ok1 := r.str()
		flags, ok2 := r.str()
		if !ok1 || !ok2 {
			return nil, ErrMalformed
		}
		v = &js.RegExp{Source: src, Flags: flags}
	case tBoxed:
		b := &js.Boxed{}
		r.keep(b)
		x, err := r.one(stack)
		if err != nil {
			return nil, err
		}
		switch x.(type) {
		case float64, string, bool, *big.Int:
		default:
			return nil, ErrMalformed
		}
		b.Value = x
		return b, nil
	default:
		return nil, ErrMalformed
	}
	r.keep(v)
	return v, nil
}

// errPlaceholder is the error of a reference to an object a direct
// decoder read (see ArgsOf): the list is read again the slow way.
var errPlaceholder = errors.New("airlock: a reference to an object read directly")

// bigint reads the digits of a bigint.
func (r *reader) bigint() (*big.Int, error) {
	s, ok := r.raw()
	if !ok {
		return nil, ErrMalformed
	}
	if len(s) > r.budget {
		return nil, ErrTooLarge
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, ErrMalformed
	}
	return n, nil
}

// dateOf is the Go value of a Date: UTC, or the zero Time for an invalid
// Date.
func dateOf(ms float64) time.Time {
	if math.IsNaN(ms) || math.IsInf(ms, 0) || math.Abs(ms) > 8.64e15 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

func sparseTooLarge(length uint32) error {
	return fmt.Errorf("%w: a sparse array of length %d", ErrTooLarge, length)
}

// DecodeBinaryBytes is DecodeBinary of bytes, which it reads in place: b
// must not change during the call, and nothing returned keeps it.
func DecodeBinaryBytes(b []byte, budget int) (any, error) {
	return DecodeBinary(unsafe.String(unsafe.SliceData(b), len(b)), budget)
}

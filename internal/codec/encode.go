package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock/js"
)

// An encoder writes a Go value of one type in the binary format. It is
// built once per type (encoderOf) and cached, as encoding/json caches its
// encoders.
type encoder func(e *encodeState, v reflect.Value) error

// encodeState is one value being encoded.
type encodeState struct {
	b               []byte
	values, objects uint32 // the header's counts; objects is also the next id
	// seen maps the containers met so far to their ids: a container met
	// again (a cycle, a shared reference) is written as tag 8.
	seen  map[address]seenAs
	reg   Registrar
	depth int
	// keys holds the sorted keys of the objects being written, each
	// object's after its parent's.
	keys []string
}

// identity is a container's: its type and address, and a slice's length
// (two slices of one array are different arrays).
type identity struct {
	t   reflect.Type
	p   uintptr
	len int
}

// address and seenAs are an identity in the map of those met: the key
// holds no pointer (no interface to hash, no write barrier).
type address struct {
	p   uintptr
	len int
}

type seenAs struct {
	t  reflect.Type
	id uint32
}

// AppendBinary appends v to buf as binary text: the header and the value.
// Functions in v are given ids by reg; a nil reg makes them a
// *js.CloneError.
func AppendBinary(buf []byte, v any, reg Registrar) ([]byte, error) {
	e := &encodeState{b: buf, reg: reg}
	start := len(buf)
	e.b = append(e.b, Magic, 0, 0, 0, 0, 0, 0, 0, 0)
	if err := e.any(v); err != nil {
		return buf, err
	}
	binary.LittleEndian.PutUint32(e.b[start+1:], e.values)
	binary.LittleEndian.PutUint32(e.b[start+5:], e.objects)
	return e.b, nil
}

// any writes a value held in an interface.
func (e *encodeState) any(v any) error {
	// The commonest dynamic types of data, without a look-up.
	switch x := v.(type) {
	case nil:
		e.values++
		e.b = append(e.b, tNull)
		return nil
	case string:
		e.string(x)
		return nil
	case float64:
		e.number(x)
		return nil
	case bool:
		e.bool(x)
		return nil
	case int:
		e.number(float64(x))
		return nil
	case map[string]any:
		return e.object(x)
	case []any:
		return e.array(x)
	}
	rv := reflect.ValueOf(v)
	return encoderOf(rv.Type())(e, rv)
}

func (e *encodeState) bool(b bool) {
	e.values++
	if b {
		e.b = append(e.b, tTrue)
	} else {
		e.b = append(e.b, tFalse)
	}
}

// number writes a number: an int32 as one, other values as f64.
func (e *encodeState) number(f float64) {
	e.values++
	if i := int32(f); float64(i) == f && (i != 0 || !math.Signbit(f)) {
		e.b = append(e.b, tI32)
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(i))
		return
	}
	e.b = append(e.b, tF64)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f))
}

// string writes a Go string: WTF-8 as it is, each lone surrogate's three
// bytes kept, and U+FFFD for any other byte that is not UTF-8.
func (e *encodeState) string(s string) {
	e.values++
	e.b = append(e.b, tString)
	e.str(s)
}

// str writes a length and the WTF-8 text of s.
func (e *encodeState) str(s string) {
	if utf8.ValidString(s) {
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(s)))
		e.b = append(e.b, s...)
		return
	}
	at := len(e.b)
	e.b = append(e.b, 0, 0, 0, 0)
	e.b = appendWTF8(e.b, s)
	binary.LittleEndian.PutUint32(e.b[at:], uint32(len(e.b)-at-4))
}

// raw writes a length and bytes.
func (e *encodeState) raw(b []byte) {
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(b)))
	e.b = append(e.b, b...)
}

// open starts an object of tag tag: it counts it and gives it its id.
func (e *encodeState) open(tag byte) {
	e.values++
	e.objects++
	e.b = append(e.b, tag)
}

// ref writes tag 8 for a container met before, or records it with the id
// it is about to take; it reports whether it wrote the reference.
func (e *encodeState) ref(id identity) bool {
	a := address{id.p, id.len}
	if n, ok := e.seen[a]; ok {
		if n.t != id.t {
			// Another type at the same address (a struct and its first
			// field): a container of its own, not recorded.
			return false
		}
		e.values++
		e.b = append(e.b, tRef)
		e.b = binary.LittleEndian.AppendUint32(e.b, n.id)
		return true
	}
	if e.seen == nil {
		e.seen = map[address]seenAs{}
	}
	e.seen[a] = seenAs{id.t, e.objects}
	return false
}

// forget removes the record of a container that ref recorded.
func (e *encodeState) forget(id identity) {
	if n, ok := e.seen[address{id.p, id.len}]; ok && n.t == id.t {
		delete(e.seen, address{id.p, id.len})
	}
}

// enter and leave bound the nesting of containers.
func (e *encodeState) enter() error {
	e.depth++
	if e.depth > MaxDepth {
		return errDepth
	}
	return nil
}

func (e *encodeState) leave() { e.depth-- }

// object writes a map[string]any, its keys sorted.
func (e *encodeState) object(m map[string]any) error {
	if m == nil {
		e.values++
		e.b = append(e.b, tNull)
		return nil
	}
	if e.ref(identity{typeObject, reflect.ValueOf(m).Pointer(), 0}) {
		return nil
	}
	if err := e.enter(); err != nil {
		return err
	}
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[start:]
	sort.Strings(keys)
	defer func() { e.keys = e.keys[:start] }()
	e.open(tObject)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(keys)))
	for _, k := range keys {
		e.str(k)
		if err := e.any(m[k]); err != nil {
			return err
		}
	}
	e.leave()
	return nil
}

// array writes an []any.
func (e *encodeState) array(a []any) error {
	if a == nil {
		e.values++
		e.b = append(e.b, tNull)
		return nil
	}
	if len(a) > 0 && e.ref(identity{typeList, reflect.ValueOf(a).Pointer(), len(a)}) {
		return nil
	}
	if err := e.enter(); err != nil {
		return err
	}
	e.open(tArray)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(a)))
	for _, x := range a {
		if err := e.any(x); err != nil {
			return err
		}
	}
	e.leave()
	return nil
}

var (
	typeObject      = reflect.TypeFor[map[string]any]()
	typeList        = reflect.TypeFor[[]any]()
	typeUndefined   = reflect.TypeFor[js.Undefined]()
	typeTime        = reflect.TypeFor[time.Time]()
	typeBigInt      = reflect.TypeFor[*big.Int]()
	typeMap         = reflect.TypeFor[*js.Map]()
	typeSet         = reflect.TypeFor[*js.Set]()
	typeArrayBuffer = reflect.TypeFor[js.ArrayBuffer]()
	typeClamped     = reflect.TypeFor[js.Uint8ClampedArray]()
	typeFloat16     = reflect.TypeFor[js.Float16Array]()
	typeDataView    = reflect.TypeFor[js.DataView]()
	typeBoxed       = reflect.TypeFor[*js.Boxed]()
	typeRegExp      = reflect.TypeFor[*js.RegExp]()
	typeArray       = reflect.TypeFor[*js.Array]()
	typeErrorValue  = reflect.TypeFor[*js.ErrorValue]()
	typeError       = reflect.TypeFor[error]()
	typeMarshaler   = reflect.TypeFor[json.Marshaler]()
)

var encoders sync.Map // reflect.Type → encoder

// encoderOf returns the encoder of type t, building it once. A recursive
// type (a struct that holds a pointer to itself) meets its own encoder
// while it is built: it gets one that waits for the real one.
func encoderOf(t reflect.Type) encoder {
	if f, ok := encoders.Load(t); ok {
		return f.(encoder)
	}
	var (
		wg sync.WaitGroup
		f  encoder
	)
	wg.Add(1)
	fi, loaded := encoders.LoadOrStore(t, encoder(func(e *encodeState, v reflect.Value) error {
		wg.Wait()
		return f(e, v)
	}))
	if loaded {
		return fi.(encoder)
	}
	f = newEncoder(t)
	wg.Done()
	encoders.Store(t, f)
	return f
}

// nullable wraps the encoder of a type whose nil value is null.
func nullable(f encoder) encoder {
	return func(e *encodeState, v reflect.Value) error {
		if v.IsNil() {
			e.values++
			e.b = append(e.b, tNull)
			return nil
		}
		return f(e, v)
	}
}

// newEncoder builds the encoder of type t: package js's table read from Go
// to the sandbox.
func newEncoder(t reflect.Type) encoder {
	if t.Kind() == reflect.Interface {
		return func(e *encodeState, v reflect.Value) error {
			if v.IsNil() {
				e.values++
				e.b = append(e.b, tNull)
				return nil
			}
			return e.any(v.Elem().Interface())
		}
	}
	switch t {
	case typeUndefined:
		return func(e *encodeState, _ reflect.Value) error {
			e.values++
			e.b = append(e.b, tUndefined)
			return nil
		}
	case typeTime:
		return func(e *encodeState, v reflect.Value) error {
			e.open(tDate)
			ms := math.NaN() // the zero Time is what an invalid Date arrives as
			if d := v.Interface().(time.Time); !d.IsZero() {
				ms = float64(d.UnixMilli())
			}
			e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(ms))
			return nil
		}
	case typeBigInt:
		return nullable(func(e *encodeState, v reflect.Value) error {
			e.values++
			e.b = append(e.b, tBigInt)
			e.str(v.Interface().(*big.Int).String())
			return nil
		})
	case typeMap:
		return nullable(encodeJSMap)
	case typeSet:
		return nullable(encodeJSSet)
	case typeArrayBuffer, typeDataView:
		tag := byte(tBuffer)
		if t == typeDataView {
			tag = tView
		}
		return func(e *encodeState, v reflect.Value) error {
			e.open(tag)
			e.raw(v.Bytes())
			return nil
		}
	case typeClamped:
		return func(e *encodeState, v reflect.Value) error {
			e.open(tTyped)
			e.b = append(e.b, kindClamped)
			e.raw(v.Bytes())
			return nil
		}
	case typeFloat16:
		return func(e *encodeState, v reflect.Value) error {
			e.open(tTyped)
			e.b = append(e.b, kindFloat16)
			h := v.Interface().(js.Float16Array)
			e.b = binary.LittleEndian.AppendUint32(e.b, uint32(2*len(h)))
			for _, x := range h {
				e.b = binary.LittleEndian.AppendUint16(e.b, x)
			}
			return nil
		}
	case typeRegExp:
		return nullable(func(e *encodeState, v reflect.Value) error {
			re := v.Interface().(*js.RegExp)
			e.open(tRegExp)
			e.str(re.Source)
			e.str(re.Flags)
			return nil
		})
	case typeBoxed:
		return nullable(encodeBoxed)
	case typeArray:
		return nullable(encodeJSArray)
	}
	if t.Implements(typeBridged) {
		return encodeBridged
	}
	// A nil pointer is null, whatever it points to (an error, a
	// json.Marshaler).
	ptr := t.Kind() == reflect.Pointer
	if t.Implements(typeError) {
		f := encodeError
		if ptr {
			f = nullable(f)
		}
		return f
	}
	if t.Implements(typeMarshaler) {
		f := encodeMarshaler
		if ptr {
			f = nullable(f)
		}
		return f
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(e *encodeState, v reflect.Value) error { e.bool(v.Bool()); return nil }
	case reflect.String:
		return func(e *encodeState, v reflect.Value) error { e.string(v.String()); return nil }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(e *encodeState, v reflect.Value) error { e.number(float64(v.Int())); return nil }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(e *encodeState, v reflect.Value) error { e.number(float64(v.Uint())); return nil }
	case reflect.Float32, reflect.Float64:
		return func(e *encodeState, v reflect.Value) error { e.number(v.Float()); return nil }
	case reflect.Func:
		return nullable(func(e *encodeState, v reflect.Value) error { return e.function(v, FuncPlain) })
	case reflect.Pointer:
		return nullable(pointerEncoder(t))
	case reflect.Slice, reflect.Array:
		return sliceEncoder(t)
	case reflect.Map:
		return nullable(mapEncoder(t))
	case reflect.Struct:
		return structEncoder(t)
	}
	return func(*encodeState, reflect.Value) error {
		return &js.CloneError{What: "a value of type " + t.String()}
	}
}

// function registers a function and writes tag 21.
func (e *encodeState) function(v reflect.Value, mode FuncMode) error {
	if e.reg == nil {
		what := "function " + v.Type().String()
		if v.Kind() != reflect.Func {
			what = "a function"
		}
		return &js.CloneError{What: what}
	}
	id, err := e.reg(v)
	if err != nil {
		return err
	}
	e.values++
	e.b = append(e.b, tFunc)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(id))
	e.str("")
	e.b = append(e.b, byte(mode))
	return nil
}

func encodeBridged(e *encodeState, v reflect.Value) error {
	if v.Kind() == reflect.Func && v.IsNil() {
		e.values++
		e.b = append(e.b, tNull)
		return nil
	}
	return e.function(v, v.Interface().(Bridged).BridgedMode())
}

func encodeError(e *encodeState, v reflect.Value) error {
	name, msg := "Error", ""
	if ev, ok := v.Interface().(*js.ErrorValue); ok {
		name, msg = ev.Name, ev.Message
	} else {
		msg = v.Interface().(error).Error()
	}
	e.open(tError)
	e.str(name)
	e.str(msg)
	return nil
}

// encodeMarshaler writes what a json.Marshaler's JSON decodes to.
func encodeMarshaler(e *encodeState, v reflect.Value) error {
	b, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil {
		return err
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	return e.any(x)
}

func encodeJSMap(e *encodeState, v reflect.Value) error {
	if e.ref(identity{typeMap, v.Pointer(), 0}) {
		return nil
	}
	if err := e.enter(); err != nil {
		return err
	}
	m := v.Interface().(*js.Map)
	e.open(tMap)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(m.Entries)))
	for _, x := range m.Entries {
		if err := e.any(x.Key); err != nil {
			return err
		}
		if err := e.any(x.Value); err != nil {
			return err
		}
	}
	e.leave()
	return nil
}

func encodeJSSet(e *encodeState, v reflect.Value) error {
	if e.ref(identity{typeSet, v.Pointer(), 0}) {
		return nil
	}
	if err := e.enter(); err != nil {
		return err
	}
	s := v.Interface().(*js.Set)
	e.open(tSet)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(s.Values)))
	for _, x := range s.Values {
		if err := e.any(x); err != nil {
			return err
		}
	}
	e.leave()
	return nil
}

// encodeJSArray writes an *js.Array: an array with named properties (tag
// 11), its names sorted.
func encodeJSArray(e *encodeState, v reflect.Value) error {
	if e.ref(identity{typeArray, v.Pointer(), 0}) {
		return nil
	}
	if err := e.enter(); err != nil {
		return err
	}
	a := v.Interface().(*js.Array)
	names := make([]string, 0, len(a.Props))
	for k := range a.Props {
		names = append(names, k)
	}
	sort.Strings(names)
	e.open(tSparse)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(a.Elements)))
	named := byte(0)
	if len(names) > 0 {
		named = 1
	}
	e.b = append(e.b, named)
	e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(a.Elements)+len(names)))
	for i, x := range a.Elements {
		e.b = append(e.b, 0)
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(i))
		if err := e.any(x); err != nil {
			return err
		}
	}
	for _, k := range names {
		e.b = append(e.b, 1)
		e.str(k)
		if err := e.any(a.Props[k]); err != nil {
			return err
		}
	}
	e.leave()
	return nil
}

// encodeBoxed writes a boxed primitive: its value a bool, string, number
// or *big.Int.
func encodeBoxed(e *encodeState, v reflect.Value) error {
	x := v.Interface().(*js.Boxed).Value
	switch x := x.(type) {
	case bool, string, float64, float32, int, int64:
	case *big.Int:
		if x == nil {
			return &js.CloneError{What: fmt.Sprintf("a Boxed value of type %T", x)}
		}
	default:
		return &js.CloneError{What: fmt.Sprintf("a Boxed value of type %T", x)}
	}
	e.open(tBoxed)
	switch x := x.(type) {
	case bool:
		e.bool(x)
	case string:
		e.string(x)
	case float64:
		e.number(x)
	case float32:
		e.number(float64(x))
	case int:
		e.number(float64(x))
	case int64:
		e.number(float64(x))
	case *big.Int:
		e.values++
		e.b = append(e.b, tBigInt)
		e.str(x.String())
	}
	return nil
}

// pointerEncoder writes what a pointer points to; a pointer to a struct,
// map, slice or array met again is a reference to the same object.
func pointerEncoder(t reflect.Type) encoder {
	elem := t.Elem()
	switch elem.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
	default:
		return func(e *encodeState, v reflect.Value) error { return encoderOf(elem)(e, v.Elem()) }
	}
	return func(e *encodeState, v reflect.Value) error {
		id := identity{t, v.Pointer(), 0}
		if e.ref(id) {
			return nil
		}
		at := len(e.b)
		if err := encoderOf(elem)(e, v.Elem()); err != nil {
			return err
		}
		// The pointee took the id recorded only if it was written as an
		// object (not as null, a primitive or a reference).
		if tag := e.b[at]; tag < tObject || tag > tBoxed {
			e.forget(id)
		}
		return nil
	}
}

// sliceEncoder writes a slice or array: a byte slice or array as a
// Uint8Array, the typed array types of package js as typed arrays, other
// slices and arrays as Arrays.
func sliceEncoder(t reflect.Type) encoder {
	isSlice := t.Kind() == reflect.Slice
	if kind, ok := typedKinds[t]; ok && kind != kindUint8 {
		size := int(t.Elem().Size())
		return nullable(func(e *encodeState, v reflect.Value) error {
			e.open(tTyped)
			e.b = append(e.b, kind)
			e.b = binary.LittleEndian.AppendUint32(e.b, uint32(v.Len()*size))
			e.b = appendElements(e.b, v)
			return nil
		})
	}
	if t.Elem().Kind() == reflect.Uint8 {
		f := func(e *encodeState, v reflect.Value) error {
			e.open(tTyped)
			e.b = append(e.b, kindUint8)
			if isSlice {
				e.raw(v.Bytes())
				return nil
			}
			e.b = binary.LittleEndian.AppendUint32(e.b, uint32(v.Len()))
			for i := 0; i < v.Len(); i++ {
				e.b = append(e.b, byte(v.Index(i).Uint()))
			}
			return nil
		}
		if isSlice {
			return nullable(f)
		}
		return f
	}
	elem := t.Elem()
	f := func(e *encodeState, v reflect.Value) error {
		n := v.Len()
		if isSlice && n > 0 && e.ref(identity{t, v.Pointer(), n}) {
			return nil
		}
		if err := e.enter(); err != nil {
			return err
		}
		enc := encoderOf(elem)
		e.open(tArray)
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(n))
		for i := 0; i < n; i++ {
			if err := enc(e, v.Index(i)); err != nil {
				return err
			}
		}
		e.leave()
		return nil
	}
	if isSlice {
		return nullable(f)
	}
	return f
}

// appendElements appends the little-endian bytes of the elements of a
// slice of one of package js's typed array types.
func appendElements(b []byte, v reflect.Value) []byte {
	le := binary.LittleEndian
	switch x := v.Interface().(type) {
	case js.Int8Array:
		for _, y := range x {
			b = append(b, byte(y))
		}
	case js.Int16Array:
		for _, y := range x {
			b = le.AppendUint16(b, uint16(y))
		}
	case js.Uint16Array:
		for _, y := range x {
			b = le.AppendUint16(b, y)
		}
	case js.Int32Array:
		for _, y := range x {
			b = le.AppendUint32(b, uint32(y))
		}
	case js.Uint32Array:
		for _, y := range x {
			b = le.AppendUint32(b, y)
		}
	case js.Float32Array:
		for _, y := range x {
			b = le.AppendUint32(b, math.Float32bits(y))
		}
	case js.Float64Array:
		for _, y := range x {
			b = le.AppendUint64(b, math.Float64bits(y))
		}
	case js.BigInt64Array:
		for _, y := range x {
			b = le.AppendUint64(b, uint64(y))
		}
	case js.BigUint64Array:
		for _, y := range x {
			b = le.AppendUint64(b, y)
		}
	}
	return b
}

// mapEncoder writes a map: with string keys a plain object, its keys
// sorted; with other keys a Map, its keys sorted by their text.
func mapEncoder(t reflect.Type) encoder {
	if t == typeObject {
		return func(e *encodeState, v reflect.Value) error { return e.object(v.Interface().(map[string]any)) }
	}
	strKeys := t.Key().Kind() == reflect.String
	return func(e *encodeState, v reflect.Value) error {
		if e.ref(identity{t, v.Pointer(), 0}) {
			return nil
		}
		if err := e.enter(); err != nil {
			return err
		}
		keys := v.MapKeys()
		val := encoderOf(t.Elem())
		if strKeys {
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			e.open(tObject)
			e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(keys)))
			for _, k := range keys {
				e.str(k.String())
				if err := val(e, v.MapIndex(k)); err != nil {
					return err
				}
			}
		} else {
			texts := make([]string, len(keys))
			for i, k := range keys {
				texts[i] = fmt.Sprint(k)
			}
			sort.Sort(byText{keys, texts})
			key := encoderOf(t.Key())
			e.open(tMap)
			e.b = binary.LittleEndian.AppendUint32(e.b, uint32(len(keys)))
			for _, k := range keys {
				if err := key(e, k); err != nil {
					return err
				}
				if err := val(e, v.MapIndex(k)); err != nil {
					return err
				}
			}
		}
		e.leave()
		return nil
	}
}

// byText sorts map keys by their texts.
type byText struct {
	keys  []reflect.Value
	texts []string
}

func (s byText) Len() int           { return len(s.keys) }
func (s byText) Less(i, j int) bool { return s.texts[i] < s.texts[j] }
func (s byText) Swap(i, j int) {
	s.keys[i], s.keys[j] = s.keys[j], s.keys[i]
	s.texts[i], s.texts[j] = s.texts[j], s.texts[i]
}

// structEncoder writes a struct as a plain object of its exported fields,
// named and omitted as encoding/json names and omits them.
func structEncoder(t reflect.Type) encoder {
	fields := fieldsOf(t)
	if len(fields) == 0 && t.NumField() > 0 {
		return func(*encodeState, reflect.Value) error {
			return &js.CloneError{What: "a value of type " + t.String() + " (no exported fields)"}
		}
	}
	return func(e *encodeState, v reflect.Value) error {
		if err := e.enter(); err != nil {
			return err
		}
		e.open(tObject)
		at := len(e.b)
		e.b = append(e.b, 0, 0, 0, 0)
		n := uint32(0)
		for i := range fields {
			f := &fields[i]
			fv, ok := fieldByIndex(v, f.index)
			if !ok || f.omitEmpty && fv.IsZero() {
				continue
			}
			n++
			e.str(f.name)
			if err := encoderOf(f.typ)(e, fv); err != nil {
				return err
			}
		}
		binary.LittleEndian.PutUint32(e.b[at:], n)
		e.leave()
		return nil
	}
}

type field struct {
	name      string
	index     []int
	typ       reflect.Type
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type → []field

// fieldsOf lists the fields a struct crosses with, named as encoding/json
// names them: its exported fields, those of embedded structs promoted.
func fieldsOf(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for _, sub := range fieldsOf(ft) {
					sub.index = append([]int{i}, sub.index...)
					out = append(out, sub)
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name: name, index: []int{i}, typ: f.Type, omitEmpty: opts == "omitempty"})
	}
	fieldCache.Store(t, out)
	return out
}

func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

package engine

import (
	"math"
	"strconv"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// A JSON host function (airlock.JSONFunc, the agent's tools) takes the
// JSON text of its argument list. The engine's JSON.stringify makes it in
// ~2.8 µs for [{n: 1, tag: "x"}]: it looks up toJSON on every object, lists
// each object's keys as a new array and keeps its stack in one. plainJSONList
// reads plain data through the engine's C API instead and writes the same
// text in a fraction of that. It takes only what JSON.stringify would turn
// into text without running any JavaScript: primitives, and objects and
// arrays of the realm's own prototypes whose properties are data
// properties, with no toJSON anywhere on their way. Anything else (a
// getter, a Proxy, a Date, a class instance, a hole, a BigInt, a cycle,
// deep nesting, long text) makes it give up having run nothing, and the
// engine's JSON.stringify makes the text as before: the text is the same
// either way, which FuzzPlainJSON checks.

const (
	plainJSONMaxDepth = 64
	plainJSONMaxBytes = 256 << 10
)

// jsonWalk is one walk of plainJSONList.
type jsonWalk struct {
	tls                *libc.TLS
	ctx                uintptr
	buf                []byte
	objProto, arrProto uintptr // the realm's Object.prototype and Array.prototype
	desc               uintptr // a JSPropertyDescriptor
	tab, n             uintptr // the out parameters of JS_GetOwnPropertyNames
	size               uintptr // a size_t
	thrown             bool    // the engine has an exception pending
}

// jsonResult is how a walk ended.
type jsonResult int8

const (
	jsonDone    jsonResult = iota // the text is in buf
	jsonDecline                   // not plain data: nothing ran, the engine makes the text
	jsonThrown                    // the engine threw (out of memory): its exception is pending
)

// realmProtos are the addresses of a realm's Object.prototype and
// Array.prototype, which its context holds as long as it lives.
type realmProtos struct{ object, array uintptr }

func protosOf(tls *libc.TLS, ctx uintptr) realmProtos {
	o := lib.XJS_GetClassProto(tls, ctx, lib.EJS_CLASS_OBJECT)
	a := lib.XJS_GetClassProto(tls, ctx, lib.EJS_CLASS_ARRAY)
	lib.XFreeValue(tls, ctx, o)
	lib.XFreeValue(tls, ctx, a)
	return realmProtos{objPointer(o), objPointer(a)}
}

// plainJSONList appends the JSON text of an array of vals, as
// JSON.stringify([...vals]) makes it, when they are plain data.
func plainJSONList(tls *libc.TLS, ctx uintptr, protos realmProtos, vals []lib.TJSValue, buf []byte) ([]byte, jsonResult) {
	const scratch = unsafe.Sizeof(lib.TJSPropertyDescriptor{}) + 3*8
	p := tls.Alloc(int(scratch))
	defer tls.Free(int(scratch))
	w := jsonWalk{tls: tls, ctx: ctx, buf: buf, desc: p, objProto: protos.object, arrProto: protos.array}
	w.tab = p + unsafe.Sizeof(lib.TJSPropertyDescriptor{})
	w.n, w.size = w.tab+8, w.tab+16
	objProto := lib.TJSValue{Ftag: lib.EJS_TAG_OBJECT}
	*(*uintptr)(unsafe.Pointer(&objProto)) = protos.object
	arrProto := lib.TJSValue{Ftag: lib.EJS_TAG_OBJECT}
	*(*uintptr)(unsafe.Pointer(&arrProto)) = protos.array
	// toJSON on either prototype, or a prototype of Array.prototype's own,
	// would run code for every object or array.
	if w.hasOwn(objProto, lib.EJS_ATOM_toJSON) || w.hasOwn(arrProto, lib.EJS_ATOM_toJSON) ||
		w.proto(arrProto) != w.objProto {
		return buf, w.end(false)
	}
	w.buf = append(w.buf, '[')
	for i, v := range vals {
		if !w.element(i, v, 1) {
			return w.buf, w.end(false)
		}
	}
	w.buf = append(w.buf, ']')
	return w.buf, w.end(true)
}

func (w *jsonWalk) end(ok bool) jsonResult {
	switch {
	case w.thrown:
		return jsonThrown
	case !ok || len(w.buf) > plainJSONMaxBytes:
		return jsonDecline
	}
	return jsonDone
}

func objPointer(v lib.TJSValue) uintptr { return *(*uintptr)(unsafe.Pointer(&v)) }

// proto returns the address of an object's prototype, 0 for null.
func (w *jsonWalk) proto(obj lib.TJSValue) uintptr {
	p := lib.XJS_GetPrototype(w.tls, w.ctx, obj)
	defer lib.XFreeValue(w.tls, w.ctx, p)
	if p.Ftag != lib.EJS_TAG_OBJECT {
		return 0
	}
	return objPointer(p)
}

// hasOwn reports whether obj has an own property prop; an error counts as
// having it, and leaves thrown set.
func (w *jsonWalk) hasOwn(obj lib.TJSValue, prop lib.TJSAtom) bool {
	r := lib.XJS_GetOwnProperty(w.tls, w.ctx, 0, obj, prop)
	if r < 0 {
		w.thrown = true
	}
	return r != 0
}

// value writes v; skip reports a value an object leaves out (undefined, a
// symbol) and an array writes as null.
func (w *jsonWalk) value(v lib.TJSValue, depth int) (skip, ok bool) {
	switch v.Ftag {
	case lib.EJS_TAG_INT:
		w.buf = strconv.AppendInt(w.buf, int64(int32(*(*uint64)(unsafe.Pointer(&v)))), 10)
	case lib.EJS_TAG_FLOAT64:
		w.buf = appendJSNumber(w.buf, *(*float64)(unsafe.Pointer(&v)))
	case lib.EJS_TAG_BOOL:
		w.buf = strconv.AppendBool(w.buf, int32(*(*uint64)(unsafe.Pointer(&v))) != 0)
	case lib.EJS_TAG_NULL:
		w.buf = append(w.buf, "null"...)
	case lib.EJS_TAG_UNDEFINED, lib.EJS_TAG_SYMBOL:
		return true, true
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		return false, w.string(v)
	case lib.EJS_TAG_OBJECT:
		if depth >= plainJSONMaxDepth {
			return false, false
		}
		switch lib.XJS_GetClassID(w.tls, v) {
		case lib.EJS_CLASS_OBJECT:
			return false, w.object(v, depth+1)
		case lib.EJS_CLASS_ARRAY:
			return false, w.array(v, depth+1)
		}
		return false, false
	default: // a BigInt, or what the engine keeps to itself
		return false, false
	}
	return false, true
}

func (w *jsonWalk) string(v lib.TJSValue) bool {
	return w.quote(lib.XJS_ToCStringLen2(w.tls, w.ctx, w.size, v, 0))
}

// quote writes the engine's C string p, of the length at w.size, quoted,
// and frees it.
func (w *jsonWalk) quote(p uintptr) bool {
	if p == 0 {
		w.thrown = true
		return false
	}
	defer lib.XJS_FreeCString(w.tls, w.ctx, p)
	w.buf = appendJSONString(w.buf, unsafe.Slice((*byte)(cPointer(p)), *(*libc.Tsize_t)(cPointer(w.size))))
	return len(w.buf) <= plainJSONMaxBytes
}

// own reads the own data property prop of obj into *val (the caller frees
// it); ok is false when it is missing or an accessor.
func (w *jsonWalk) own(obj lib.TJSValue, prop lib.TJSAtom, val *lib.TJSValue) bool {
	r := lib.XJS_GetOwnProperty(w.tls, w.ctx, w.desc, obj, prop)
	if r <= 0 {
		w.thrown = r < 0
		return false
	}
	d := (*lib.TJSPropertyDescriptor)(cPointer(w.desc))
	lib.XFreeValue(w.tls, w.ctx, d.Fgetter)
	lib.XFreeValue(w.tls, w.ctx, d.Fsetter)
	if d.Fflags&lib.MJS_PROP_GETSET != 0 {
		lib.XFreeValue(w.tls, w.ctx, d.Fvalue)
		return false
	}
	*val = d.Fvalue
	return true
}

func (w *jsonWalk) object(obj lib.TJSValue, depth int) bool {
	if p := w.proto(obj); p != w.objProto && p != 0 {
		return false
	}
	if lib.XJS_GetOwnPropertyNames(w.tls, w.ctx, w.tab, w.n, obj, lib.MJS_GPN_STRING_MASK) < 0 {
		w.thrown = true
		return false
	}
	tab, n := *(*uintptr)(cPointer(w.tab)), *(*uint32)(cPointer(w.n))
	defer lib.XJS_FreePropertyEnum(w.tls, w.ctx, tab, n)
	props := unsafe.Slice((*lib.TJSPropertyEnum)(cPointer(tab)), n)
	for _, e := range props {
		if e.Fatom == lib.EJS_ATOM_toJSON { // enumerable or not, JSON.stringify calls it
			return false
		}
	}
	w.buf = append(w.buf, '{')
	first := true
	for _, e := range props {
		if e.Fis_enumerable == 0 {
			continue
		}
		var val lib.TJSValue
		if !w.own(obj, e.Fatom, &val) {
			return false
		}
		mark := len(w.buf)
		if !first {
			w.buf = append(w.buf, ',')
		}
		if !w.key(e.Fatom) {
			lib.XFreeValue(w.tls, w.ctx, val)
			return false
		}
		w.buf = append(w.buf, ':')
		skip, ok := w.value(val, depth)
		lib.XFreeValue(w.tls, w.ctx, val)
		if !ok {
			return false
		}
		if skip {
			w.buf = w.buf[:mark]
			continue
		}
		first = false
	}
	w.buf = append(w.buf, '}')
	return true
}

func (w *jsonWalk) key(atom lib.TJSAtom) bool {
	return w.quote(lib.XJS_AtomToCStringLen(w.tls, w.ctx, w.size, atom))
}

func (w *jsonWalk) array(arr lib.TJSValue, depth int) bool {
	if w.proto(arr) != w.arrProto || w.hasOwn(arr, lib.EJS_ATOM_toJSON) {
		return false
	}
	var length lib.TJSValue
	if !w.own(arr, lib.EJS_ATOM_length, &length) || length.Ftag != lib.EJS_TAG_INT {
		lib.XFreeValue(w.tls, w.ctx, length)
		return false
	}
	n := int(int32(*(*uint64)(unsafe.Pointer(&length))))
	if n > plainJSONMaxBytes/2 { // each element takes a byte and a comma
		return false
	}
	w.buf = append(w.buf, '[')
	for i := range n {
		atom := lib.XJS_NewAtomUInt32(w.tls, w.ctx, uint32(i))
		var val lib.TJSValue
		got := w.own(arr, atom, &val) // a hole would be read from the prototypes
		lib.XJS_FreeAtom(w.tls, w.ctx, atom)
		if !got {
			return false
		}
		ok := w.element(i, val, depth)
		lib.XFreeValue(w.tls, w.ctx, val)
		if !ok {
			return false
		}
	}
	w.buf = append(w.buf, ']')
	return true
}

// element writes the element i of an array: what an object leaves out is
// null.
func (w *jsonWalk) element(i int, v lib.TJSValue, depth int) bool {
	if i > 0 {
		w.buf = append(w.buf, ',')
	}
	skip, ok := w.value(v, depth)
	if skip {
		w.buf = append(w.buf, "null"...)
	}
	return ok
}

// appendJSNumber writes a number as JavaScript's Number.prototype.toString
// does, with null for what JSON has no number for.
func appendJSNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(b, "null"...)
	case f == 0:
		return append(b, '0') // also -0
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	// 1e-7 and 1e+21 where Go writes 1e-07 and 1e+21.
	n := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	if m := len(b); m-n >= 4 && b[m-4] == 'e' && b[m-3] == '-' && b[m-2] == '0' {
		b[m-2] = b[m-1]
		b = b[:m-1]
	}
	return b
}

// appendJSONString quotes text the engine wrote (UTF-8, with a lone
// surrogate as the three bytes of its code point) as JSON.stringify does:
// \uXXXX, in lower case, for control characters and lone surrogates.
func appendJSONString(b []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		var esc string
		var u rune = -1
		switch {
		case c == '"':
			esc = `\"`
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '\r':
			esc = `\r`
		case c == '\t':
			esc = `\t`
		case c == '\b':
			esc = `\b`
		case c == '\f':
			esc = `\f`
		case c < 0x20:
			u = rune(c)
		case c == 0xed && i+2 < len(s) && s[i+1] >= 0xa0 && s[i+1] <= 0xbf:
			u = 0xd000 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
		default:
			i++
			continue
		}
		b = append(b, s[start:i]...)
		if u < 0 {
			b = append(b, esc...)
			i++
		} else {
			b = append(b, '\\', 'u', hex[u>>12], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
			if u >= 0xd000 {
				i += 3
			} else {
				i++
			}
		}
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

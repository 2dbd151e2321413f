package airlock

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/js"
)

// The wire format carries values between Go and the sandbox's kernel
// (internal/engine/bootstrap.js) as JSON text. Strings, booleans, null and
// finite numbers other than -0 are themselves; everything else is an array
// whose first element is a tag:
//
//	["u"]                  undefined
//	["n", "NaN"|"Infinity"|"-Infinity"|"-0"]
//	["i", "123"]           bigint
//	["o", k1, v1, ...]     plain object            (gets an id)
//	["a", v1, ...]         dense array             (gets an id)
//	["h", len, k1, v1, ...] sparse array, or array with named properties:
//	                       a key is an index (a number) or a name (a string)
//	                                               (gets an id)
//	["m", k1, v1, ...]     Map                     (gets an id)
//	["s", v1, ...]         Set                     (gets an id)
//	["d", ms|null]         Date, null if invalid   (gets an id)
//	["x", kind, base64]    typed array             (gets an id)
//	["b", base64]          ArrayBuffer             (gets an id)
//	["e", name, message]   Error                   (gets an id)
//	["v", base64]          DataView                (gets an id)
//	["g", source, flags]   RegExp                  (gets an id)
//	["p", primitive]       boxed primitive         (gets an id)
//	["w", [u1, u2, ...]]   string with a lone surrogate: its UTF-16 code
//	                       units (Go holds it as WTF-8, see wtf8.go)
//	["r", id]              the object with that id, again
//	["f", id, name, json]  host function id (Go to sandbox only); json: true for
//	                       a JSONFunc, 2 for a function whose arguments are
//	                       shown or stored (report): see shownFunc
//
// Ids are given in the order the nodes appear in the text, so both sides
// number them the same way without writing them down. In the tree
// encodeTree builds, bytes are []byte, which encoding/json writes as base64.
//
// That tree is what encodeWire builds; it leaves as "J" and plain JSON when
// it is plain data, else as "B" and the base64 of the binary format
// (codec_binary.go, internal/qjs/shim/codec.c), which the shim decodes
// natively. Values coming out of the sandbox are encoded in C into the
// binary format, raw. decodeWire and wireCost take all three (JSON wire
// text of older copies included), told apart by their first byte.

// maxWireDepth bounds the nesting of a value crossing the boundary; JSON
// decoding on the Go side stops at the same depth.
const maxWireDepth = 10000

// shownFunc is a host function whose arguments are values to show or
// store, not to compute with: the built-in report. The sandbox encodes
// them as it encodes a result, dropping functions and symbols as
// JSON.stringify does (an array element or a Map value becomes undefined,
// an object property, a Map entry with such a key or a Set member is left
// out) where another host function's call would throw a DataCloneError.
type shownFunc func(v any)

var typeShownFunc = reflect.TypeFor[shownFunc]()

// A funcRegistrar gives a Go function an id the sandbox can call.
type funcRegistrar func(fn reflect.Value) (int, error)

var (
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
	typeError       = reflect.TypeFor[error]()
	typeAsync       = reflect.TypeFor[asyncFunc]()
	typeJSONFunc    = reflect.TypeFor[jsonFunc]()
	typeJSONMarsh   = reflect.TypeFor[json.Marshaler]()
)

// encodeWire encodes a Go value as wire text. Functions are registered with
// reg; a nil reg makes them an error.
//
// A value that is plain data (objects, arrays, strings, finite numbers,
// booleans, null; no repeated object) is sent as "J" followed by its plain
// JSON, which the kernel hands to the engine's native JSON.parse; any other
// as "B" and the base64 of the binary format, which the shim decodes.
func encodeWire(v any, reg funcRegistrar) (string, error) {
	tree, err := encodeTree(reflect.ValueOf(v), reg)
	if err != nil {
		return "", err
	}
	if plain, ok := plainJSON(tree); ok {
		return plain, nil
	}
	// Anything else crosses in the binary format, which the shim decodes
	// natively (codec.c), as base64 after a "B": the texts travel as
	// strings (a list of globals is JSON of them).
	bin, err := binaryTree(tree)
	if err != nil {
		return "", err
	}
	// Encoded straight after the "B": a copy of the text, not three.
	out := make([]byte, 1+base64.StdEncoding.EncodedLen(len(bin)))
	out[0] = 'B'
	base64.StdEncoding.Encode(out[1:], bin)
	return string(out), nil
}

// unwrapB64 returns the binary text of a "B" text, or false for another.
func unwrapB64(text string) (string, bool, error) {
	if len(text) == 0 || text[0] != 'B' {
		return "", false, nil
	}
	b, err := base64.StdEncoding.DecodeString(text[1:])
	if err != nil {
		return "", true, errMalformed
	}
	return string(b), true, nil
}

// plainJSON writes a wire tree as "J" and plain JSON, or reports false if the
// tree holds anything plain JSON cannot: a tagged value other than an object
// or an array, or a reference to an object seen before.
func plainJSON(tree any) (string, bool) {
	type frame struct {
		node []any
		i    int // next child
	}
	buf := []byte{'J'}
	var stack []frame
	write := func(v any) bool {
		switch x := v.(type) {
		case nil:
			buf = append(buf, "null"...)
		case bool:
			buf = strconv.AppendBool(buf, x)
		case string:
			buf = appendJSONString(buf, x)
		case int64:
			buf = strconv.AppendInt(buf, x, 10)
		case uint64:
			buf = strconv.AppendUint(buf, x, 10)
		case float64:
			buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
		case []any:
			switch x[0] {
			case "o":
				buf = append(buf, '{')
			case "a":
				buf = append(buf, '[')
			default:
				return false
			}
			stack = append(stack, frame{x, 1})
		default:
			return false
		}
		return true
	}
	if !write(tree) {
		return "", false
	}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		obj := f.node[0] == "o"
		if f.i >= len(f.node) {
			if obj {
				buf = append(buf, '}')
			} else {
				buf = append(buf, ']')
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if f.i > 1 {
			buf = append(buf, ',')
		}
		if obj {
			k, _ := f.node[f.i].(string)
			buf = append(appendJSONString(buf, k), ':')
			f.i++
		}
		child := f.node[f.i]
		f.i++
		if !write(child) {
			return "", false
		}
	}
	return string(buf), true
}

type encodeTask struct {
	v     reflect.Value
	dst   *any
	depth int
}

type identity struct {
	t   reflect.Type
	p   uintptr
	len int
}

// encodeTree builds the wire tree of a Go value without recursion.
func encodeTree(root reflect.Value, reg funcRegistrar) (any, error) {
	var out any
	stack := []encodeTask{{root, &out, 0}}
	seen := map[identity]int{}
	nextID := 0
	container := func(id identity, ok bool) (ref []any, isRef bool) {
		if ok {
			if n, found := seen[id]; found {
				return []any{"r", n}, true
			}
			seen[id] = nextID
		}
		nextID++
		return nil, false
	}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.depth > maxWireDepth {
			return nil, fmt.Errorf("airlock: value nested deeper than %d levels", maxWireDepth)
		}
		v := t.v
		for v.IsValid() && v.Kind() == reflect.Interface {
			if v.IsNil() {
				v = reflect.Value{}
				break
			}
			v = v.Elem()
		}
		// A nil pointer is null, whatever it points to (a *big.Int, a *Map,
		// an error, a json.Marshaler).
		if !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
			*t.dst = nil
			continue
		}
		typ := v.Type()
		push := func(node []any, children []reflect.Value, first int) {
			for i := len(children) - 1; i >= 0; i-- {
				stack = append(stack, encodeTask{children[i], &node[first+i], t.depth + 1})
			}
		}
		pushStride := func(node []any, children []reflect.Value, first, stride int) {
			for i := len(children) - 1; i >= 0; i-- {
				stack = append(stack, encodeTask{children[i], &node[first+i*stride], t.depth + 1})
			}
		}
		switch typ {
		case typeUndefined:
			*t.dst = []any{"u"}
			continue
		case typeTime:
			container(identity{}, false)
			// The zero Time is what an invalid Date arrives as.
			if d := v.Interface().(time.Time); d.IsZero() {
				*t.dst = []any{"d", nil}
			} else {
				*t.dst = []any{"d", float64(d.UnixMilli())}
			}
			continue
		case typeBigInt:
			*t.dst = []any{"i", v.Interface().(*big.Int).String()}
			continue
		case typeMap:
			if ref, ok := container(identity{typ, v.Pointer(), 0}, true); ok {
				*t.dst = ref
				continue
			}
			m := v.Interface().(*js.Map)
			node := make([]any, 1+2*len(m.Entries))
			node[0] = "m"
			children := make([]reflect.Value, 0, 2*len(m.Entries))
			for _, e := range m.Entries {
				children = append(children, reflect.ValueOf(&e.Key).Elem(), reflect.ValueOf(&e.Value).Elem())
			}
			*t.dst = node
			push(node, children, 1)
			continue
		case typeSet:
			if ref, ok := container(identity{typ, v.Pointer(), 0}, true); ok {
				*t.dst = ref
				continue
			}
			s := v.Interface().(*js.Set)
			node := make([]any, 1+len(s.Values))
			node[0] = "s"
			children := make([]reflect.Value, len(s.Values))
			for i := range s.Values {
				children[i] = reflect.ValueOf(&s.Values[i]).Elem()
			}
			*t.dst = node
			push(node, children, 1)
			continue
		case typeArrayBuffer:
			container(identity{}, false)
			*t.dst = []any{"b", v.Bytes()}
			continue
		case typeClamped:
			container(identity{}, false)
			*t.dst = []any{"x", "Uint8ClampedArray", v.Bytes()}
			continue
		case typeFloat16:
			container(identity{}, false)
			b := make([]byte, 0, 2*v.Len())
			for _, h := range v.Interface().(js.Float16Array) {
				b = binary.LittleEndian.AppendUint16(b, h)
			}
			*t.dst = []any{"x", "Float16Array", b}
			continue
		case typeDataView:
			container(identity{}, false)
			*t.dst = []any{"v", v.Bytes()}
			continue
		case typeRegExp:
			container(identity{}, false)
			re := v.Interface().(*js.RegExp)
			*t.dst = []any{"g", re.Source, re.Flags}
			continue
		case typeBoxed:
			container(identity{}, false)
			x, err := boxedWire(v.Interface().(*js.Boxed).Value)
			if err != nil {
				return nil, err
			}
			*t.dst = []any{"p", x}
			continue
		case typeArray:
			if ref, ok := container(identity{typ, v.Pointer(), 0}, true); ok {
				*t.dst = ref
				continue
			}
			a := v.Interface().(*js.Array)
			names := make([]string, 0, len(a.Props))
			for k := range a.Props {
				names = append(names, k)
			}
			sort.Strings(names)
			node := make([]any, 2, 2+2*(len(a.Elements)+len(names)))
			node[0], node[1] = "h", float64(len(a.Elements))
			children := make([]reflect.Value, 0, len(a.Elements)+len(names))
			for i := range a.Elements {
				node = append(node, float64(i), nil)
				children = append(children, reflect.ValueOf(&a.Elements[i]).Elem())
			}
			for _, k := range names {
				node = append(node, k, nil)
				children = append(children, reflect.ValueOf(a.Props[k]))
			}
			*t.dst = node
			pushStride(node, children, 3, 2)
			continue
		}
		if typ == typeAsync || typ == typeJSONFunc {
			if reg == nil {
				return nil, &js.CloneError{What: "a function"}
			}
			id, err := reg(v)
			if err != nil {
				return nil, err
			}
			*t.dst = []any{"f", id, "", isJSONFunc(v)}
			continue
		}
		if typ.Implements(typeError) {
			container(identity{}, false)
			name := "Error"
			msg := v.Interface().(error).Error()
			if ev, ok := v.Interface().(*js.ErrorValue); ok {
				name, msg = ev.Name, ev.Message
			}
			*t.dst = []any{"e", name, msg}
			continue
		}
		if typ.Implements(typeJSONMarsh) {
			b, err := v.Interface().(json.Marshaler).MarshalJSON()
			if err != nil {
				return nil, err
			}
			var x any
			if err := json.Unmarshal(b, &x); err != nil {
				return nil, err
			}
			stack = append(stack, encodeTask{reflect.ValueOf(&x).Elem(), t.dst, t.depth})
			continue
		}
		switch typ.Kind() {
		case reflect.Bool:
			*t.dst = v.Bool()
		case reflect.String:
			*t.dst = wireString(v.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			*t.dst = v.Int()
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			*t.dst = v.Uint()
		case reflect.Float32, reflect.Float64:
			*t.dst = wireNumber(v.Float())
		case reflect.Func:
			if v.IsNil() {
				*t.dst = nil
				continue
			}
			if reg == nil {
				return nil, &js.CloneError{What: "function " + typ.String()}
			}
			id, err := reg(v)
			if err != nil {
				return nil, err
			}
			if typ == typeShownFunc {
				*t.dst = []any{"f", id, "", 2}
			} else {
				*t.dst = []any{"f", id, ""}
			}
		case reflect.Pointer:
			id := identity{typ, v.Pointer(), 0}
			if n, found := seen[id]; found {
				*t.dst = []any{"r", n}
				continue
			}
			// The pointee is the object: it takes the id when it is visited,
			// which is next, so record the id it will get.
			if k := typ.Elem().Kind(); k == reflect.Struct || k == reflect.Map || k == reflect.Slice || k == reflect.Array {
				seen[id] = nextID
			}
			stack = append(stack, encodeTask{v.Elem(), t.dst, t.depth})
		case reflect.Slice, reflect.Array:
			if typ.Kind() == reflect.Slice && v.IsNil() {
				*t.dst = nil
				continue
			}
			if typ.Kind() == reflect.Slice {
				if name := typedWire[typ]; name != "" {
					container(identity{}, false)
					*t.dst = []any{"x", name, typedBytes(v)}
					continue
				}
			}
			if typ.Elem().Kind() == reflect.Uint8 {
				container(identity{}, false)
				var b []byte
				if typ.Kind() == reflect.Slice {
					b = v.Bytes()
				} else {
					b = make([]byte, v.Len())
					reflect.Copy(reflect.ValueOf(b), v)
				}
				*t.dst = []any{"x", "Uint8Array", b}
				continue
			}
			var id identity
			if typ.Kind() == reflect.Slice && v.Len() > 0 {
				id = identity{typ, v.Pointer(), v.Len()}
			}
			if ref, ok := container(id, id.p != 0); ok {
				*t.dst = ref
				continue
			}
			n := v.Len()
			node := make([]any, 1+n)
			node[0] = "a"
			*t.dst = node
			for i := n - 1; i >= 0; i-- {
				stack = append(stack, encodeTask{v.Index(i), &node[1+i], t.depth + 1})
			}
		case reflect.Map:
			if v.IsNil() {
				*t.dst = nil
				continue
			}
			if ref, ok := container(identity{typ, v.Pointer(), 0}, true); ok {
				*t.dst = ref
				continue
			}
			keys := v.MapKeys()
			if typ.Key().Kind() == reflect.String {
				sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
				node := make([]any, 1+2*len(keys))
				node[0] = "o"
				vals := make([]reflect.Value, len(keys))
				for i, k := range keys {
					node[1+2*i] = k.String()
					vals[i] = v.MapIndex(k)
				}
				*t.dst = node
				pushStride(node, vals, 2, 2)
				continue
			}
			sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
			node := make([]any, 1+2*len(keys))
			node[0] = "m"
			children := make([]reflect.Value, 0, 2*len(keys))
			for _, k := range keys {
				children = append(children, k, v.MapIndex(k))
			}
			*t.dst = node
			push(node, children, 1)
		case reflect.Struct:
			fields := structFields(typ)
			if len(fields) == 0 && typ.NumField() > 0 {
				return nil, &js.CloneError{What: "a value of type " + typ.String() + " (no exported fields)"}
			}
			container(identity{}, false)
			node := make([]any, 1, 1+2*len(fields))
			node[0] = "o"
			var vals []reflect.Value
			for _, f := range fields {
				fv, ok := fieldByIndex(v, f.index)
				if !ok || f.omitEmpty && fv.IsZero() {
					continue
				}
				node = append(node, f.name, nil)
				vals = append(vals, fv)
			}
			*t.dst = node
			pushStride(node, vals, 2, 2)
		default:
			return nil, &js.CloneError{What: "a value of type " + typ.String()}
		}
	}
	return out, nil
}

func wireNumber(f float64) any {
	switch {
	case math.IsNaN(f):
		return []any{"n", "NaN"}
	case math.IsInf(f, 1):
		return []any{"n", "Infinity"}
	case math.IsInf(f, -1):
		return []any{"n", "-Infinity"}
	case f == 0 && math.Signbit(f):
		return []any{"n", "-0"}
	}
	return f
}

// specialNumber is the number an "n" node names (wireNumber's names), or
// false for another name.
func specialNumber(name string) (float64, bool) {
	switch name {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	case "-0":
		return math.Copysign(0, -1), true
	}
	return 0, false
}

type field struct {
	name      string
	index     []int
	omitEmpty bool
}

// structFields lists the fields a struct crosses with, named as
// encoding/json names them.
func structFields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for _, sub := range structFields(ft) {
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
		out = append(out, field{name: name, index: []int{i}, omitEmpty: opts == "omitempty"})
	}
	return out
}

func cut(s, sep string) (string, string, bool) {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
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

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendJSONString(buf []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"':
			buf = append(buf, '\\', '"')
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// errValueTooLarge is returned for a value whose expansion on the host would
// pass the budget.
var errValueTooLarge = errors.New("airlock: value too large to cross the sandbox boundary")

type decodeTask struct {
	node  any
	ptr   *any
	m     map[string]any
	key   string
	depth int
}

// decodeWire decodes wire text into Go values without recursion over the
// value. budget bounds the elements allocated for sparse arrays and typed
// arrays, in elements.
func decodeWire(text string, budget int) (any, error) {
	if len(text) > budget {
		return nil, errValueTooLarge
	}
	if isBinary(text) {
		return decodeBinary(text, budget)
	}
	if bin, ok, err := unwrapB64(text); ok {
		if err != nil {
			return nil, err
		}
		return decodeBinary(bin, budget)
	}
	var tree any
	if err := json.Unmarshal([]byte(text), &tree); err != nil {
		return nil, fmt.Errorf("airlock: malformed value from the sandbox: %w", err)
	}
	budget -= len(text)
	var out any
	var refs []any
	stack := []decodeTask{{node: tree, ptr: &out}}
	set := func(t decodeTask, v any) {
		if t.ptr != nil {
			*t.ptr = v
		} else {
			t.m[t.key] = v
		}
	}
	// push queues a child, or sets it at once if it is a primitive: an array
	// of a million numbers queues nothing.
	push := func(t decodeTask) {
		switch t.node.(type) {
		case nil, bool, float64, string:
			set(t, t.node)
			return
		}
		stack = append(stack, t)
	}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		node, ok := t.node.([]any)
		if !ok {
			switch t.node.(type) {
			case nil, bool, float64, string:
				set(t, t.node)
				continue
			}
			return nil, errMalformed
		}
		if len(node) == 0 {
			return nil, errMalformed
		}
		tag, _ := node[0].(string)
		switch tag {
		case "u":
			set(t, js.Undefined{})
		case "n":
			s, _ := str(node, 1)
			f, ok := specialNumber(s)
			if !ok {
				return nil, errMalformed
			}
			set(t, f)
		case "i":
			s, _ := str(node, 1)
			if len(s) > budget {
				return nil, errValueTooLarge
			}
			n, ok := new(big.Int).SetString(s, 10)
			if !ok {
				return nil, errMalformed
			}
			set(t, n)
		case "r":
			f, ok := num(node, 1)
			if !ok || f < 0 || int(f) >= len(refs) {
				return nil, errMalformed
			}
			set(t, refs[int(f)])
		case "o":
			if len(node)%2 != 1 {
				return nil, errMalformed
			}
			m := make(map[string]any, (len(node)-1)/2)
			refs = append(refs, m)
			set(t, m)
			for i := len(node) - 2; i >= 1; i -= 2 {
				k, ok := node[i].(string)
				if !ok {
					return nil, errMalformed
				}
				push(decodeTask{node: node[i+1], m: m, key: k, depth: t.depth + 1})
			}
		case "a":
			a := make([]any, len(node)-1)
			refs = append(refs, a)
			set(t, a)
			for i := len(a) - 1; i >= 0; i-- {
				push(decodeTask{node: node[i+1], ptr: &a[i], depth: t.depth + 1})
			}
		case "h":
			f, ok := num(node, 1)
			if !ok || f < 0 || f != math.Trunc(f) || len(node)%2 != 0 {
				return nil, errMalformed
			}
			if f*16 > float64(budget) {
				return nil, fmt.Errorf("%w: a sparse array of length %.0f", errValueTooLarge, f)
			}
			budget -= int(f) * 16
			a := make([]any, int(f))
			for i := range a {
				a[i] = js.Undefined{}
			}
			// Named properties make it an *Array.
			var named *js.Array
			for i := 2; i < len(node); i += 2 {
				if _, ok := node[i].(string); ok {
					named = &js.Array{Elements: a, Props: map[string]any{}}
					break
				}
			}
			if named != nil {
				refs = append(refs, named)
				set(t, named)
			} else {
				refs = append(refs, a)
				set(t, a)
			}
			for i := len(node) - 2; i >= 2; i -= 2 {
				if k, ok := node[i].(string); ok {
					push(decodeTask{node: node[i+1], m: named.Props, key: k, depth: t.depth + 1})
					continue
				}
				idx, ok := num(node, i)
				if !ok || idx < 0 || int(idx) >= len(a) {
					return nil, errMalformed
				}
				push(decodeTask{node: node[i+1], ptr: &a[int(idx)], depth: t.depth + 1})
			}
		case "m":
			if len(node)%2 != 1 {
				return nil, errMalformed
			}
			m := &js.Map{Entries: make([]js.MapEntry, (len(node)-1)/2)}
			refs = append(refs, m)
			set(t, m)
			for i := len(m.Entries) - 1; i >= 0; i-- {
				push(decodeTask{node: node[2+2*i], ptr: &m.Entries[i].Value, depth: t.depth + 1})
				push(decodeTask{node: node[1+2*i], ptr: &m.Entries[i].Key, depth: t.depth + 1})
			}
		case "s":
			s := &js.Set{Values: make([]any, len(node)-1)}
			refs = append(refs, s)
			set(t, s)
			for i := len(s.Values) - 1; i >= 0; i-- {
				push(decodeTask{node: node[1+i], ptr: &s.Values[i], depth: t.depth + 1})
			}
		case "d":
			var d time.Time // an invalid Date is the zero Time
			if f, ok := num(node, 1); ok {
				d = time.UnixMilli(int64(f)).UTC()
			}
			refs = append(refs, d)
			set(t, d)
		case "x":
			kind, _ := str(node, 1)
			b64, _ := str(node, 2)
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, errMalformed
			}
			v, err := typedArray(kind, b)
			if err != nil {
				return nil, err
			}
			refs = append(refs, v)
			set(t, v)
		case "b":
			b64, _ := str(node, 1)
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, errMalformed
			}
			refs = append(refs, js.ArrayBuffer(b))
			set(t, js.ArrayBuffer(b))
		case "e":
			name, _ := str(node, 1)
			msg, _ := str(node, 2)
			e := &js.ErrorValue{Name: name, Message: msg}
			refs = append(refs, e)
			set(t, e)
		case "v":
			b64, _ := str(node, 1)
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, errMalformed
			}
			refs = append(refs, js.DataView(b))
			set(t, js.DataView(b))
		case "g":
			src, ok1 := str(node, 1)
			flags, ok2 := str(node, 2)
			if !ok1 || !ok2 {
				return nil, errMalformed
			}
			re := &js.RegExp{Source: src, Flags: flags}
			refs = append(refs, re)
			set(t, re)
		case "p":
			if len(node) != 2 {
				return nil, errMalformed
			}
			x, err := boxedValue(node[1], budget)
			if err != nil {
				return nil, err
			}
			b := &js.Boxed{Value: x}
			refs = append(refs, b)
			set(t, b)
		case "w":
			s, ok := unitsString(node)
			if !ok {
				return nil, errMalformed
			}
			set(t, s)
		default:
			return nil, errMalformed
		}
	}
	return out, nil
}

func str(node []any, i int) (string, bool) {
	if i >= len(node) {
		return "", false
	}
	s, ok := node[i].(string)
	return s, ok
}

func num(node []any, i int) (float64, bool) {
	if i >= len(node) {
		return 0, false
	}
	f, ok := node[i].(float64)
	return f, ok
}

// typedArrays is, for each typed array, the Go slice type it arrives as
// (the package documentation's table) and the size of its element. The
// decoder, the encoder (typedWire), Inspect's typed array names and the
// bridge's argument conversion read it.
var typedArrays = []struct {
	name string
	typ  reflect.Type
	size int
}{
	{"Uint8Array", reflect.TypeFor[[]byte](), 1},
	{"Uint8ClampedArray", typeClamped, 1},
	{"Int8Array", reflect.TypeFor[js.Int8Array](), 1},
	{"Int16Array", reflect.TypeFor[js.Int16Array](), 2},
	{"Uint16Array", reflect.TypeFor[js.Uint16Array](), 2},
	{"Float16Array", typeFloat16, 2},
	{"Int32Array", reflect.TypeFor[js.Int32Array](), 4},
	{"Uint32Array", reflect.TypeFor[js.Uint32Array](), 4},
	{"Float32Array", reflect.TypeFor[js.Float32Array](), 4},
	{"Float64Array", reflect.TypeFor[js.Float64Array](), 8},
	{"BigInt64Array", reflect.TypeFor[js.BigInt64Array](), 8},
	{"BigUint64Array", reflect.TypeFor[js.BigUint64Array](), 8},
}

func typedArray(kind string, b []byte) (any, error) {
	ne := binary.LittleEndian // the sandbox's memory, wasm's byte order
	size := 0
	for _, a := range typedArrays {
		if a.name == kind {
			size = a.size
		}
	}
	if size == 0 || len(b)%size != 0 {
		return nil, errors.New("airlock: malformed typed array from the sandbox")
	}
	n := len(b) / size
	switch kind {
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

// typedWire names the typed array each of the package's typed array types
// crosses into the sandbox as (the package documentation's table); []byte
// is a Uint8Array, Uint8ClampedArray and Float16Array have cases of their
// own. Only these exact types: a plain []float64 or a user's named slice
// type is an Array of numbers, as encoding/json writes it.
var typedWire = func() map[reflect.Type]string {
	m := map[reflect.Type]string{}
	for _, a := range typedArrays {
		if a.typ.Elem().Kind() != reflect.Uint8 && a.typ != typeFloat16 {
			m[a.typ] = a.name
		}
	}
	return m
}()

// typedBytes is the little-endian bytes of a slice of one of typedWire's
// types.
func typedBytes(v reflect.Value) []byte {
	n := v.Len()
	size := int(v.Type().Elem().Size())
	b := make([]byte, n*size)
	le := binary.LittleEndian
	for i := 0; i < n; i++ {
		e := v.Index(i)
		switch e.Kind() {
		case reflect.Int8:
			b[i] = byte(e.Int())
		case reflect.Int16:
			le.PutUint16(b[2*i:], uint16(e.Int()))
		case reflect.Uint16:
			le.PutUint16(b[2*i:], uint16(e.Uint()))
		case reflect.Int32:
			le.PutUint32(b[4*i:], uint32(e.Int()))
		case reflect.Uint32:
			le.PutUint32(b[4*i:], uint32(e.Uint()))
		case reflect.Float32:
			le.PutUint32(b[4*i:], math.Float32bits(float32(e.Float())))
		case reflect.Float64:
			le.PutUint64(b[8*i:], math.Float64bits(e.Float()))
		case reflect.Int64:
			le.PutUint64(b[8*i:], uint64(e.Int()))
		case reflect.Uint64:
			le.PutUint64(b[8*i:], e.Uint())
		}
	}
	return b
}

// boxedWire is the wire form of a boxed primitive's value.
func boxedWire(x any) (any, error) {
	switch x := x.(type) {
	case bool:
		return x, nil
	case string:
		return wireString(x), nil
	case float64:
		return wireNumber(x), nil
	case float32:
		return wireNumber(float64(x)), nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case *big.Int:
		if x != nil {
			return []any{"i", x.String()}, nil
		}
	}
	return nil, &js.CloneError{What: fmt.Sprintf("a Boxed value of type %T", x)}
}

// boxedValue decodes the primitive of a boxed primitive.
func boxedValue(node any, budget int) (any, error) {
	switch x := node.(type) {
	case bool, string, float64:
		return x, nil
	case []any:
		tag, _ := str(x, 0)
		switch tag {
		case "n":
			s, _ := str(x, 1)
			if f, ok := specialNumber(s); ok {
				return f, nil
			}
		case "i":
			s, _ := str(x, 1)
			if len(s) > budget {
				return nil, errValueTooLarge
			}
			if n, ok := new(big.Int).SetString(s, 10); ok {
				return n, nil
			}
		case "w":
			if s, ok := unitsString(x); ok {
				return s, nil
			}
		}
	}
	return nil, errMalformed
}

// fromRaw converts a raw primitive that came out of the engine.
func fromRaw(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case engine.Undefined:
		return js.Undefined{}
	}
	return v
}

// toRaw reports whether a Go value can cross as a raw primitive, and its
// raw form.
func toRaw(v any) (any, bool) {
	// v itself is returned where it can be: x, boxed again, would be an
	// allocation per host call.
	switch x := v.(type) {
	case nil, bool:
		return v, true
	case string:
		// Text that is not UTF-8 (a lone surrogate's WTF-8) crosses
		// encoded.
		return v, utf8.ValidString(x)
	case js.Undefined:
		return engine.Undefined{}, true
	case float64:
		return v, true
	case int:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return x, true
		}
	}
	return nil, false
}

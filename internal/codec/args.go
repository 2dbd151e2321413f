package codec

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// An argument list arrives as binary text of an array. ArgsOf converts it
// to parameters of Go types straight from the text where it can: numbers,
// strings and booleans to parameters of their kinds, objects and arrays to
// structs, slices, maps and pointers by decoders built once per type
// (jsonDecoderOf), which give what encoding/json would give through
// Convert's route, without the decoded tree, its JSON text and the
// reflection of encoding/json. Whatever they are not sure to convert as
// Convert would (a repeated object, a value of a JavaScript type Go keeps
// in package js's types, a key that matches a field only in another case,
// a conversion that fails) sends the whole list the slow way: decoded,
// then each value converted by Convert, which also gives the errors.

// Params are the parameter types of a function, read by ArgsOf.
type Params struct {
	types []reflect.Type
	// direct is each parameter's decoder straight from the text, or nil.
	direct   []argDecoder
	variadic bool // the last parameter is ...T: types holds T
}

// argDecoder converts one value, at the reader's position, to dst (a
// settable zero value), as Convert converts its decoded value; it reports
// false when it cannot be sure to, with the reader left anywhere.
type argDecoder func(r *reader, dst reflect.Value) bool

// NewParams describes the parameters of types; with variadic, the last is
// the element type of a ...T parameter.
func NewParams(types []reflect.Type, variadic bool) *Params {
	p := &Params{types: types, variadic: variadic, direct: make([]argDecoder, len(types))}
	for i, t := range types {
		p.direct[i] = argDecoderOf(t)
	}
	return p
}

// A placeholder stands in the reader's list of objects (refs) for one
// that a direct decoder read into a Go type of its own: a reference to it
// sends the list the slow way.
type placeholder struct{}

// ArgsOf converts the argument list in binary text to the parameters, into
// dst (settable zero values, one for each parameter; for a variadic
// function, the values of the last parameter's elements are appended).
// The error of argument i (0-based) is reported with i, -1 for the list.
// budget is DecodeBinary's.
func (p *Params) ArgsOf(text string, budget int, dst []reflect.Value, elem func() reflect.Value) (out []reflect.Value, failed int, err error) {
	if out, ok := p.fast(text, budget, dst, elem); ok {
		return out, 0, nil
	}
	for _, d := range dst {
		d.SetZero()
	}
	v, err := DecodeBinary(text, budget)
	if err != nil {
		return dst, -1, err
	}
	list, _ := v.([]any)
	return p.Convert(list, dst, elem)
}

// ArgsOfBytes is ArgsOf of the argument list in bytes, which it reads in
// place: b must not change during the call, and nothing converted keeps
// it.
func (p *Params) ArgsOfBytes(b []byte, budget int, dst []reflect.Value, elem func() reflect.Value) (out []reflect.Value, failed int, err error) {
	return p.ArgsOf(unsafe.String(unsafe.SliceData(b), len(b)), budget, dst, elem)
}

// Convert converts decoded arguments to the parameters, as ArgsOf.
func (p *Params) Convert(list []any, dst []reflect.Value, elem func() reflect.Value) ([]reflect.Value, int, error) {
	n := len(p.types)
	if p.variadic {
		n--
	}
	for i := 0; i < n; i++ {
		if i < len(list) {
			if err := ConvertInto(list[i], dst[i]); err != nil {
				return dst, i, err
			}
		}
	}
	if p.variadic {
		for i := n; i < len(list); i++ {
			d := elem()
			if err := ConvertInto(list[i], d); err != nil {
				return dst, i, err
			}
			dst = append(dst, d)
		}
	}
	return dst, 0, nil
}

// fast is ArgsOf straight from the text, or false.
func (p *Params) fast(text string, budget int, dst []reflect.Value, elem func() reflect.Value) ([]reflect.Value, bool) {
	r := readers.Get().(*reader)
	defer func() {
		refs := r.refs
		clear(refs) // nothing of this call's values kept
		if cap(refs) > 1024 {
			refs = nil
		}
		*r = reader{refs: refs[:0]}
		readers.Put(r)
	}()
	if r.init(text, budget) != nil {
		return dst, false
	}
	tag, ok := r.u8()
	if !ok || tag != tArray || !r.count(tag) {
		return dst, false
	}
	count, ok := r.u32()
	if !ok || int64(count) > int64(r.left()) {
		return dst, false
	}
	n := len(p.types)
	if p.variadic {
		n--
	}
	for i := 0; i < int(count); i++ {
		var ok bool
		switch {
		case i < n:
			ok = p.direct[i](r, dst[i])
		case p.variadic:
			d := elem()
			ok = p.direct[n](r, d)
			dst = append(dst, d)
		default: // an argument the function does not take: decoded, as any other
			_, err := r.value()
			ok = err == nil
		}
		if !ok {
			return dst, false
		}
	}
	return dst, r.done() == nil
}

// readers holds the readers of argument lists between calls.
var readers = sync.Pool{New: func() any { return new(reader) }}

var argDecoders sync.Map // reflect.Type → argDecoder

func argDecoderOf(t reflect.Type) argDecoder {
	if f, ok := argDecoders.Load(t); ok {
		return f.(argDecoder)
	}
	f := newArgDecoder(t)
	argDecoders.Store(t, f)
	return f
}

// newArgDecoder builds the decoder of a parameter of type t.
func newArgDecoder(t reflect.Type) argDecoder {
	// An object or array to a type the decoded value would not be
	// assignable to goes through encoding/json in Convert: the direct
	// decoder gives the same.
	var composite jsonDecoder
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		if t != typeObject && t != typeList {
			composite = jsonDecoderOf(t)
		}
	}
	kind := t.Kind()
	return func(r *reader, dst reflect.Value) bool {
		tag, ok := r.u8()
		if !ok || !r.count(tag) {
			return false
		}
		switch {
		case kind == reflect.Interface:
		case tag == tUndefined || tag == tNull:
			return true
		case tag == tFalse || tag == tTrue:
			if kind == reflect.Bool {
				dst.SetBool(tag == tTrue)
				return true
			}
		case tag == tI32 || tag == tF64:
			f, ok := r.number(tag)
			if !ok {
				return false
			}
			switch kind {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				n, err := IntOf(f, t)
				if err != nil {
					return false
				}
				dst.SetInt(n)
				return true
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				n, err := UintOf(f, t)
				if err != nil {
					return false
				}
				dst.SetUint(n)
				return true
			case reflect.Float32, reflect.Float64:
				dst.SetFloat(f)
				return true
			}
			return false
		case tag == tString:
			if kind == reflect.String {
				s, ok := r.str()
				if !ok {
					return false
				}
				dst.SetString(s)
				return true
			}
		case tag == tObject || tag == tArray:
			if composite != nil {
				return composite(r, dst, tag, 1)
			}
		}
		// Any other value: decoded, then converted.
		r.unread(tag)
		v, err := r.value()
		if err != nil {
			return false
		}
		return ConvertInto(v, dst) == nil
	}
}

// unread steps back over a tag read and counted.
func (r *reader) unread(tag byte) {
	r.pos--
	r.values--
	if tag >= tObject && tag <= tBoxed {
		r.objects--
	}
}

// number reads the number after tag tI32 or tF64.
func (r *reader) number(tag byte) (float64, bool) {
	if tag == tI32 {
		n, ok := r.u32()
		return float64(int32(n)), ok
	}
	return r.f64()
}

// A jsonDecoder decodes the value of tag tag, read already, into dst (a
// settable zero value) as encoding/json would decode the JSON text of its
// decoded value (js.JSONValue's, then json.Marshal's) into dst: null,
// undefined, NaN and the infinities leave dst as it is; anything it cannot
// be sure of reports false.
type jsonDecoder func(r *reader, dst reflect.Value, tag byte, depth int) bool

var jsonDecoders sync.Map // reflect.Type → jsonDecoder (nil: none)

// jsonDecoderOf returns the decoder of type t, or nil for a type that
// encoding/json decodes by rules of its own (an Unmarshaler, a struct with
// embedded fields or options, a map with keys that are not strings …).
func jsonDecoderOf(t reflect.Type) jsonDecoder {
	if f, ok := jsonDecoders.Load(t); ok {
		return f.(jsonDecoder)
	}
	// A recursive type meets itself while it is built: it gets a decoder
	// that looks the built one up.
	var built jsonDecoder
	var once sync.Once
	lazy := jsonDecoder(func(r *reader, dst reflect.Value, tag byte, depth int) bool {
		once.Do(func() {
			f, _ := jsonDecoders.Load(t)
			built, _ = f.(jsonDecoder)
		})
		return built != nil && built(r, dst, tag, depth)
	})
	if f, loaded := jsonDecoders.LoadOrStore(t, lazy); loaded {
		return f.(jsonDecoder)
	}
	f := newJSONDecoder(t)
	jsonDecoders.Store(t, f)
	return f
}

var (
	typeUnmarshaler     = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
	typeTextUnmarshaler = reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()
)

// nulls reports whether a tag is one encoding/json's text holds null for,
// which leaves a value as it is: undefined, null, a NaN or an infinity.
func (r *reader) nulls(tag byte) (null, ok bool) {
	switch tag {
	case tUndefined, tNull:
		return true, true
	case tF64:
		if r.pos+8 > len(r.s) {
			return false, false
		}
		f := math.Float64frombits(uint64(le32(r.s[r.pos:])) | uint64(le32(r.s[r.pos+4:]))<<32)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			r.pos += 8
			return true, true
		}
	}
	return false, true
}

func newJSONDecoder(t reflect.Type) jsonDecoder {
	if t.Implements(typeUnmarshaler) || reflect.PointerTo(t).Implements(typeUnmarshaler) ||
		t.Implements(typeTextUnmarshaler) || reflect.PointerTo(t).Implements(typeTextUnmarshaler) {
		return nil
	}
	var f jsonDecoder
	switch t.Kind() {
	case reflect.Bool:
		f = func(r *reader, dst reflect.Value, tag byte, _ int) bool {
			if tag != tTrue && tag != tFalse {
				return false
			}
			dst.SetBool(tag == tTrue)
			return true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f = func(r *reader, dst reflect.Value, tag byte, _ int) bool {
			x, ok := r.integral(tag)
			if !ok || dst.OverflowInt(int64(x)) {
				return false
			}
			dst.SetInt(int64(x))
			return true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		f = func(r *reader, dst reflect.Value, tag byte, _ int) bool {
			x, ok := r.integral(tag)
			// A negative number, -0 too ("-0"), is no text ParseUint reads.
			if !ok || math.Signbit(x) || dst.OverflowUint(uint64(x)) {
				return false
			}
			dst.SetUint(uint64(x))
			return true
		}
	case reflect.Float64:
		f = func(r *reader, dst reflect.Value, tag byte, _ int) bool {
			if tag != tI32 && tag != tF64 {
				return false
			}
			x, ok := r.number(tag)
			dst.SetFloat(x)
			return ok
		}
	case reflect.Float32:
		f = func(r *reader, dst reflect.Value, tag byte, _ int) bool {
			if tag != tI32 && tag != tF64 {
				return false
			}
			x, ok := r.number(tag)
			if !ok {
				return false
			}
			// The float32 of JSON's text, which is not always the float32
			// of the float64.
			y, err := strconv.ParseFloat(strconv.FormatFloat(x, jsonFloatFormat(x), -1, 64), 32)
			if err != nil {
				return false
			}
			dst.SetFloat(y)
			return true
		}
	case reflect.String:
		f = func(r *reader, dst reflect.Value, tag byte, _ int) bool {
			if tag != tString {
				return false
			}
			s, ok := r.raw()
			if !ok || !utf8.ValidString(s) { // JSON's text has U+FFFD for each invalid byte
				return false
			}
			dst.SetString(strings.Clone(s))
			return true
		}
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return nil
		}
		f = func(r *reader, dst reflect.Value, tag byte, depth int) bool {
			v, ok := r.jsonAny(tag, depth)
			if ok && v != nil {
				dst.Set(reflect.ValueOf(v))
			}
			return ok
		}
	case reflect.Pointer:
		elem := jsonDecoderOf(t.Elem())
		if elem == nil {
			return nil
		}
		f = func(r *reader, dst reflect.Value, tag byte, depth int) bool {
			p := reflect.New(t.Elem())
			dst.Set(p)
			return elem(r, p.Elem(), tag, depth)
		}
	case reflect.Slice, reflect.Array:
		elem := jsonDecoderOf(t.Elem())
		if elem == nil {
			return nil
		}
		isSlice := t.Kind() == reflect.Slice
		f = func(r *reader, dst reflect.Value, tag byte, depth int) bool {
			if tag != tArray || depth >= MaxDepth {
				return false
			}
			n, ok := r.u32()
			if !ok || int64(n) > int64(r.left()) {
				return false
			}
			if isSlice {
				dst.Set(reflect.MakeSlice(t, int(n), int(n)))
			} else if int(n) > dst.Len() {
				return false // the elements past the array's would be read and dropped
			}
			for i := 0; i < int(n); i++ {
				if !r.jsonItem(elem, dst.Index(i), depth+1) {
					return false
				}
			}
			return true
		}
	case reflect.Map:
		kt := t.Key()
		if kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(typeTextUnmarshaler) {
			return nil
		}
		elem := jsonDecoderOf(t.Elem())
		if elem == nil {
			return nil
		}
		f = func(r *reader, dst reflect.Value, tag byte, depth int) bool {
			if tag != tObject || depth >= MaxDepth {
				return false
			}
			n, ok := r.u32()
			if !ok || int64(n) > int64(r.left()) {
				return false
			}
			m := reflect.MakeMapWithSize(t, int(n))
			dst.Set(m)
			for i := 0; i < int(n); i++ {
				k, ok := r.raw()
				if !ok || !utf8.ValidString(k) {
					return false
				}
				v := reflect.New(t.Elem()).Elem()
				if !r.jsonItem(elem, v, depth+1) {
					return false
				}
				m.SetMapIndex(reflect.ValueOf(strings.Clone(k)).Convert(kt), v)
			}
			return true
		}
	case reflect.Struct:
		f = structDecoder(t)
	}
	if f == nil {
		return nil
	}
	return func(r *reader, dst reflect.Value, tag byte, depth int) bool {
		null, ok := r.nulls(tag)
		if !ok {
			return false
		}
		return null || f(r, dst, tag, depth)
	}
}

// jsonItem reads the tag of an item and decodes it with f.
func (r *reader) jsonItem(f jsonDecoder, dst reflect.Value, depth int) bool {
	tag, ok := r.u8()
	if !ok || !r.count(tag) {
		return false
	}
	return f(r, dst, tag, depth)
}

// integral reads a number that JSON's text writes as integer digits
// exactly (below 2^53: the shortest text of a larger one may end in
// zeros that are not its digits).
func (r *reader) integral(tag byte) (float64, bool) {
	if tag != tI32 && tag != tF64 {
		return 0, false
	}
	x, ok := r.number(tag)
	return x, ok && x == math.Trunc(x) && math.Abs(x) < 1<<53
}

// jsonFloatFormat is the format encoding/json writes a float64 in.
func jsonFloatFormat(f float64) byte {
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return 'e'
	}
	return 'f'
}

// jsonAny decodes the value of tag tag, read already, as encoding/json
// decodes its JSON text into an any: nil, bool, float64, string, []any and
// map[string]any.
func (r *reader) jsonAny(tag byte, depth int) (any, bool) {
	switch tag {
	case tUndefined, tNull:
		return nil, true
	case tFalse, tTrue:
		return tag == tTrue, true
	case tI32, tF64:
		x, ok := r.number(tag)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, ok
		}
		return x, ok
	case tString:
		s, ok := r.raw()
		if !ok || !utf8.ValidString(s) {
			return nil, false
		}
		return strings.Clone(s), true
	case tObject, tArray:
		if depth >= MaxDepth {
			return nil, false
		}
		n, ok := r.u32()
		if !ok || int64(n) > int64(r.left()) {
			return nil, false
		}
		if tag == tArray {
			a := make([]any, n)
			for i := range a {
				t, ok := r.u8()
				if !ok || !r.count(t) {
					return nil, false
				}
				if a[i], ok = r.jsonAny(t, depth+1); !ok {
					return nil, false
				}
			}
			return a, true
		}
		m := make(map[string]any, n)
		for i := 0; i < int(n); i++ {
			k, ok := r.raw()
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			t, ok := r.u8()
			if !ok || !r.count(t) {
				return nil, false
			}
			v, ok := r.jsonAny(t, depth+1)
			if !ok {
				return nil, false
			}
			m[strings.Clone(k)] = v
		}
		return m, true
	}
	return nil, false
}

// jsonField is a field a struct's JSON decoder sets.
type jsonField struct {
	name  string
	index int
	dec   jsonDecoder
}

// structDecoder decodes an object into a struct whose fields encoding/json
// finds by the plain rules: exported fields, no embedded ones, names from
// the field or its tag, no options but omitempty, no two alike.
func structDecoder(t reflect.Type) jsonDecoder {
	var fields []jsonField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		tag, hasTag := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			return nil
		}
		if !hasTag || name == "" {
			name = f.Name
		} else if !plainName(name) {
			return nil
		}
		dec := jsonDecoderOf(f.Type)
		if dec == nil {
			return nil
		}
		for _, g := range fields {
			if strings.EqualFold(g.name, name) {
				return nil // encoding/json's rules for names alike
			}
		}
		fields = append(fields, jsonField{name, i, dec})
	}
	return func(r *reader, dst reflect.Value, tag byte, depth int) bool {
		if tag != tObject || depth >= MaxDepth {
			return false
		}
		n, ok := r.u32()
		if !ok || int64(n) > int64(r.left()) {
			return false
		}
	keys:
		for i := 0; i < int(n); i++ {
			k, ok := r.raw()
			if !ok {
				return false
			}
			for j := range fields {
				if fields[j].name == k {
					if !r.jsonItem(fields[j].dec, dst.Field(fields[j].index), depth+1) {
						return false
					}
					continue keys
				}
			}
			if !utf8.ValidString(k) {
				return false
			}
			for j := range fields {
				if strings.EqualFold(fields[j].name, k) {
					return false // matched in another case, by encoding/json's rules
				}
			}
			if !r.skip(depth + 1) {
				return false
			}
		}
		return true
	}
}

// plainName reports whether a tag's name is one encoding/json takes as it
// is.
func plainName(s string) bool {
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.', c == '$':
		default:
			return false
		}
	}
	return true
}

// skip reads a value that a struct has no field for: one of plain data,
// as jsonAny reads it (its strings not checked: their text is not kept).
func (r *reader) skip(depth int) bool {
	tag, ok := r.u8()
	if !ok || !r.count(tag) {
		return false
	}
	switch tag {
	case tUndefined, tNull, tFalse, tTrue:
		return true
	case tI32:
		_, ok := r.u32()
		return ok
	case tF64:
		_, ok := r.f64()
		return ok
	case tString:
		_, ok := r.raw()
		return ok
	case tObject, tArray:
		if depth >= MaxDepth {
			return false
		}
		n, ok := r.u32()
		if !ok || int64(n) > int64(r.left()) {
			return false
		}
		for i := 0; i < int(n); i++ {
			if tag == tObject {
				if _, ok := r.raw(); !ok {
					return false
				}
			}
			if !r.skip(depth + 1) {
				return false
			}
		}
		return true
	}
	return false
}

// Package inspect is the engine of Airlock's formatter: it shows a value as
// Node's console.log shows its arguments (util.inspect, on one line), for a
// person or a model to read. The root package's Inspect and InspectOptions
// are its public face, and their documentation holds the table of forms;
// this package is how it is done: a printer over the values the codec
// produces (float64, string, map[string]any, []any and the types of package
// js) without reflection, and over other Go values by kind.
//
// Every text is bounded: in depth, in items, in characters of a string and
// in bytes ([Options]). A cycle is shown as Node shows it (<ref *1> ...
// [Circular *1]), a container shared without a cycle is shown each time it
// is met, and the work is bounded by the bound on bytes whatever the shape.
//
// # Concurrency
//
// [Format] and [Line] may be called from any goroutine; they read the value
// and never change it.
package inspect

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/js"
)

// Defaults of [Options], the root's DefaultInspect* and MaxInspectDepth.
const (
	DefaultDepth        = 8
	DefaultArrayLength  = 100
	DefaultStringLength = 10000
	DefaultBytes        = 4 << 20
	MaxDepth            = 1000
)

// Options bound what [Format] shows, as the root's InspectOptions (whose
// fields they mirror and whose documentation holds their meaning): the
// zero value means the defaults, a negative field means 0, and Depth is
// capped at MaxDepth.
type Options struct {
	Depth           int
	MaxArrayLength  int
	MaxStringLength int
	MaxBytes        int
	QuoteString     bool
	// Named, when set, names an error value that is shown as a JavaScript
	// error, [Name: message], rather than as a Go error, [Error: text]: the
	// root's *ScriptError. ok false means a Go error.
	Named func(err error) (name, message string, ok bool)
}

// Format formats v within o's bounds. It never fails, never panics on a
// value that crossed from the sandbox, and never recurses deeper than the
// depth bound.
func Format(v any, o Options) string {
	p := &printer{
		depth:    bound(o.Depth, DefaultDepth),
		items:    bound(o.MaxArrayLength, DefaultArrayLength),
		chars:    bound(o.MaxStringLength, DefaultStringLength),
		limit:    bound(o.MaxBytes, DefaultBytes),
		active:   map[refID]int{},
		quoteTop: o.QuoteString,
		named:    o.Named,
	}
	if p.depth > MaxDepth {
		p.depth = MaxDepth
	}
	if s, ok := v.(string); ok && !o.QuoteString {
		if len(s) <= p.limit {
			return s
		}
		p.buf = append(p.buf, s...)
	} else {
		p.any(v, 0)
	}
	return p.text()
}

// Line formats console arguments as one line, as Node's console does:
// strings as they are, other values as [Format] shows them with the
// defaults, joined by spaces.
func Line(args []any, named func(error) (string, string, bool)) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = Format(a, Options{Named: named})
	}
	return strings.Join(parts, " ")
}

func bound(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// refID names a container for cycle detection: its address, type and,
// for slices, length (a slice and a shorter one of the same array are
// different values).
type refID struct {
	p   uintptr
	t   reflect.Type
	len int
}

// insertion is text to put at an offset of the buffer at the end: the
// "<ref *N> " of an object a cycle points back to, known only once its
// contents are written.
type insertion struct {
	at   int
	text string
}

type printer struct {
	buf                 []byte
	depth, items, chars int
	limit               int
	full                bool
	quoteTop            bool
	named               func(error) (string, string, bool)
	active              map[refID]int // containers being written, by their place on the path
	circular            map[refID]int // containers a cycle points back to: their *N
	inserts             []insertion
	insertedBytes       int
}

var (
	inspTime      = reflect.TypeFor[time.Time]()
	inspBig       = reflect.TypeFor[*big.Int]()
	inspRaw       = reflect.TypeFor[json.RawMessage]()
	inspNumber    = reflect.TypeFor[json.Number]()
	inspError     = reflect.TypeFor[error]()
	inspUndefined = reflect.TypeFor[js.Undefined]()
	inspSliceAny  = reflect.TypeFor[[]any]()
	inspMapAny    = reflect.TypeFor[map[string]any]()
)

func (p *printer) text() string {
	out := p.buf
	if len(p.inserts) > 0 {
		sort.SliceStable(p.inserts, func(i, j int) bool { return p.inserts[i].at < p.inserts[j].at })
		out = make([]byte, 0, len(p.buf)+p.insertedBytes)
		last := 0
		for _, in := range p.inserts {
			out = append(out, p.buf[last:in.at]...)
			out = append(out, in.text...)
			last = in.at
		}
		out = append(out, p.buf[last:]...)
	}
	if len(out) > p.limit || p.full {
		n := min(p.limit, len(out))
		for n > 0 && n < len(out) && !utf8.RuneStart(out[n]) {
			n--
		}
		out = append(out[:n:n], "... [truncated: more than "+strconv.Itoa(p.limit)+" bytes]"...)
	}
	return string(out)
}

// over reports whether the text has passed its bound; formatting stops.
func (p *printer) over() bool {
	if !p.full && len(p.buf)+p.insertedBytes > p.limit {
		p.full = true
	}
	return p.full
}

func (p *printer) str(s string) { p.buf = append(p.buf, s...) }

// any writes x, a value level levels below the top: the kinds values from
// the sandbox have without reflection, the rest through value.
func (p *printer) any(x any, level int) {
	if p.over() {
		return
	}
	switch y := x.(type) {
	case nil:
		p.str("null")
	case string:
		if level == 0 && !p.quoteTop {
			p.str(y)
		} else {
			p.quoted(y, true)
		}
	case float64:
		p.str(jsNumber(y))
	case bool:
		p.str(strconv.FormatBool(y))
	case map[string]any:
		p.objectAny(y, level)
	case []any:
		p.arrayAny(y, level)
	default:
		p.value(reflect.ValueOf(x), level)
	}
}

func (p *printer) arrayAny(a []any, level int) {
	if len(a) == 0 {
		p.str("[]")
		return
	}
	id := refID{p: reflect.ValueOf(a).Pointer(), t: inspSliceAny, len: len(a)}
	if !p.enter(id, level, "Array") {
		return
	}
	start := len(p.buf)
	p.list("[", "]", len(a), min(len(a), p.items), func(i int) { p.any(a[i], level+1) })
	p.leave(id, start)
}

func (p *printer) objectAny(m map[string]any, level int) {
	if len(m) == 0 {
		p.str("{}")
		return
	}
	id := refID{p: reflect.ValueOf(m).Pointer(), t: inspMapAny}
	if !p.enter(id, level, "Object") {
		return
	}
	start := len(p.buf)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	p.list("{", "}", len(keys), len(keys), func(i int) {
		p.key(keys[i])
		p.any(m[keys[i]], level+1)
	})
	p.leave(id, start)
}

// value writes v, a value level levels below the top.
func (p *printer) value(v reflect.Value, level int) {
	if p.over() {
		return
	}
	if !v.IsValid() {
		p.str("null")
		return
	}
	t := v.Type()
	switch t {
	case inspUndefined:
		p.str("undefined")
		return
	case inspTime:
		p.str(isoDate(v.Interface().(time.Time)))
		return
	case inspBig:
		if v.IsNil() {
			p.str("null")
			return
		}
		p.str(v.Interface().(*big.Int).String() + "n")
		return
	case inspRaw:
		raw := v.Interface().(json.RawMessage)
		if len(raw) == 0 {
			p.str("null")
		} else {
			p.buf = append(p.buf, raw...)
		}
		return
	case inspNumber:
		p.str(v.String())
		return
	case reflect.TypeFor[*js.ErrorValue]():
		if v.IsNil() {
			p.str("null")
			return
		}
		e := v.Interface().(*js.ErrorValue)
		p.errorText(e.Name, e.Message)
		return
	case reflect.TypeFor[js.ArrayBuffer]():
		p.arrayBuffer(v.Bytes(), level)
		return
	case reflect.TypeFor[js.DataView]():
		if !p.enter(refID{}, level, "DataView") {
			return
		}
		p.str("DataView { byteLength: " + strconv.Itoa(v.Len()) + ", byteOffset: 0, buffer: ")
		p.arrayBuffer(v.Bytes(), level+1)
		p.str(" }")
		return
	case reflect.TypeFor[*js.RegExp]():
		if v.IsNil() {
			p.str("null")
			return
		}
		re := v.Interface().(*js.RegExp)
		p.str("/" + re.Source + "/" + re.Flags)
		return
	case reflect.TypeFor[*js.Boxed]():
		if v.IsNil() {
			p.str("null")
			return
		}
		p.boxed(v.Interface().(*js.Boxed).Value, level)
		return
	case reflect.TypeFor[*js.Array]():
		if v.IsNil() {
			p.str("null")
			return
		}
		p.namedArray(v, v.Interface().(*js.Array), level)
		return
	case reflect.TypeFor[*js.Map]():
		if v.IsNil() {
			p.str("null")
			return
		}
		p.mapValue(v, v.Interface().(*js.Map), level)
		return
	case reflect.TypeFor[*js.Set]():
		if v.IsNil() {
			p.str("null")
			return
		}
		p.setValue(v, v.Interface().(*js.Set), level)
		return
	}
	switch t.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			p.str("null")
			return
		}
		if v.CanInterface() {
			p.any(v.Elem().Interface(), level)
			return
		}
		p.value(v.Elem(), level)
	case reflect.Pointer:
		if v.IsNil() {
			p.str("null")
			return
		}
		if t.Implements(inspError) {
			p.goError(v)
			return
		}
		id := refID{p: v.Pointer(), t: t}
		if p.cycle(id) {
			return
		}
		start := len(p.buf)
		p.active[id] = level
		p.value(v.Elem(), level)
		p.leave(id, start)
	case reflect.Bool:
		p.str(strconv.FormatBool(v.Bool()))
	case reflect.String:
		if level == 0 && !p.quoteTop {
			p.str(v.String())
		} else {
			p.quoted(v.String(), true)
		}
	case reflect.Float64:
		p.str(jsNumber(v.Float()))
	case reflect.Float32:
		p.str(jsNumber(v.Float()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.str(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		p.str(strconv.FormatUint(v.Uint(), 10))
	case reflect.Slice:
		if name := codec.TypedName(t); name != "" {
			p.typed(name, v, level)
			return
		}
		if v.IsNil() && t != reflect.TypeFor[[]any]() {
			p.str("null")
			return
		}
		p.array(v, level)
	case reflect.Array:
		p.array(v, level)
	case reflect.Map:
		if v.IsNil() && t != reflect.TypeFor[map[string]any]() {
			p.str("null")
			return
		}
		if t.Key().Kind() == reflect.String {
			p.object(v, level)
		} else {
			p.goMap(v, level)
		}
	case reflect.Struct:
		if t.Implements(inspError) {
			p.goError(v)
			return
		}
		p.structValue(v, level)
	case reflect.Func:
		p.str("[Function: " + t.String() + "]")
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		p.str("(" + jsNumber(real(c)) + "+" + jsNumber(imag(c)) + "i)")
	default:
		p.str("[" + t.String() + "]")
	}
}

// cycle reports whether id is being written further up the path, and if
// so writes the reference to it.
func (p *printer) cycle(id refID) bool {
	if _, ok := p.active[id]; !ok {
		return false
	}
	if p.circular == nil {
		p.circular = map[refID]int{}
	}
	n, ok := p.circular[id]
	if !ok {
		n = len(p.circular) + 1
		p.circular[id] = n
	}
	p.str("[Circular *" + strconv.Itoa(n) + "]")
	return true
}

// enter starts a container: it reports false, having written what
// stands for it, when it is a cycle or deeper than the bound.
func (p *printer) enter(id refID, level int, name string) bool {
	if id.p != 0 && p.cycle(id) {
		return false
	}
	if level > p.depth {
		p.str("[" + name + "]")
		return false
	}
	if id.p != 0 {
		p.active[id] = level
	}
	return true
}

// leave ends a container that started at offset start.
func (p *printer) leave(id refID, start int) {
	if id.p == 0 {
		return
	}
	delete(p.active, id)
	if n, ok := p.circular[id]; ok {
		ref := "<ref *" + strconv.Itoa(n) + "> "
		p.inserts = append(p.inserts, insertion{start, ref})
		p.insertedBytes += len(ref)
	}
}

func idOf(v reflect.Value) refID {
	switch v.Kind() {
	case reflect.Map, reflect.Pointer:
		return refID{p: v.Pointer(), t: v.Type()}
	case reflect.Slice:
		if v.Len() == 0 {
			return refID{}
		}
		return refID{p: v.Pointer(), t: v.Type(), len: v.Len()}
	}
	return refID{}
}

// list writes the entries of a container between open and close, as
// "open a, b close", with "... N more items" for the rest.
func (p *printer) list(open, close string, n, shown int, each func(i int)) {
	if n == 0 {
		p.str(open + close)
		return
	}
	p.str(open + " ")
	for i := 0; i < shown; i++ {
		if i > 0 {
			p.str(", ")
		}
		each(i)
		if p.over() {
			return
		}
	}
	if rest := n - shown; rest > 0 {
		if shown > 0 {
			p.str(", ")
		}
		p.str(more(rest, "item"))
	}
	p.str(" " + close)
}

func more(n int, what string) string {
	s := "... " + strconv.Itoa(n) + " more " + what
	if n > 1 {
		s += "s"
	}
	return s
}

func (p *printer) array(v reflect.Value, level int) {
	n := v.Len()
	if n == 0 {
		p.str("[]")
		return
	}
	id := idOf(v)
	if !p.enter(id, level, "Array") {
		return
	}
	start := len(p.buf)
	p.list("[", "]", n, min(n, p.items), func(i int) { p.value(v.Index(i), level+1) })
	p.leave(id, start)
}

func (p *printer) typed(name string, v reflect.Value, level int) {
	n := v.Len()
	if n == 0 {
		p.str(name + "(0) []")
		return
	}
	if !p.enter(refID{}, level, name) {
		return
	}
	bigint := name == "BigInt64Array" || name == "BigUint64Array"
	p.list(name+"("+strconv.Itoa(n)+") [", "]", n, min(n, p.items), func(i int) {
		e := v.Index(i)
		switch {
		case name == "Float16Array":
			p.str(jsNumber(float64(halfToFloat(uint16(e.Uint())))))
		case e.CanInt():
			p.str(strconv.FormatInt(e.Int(), 10))
		case e.CanUint():
			p.str(strconv.FormatUint(e.Uint(), 10))
		default:
			p.str(jsNumber(e.Float()))
		}
		if bigint {
			p.str("n")
		}
	})
}

// boxed writes a boxed primitive as Node does: [Number: 1.5], [String: 's'].
func (p *printer) boxed(x any, level int) {
	name := "Number"
	switch x.(type) {
	case string:
		name = "String"
	case bool:
		name = "Boolean"
	case *big.Int:
		name = "BigInt"
	}
	p.str("[" + name + ": ")
	p.any(x, level+1)
	p.str("]")
}

// namedArray writes an array with named properties as Node does:
// [ 1, 2, total: 3 ].
func (p *printer) namedArray(v reflect.Value, a *js.Array, level int) {
	id := idOf(v)
	if !p.enter(id, level, "Array") {
		return
	}
	start := len(p.buf)
	keys := make([]string, 0, len(a.Props))
	for k := range a.Props {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	shown := min(len(a.Elements), p.items)
	n := shown + len(keys)
	p.list("[", "]", n+len(a.Elements)-shown, n, func(i int) {
		if i < shown {
			p.any(a.Elements[i], level+1)
			return
		}
		p.key(keys[i-shown])
		p.any(a.Props[keys[i-shown]], level+1)
	})
	p.leave(id, start)
}

func (p *printer) arrayBuffer(b []byte, level int) {
	if !p.enter(refID{}, level, "ArrayBuffer") {
		return
	}
	const hex = "0123456789abcdef"
	p.str("ArrayBuffer { [Uint8Contents]: <")
	shown := min(len(b), p.items)
	for i, c := range b[:shown] {
		if i > 0 {
			p.str(" ")
		}
		p.buf = append(p.buf, hex[c>>4], hex[c&15])
	}
	if rest := len(b) - shown; rest > 0 {
		p.str(" " + more(rest, "byte"))
	}
	p.str(">, byteLength: " + strconv.Itoa(len(b)) + " }")
}

func (p *printer) mapValue(v reflect.Value, m *js.Map, level int) {
	n := len(m.Entries)
	prefix := "Map(" + strconv.Itoa(n) + ") "
	if n == 0 {
		p.str(prefix + "{}")
		return
	}
	id := idOf(v)
	if !p.enter(id, level, "Map") {
		return
	}
	start := len(p.buf)
	p.list(prefix+"{", "}", n, min(n, p.items), func(i int) {
		p.any(m.Entries[i].Key, level+1)
		p.str(" => ")
		p.any(m.Entries[i].Value, level+1)
	})
	p.leave(id, start)
}

func (p *printer) setValue(v reflect.Value, s *js.Set, level int) {
	n := len(s.Values)
	prefix := "Set(" + strconv.Itoa(n) + ") "
	if n == 0 {
		p.str(prefix + "{}")
		return
	}
	id := idOf(v)
	if !p.enter(id, level, "Set") {
		return
	}
	start := len(p.buf)
	p.list(prefix+"{", "}", n, min(n, p.items), func(i int) { p.any(s.Values[i], level+1) })
	p.leave(id, start)
}

// object writes a map with string keys as an object, its keys in the order
// JavaScript gives integer keys (ascending) and then the rest sorted.
func (p *printer) object(v reflect.Value, level int) {
	if v.Len() == 0 {
		p.str("{}")
		return
	}
	id := idOf(v)
	if !p.enter(id, level, "Object") {
		return
	}
	start := len(p.buf)
	keys := make([]reflect.Value, 0, v.Len())
	iter := v.MapRange()
	for iter.Next() {
		keys = append(keys, iter.Key())
	}
	slices.SortFunc(keys, func(a, b reflect.Value) int { return compareKeys(a.String(), b.String()) })
	p.list("{", "}", len(keys), len(keys), func(i int) {
		p.key(keys[i].String())
		p.value(v.MapIndex(keys[i]), level+1)
	})
	p.leave(id, start)
}

// compareKeys orders object keys: array indices first, by value, then the
// others by their text.
func compareKeys(a, b string) int {
	ai, aok := arrayIndex(a)
	bi, bok := arrayIndex(b)
	switch {
	case aok && bok:
		return int(ai) - int(bi)
	case aok:
		return -1
	case bok:
		return 1
	}
	return strings.Compare(a, b)
}

func arrayIndex(s string) (int64, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n < math.MaxUint32
}

func (p *printer) goMap(v reflect.Value, level int) {
	n := v.Len()
	prefix := "Map(" + strconv.Itoa(n) + ") "
	if n == 0 {
		p.str(prefix + "{}")
		return
	}
	id := idOf(v)
	if !p.enter(id, level, "Map") {
		return
	}
	start := len(p.buf)
	keys := v.MapKeys()
	texts := make([]string, len(keys))
	for i, k := range keys {
		texts[i] = Format(k.Interface(), Options{Depth: -1, MaxBytes: 200, Named: p.named})
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return texts[order[i]] < texts[order[j]] })
	p.list(prefix+"{", "}", n, min(n, p.items), func(i int) {
		k := keys[order[i]]
		p.value(k, level+1)
		p.str(" => ")
		p.value(v.MapIndex(k), level+1)
	})
	p.leave(id, start)
}

// structValue writes a struct as an object of its exported fields, named
// as encoding/json names them.
func (p *printer) structValue(v reflect.Value, level int) {
	t := v.Type()
	type field struct {
		name string
		v    reflect.Value
	}
	var fields []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" && !strings.HasPrefix(tag, "-,") {
				continue
			}
			if n != "" {
				name = n
			}
		}
		fields = append(fields, field{name, v.Field(i)})
	}
	if len(fields) == 0 {
		p.str("{}")
		return
	}
	if !p.enter(refID{}, level, "Object") {
		return
	}
	p.list("{", "}", len(fields), len(fields), func(i int) {
		p.key(fields[i].name)
		p.value(fields[i].v, level+1)
	})
}

// goError writes a Go error value as an error: as a JavaScript error where
// Options.Named names it.
func (p *printer) goError(v reflect.Value) {
	if p.named != nil {
		if name, msg, ok := p.named(v.Interface().(error)); ok {
			p.errorText(name, msg)
			return
		}
	}
	var msg string
	func() {
		defer func() {
			if recover() != nil {
				msg = "(Error() panicked)"
			}
		}()
		msg = v.Interface().(error).Error()
	}()
	p.errorText("Error", msg)
}

func (p *printer) errorText(name, msg string) {
	s := name
	if name == "" {
		s = msg
	} else if msg != "" {
		s += ": " + msg
	}
	p.str("[" + s + "]")
}

func (p *printer) key(k string) {
	if isPlainKey(k) {
		p.str(k)
	} else {
		p.quoted(k, false)
	}
	p.str(": ")
}

// isPlainKey reports whether util.inspect shows a key without quotes.
func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// quoted writes s as util.inspect quotes a string: in single quotes, or
// double quotes or backticks when that spares escaping a quote; cut to the
// string bound if cut is set.
func (p *printer) quoted(s string, cut bool) {
	trailer := ""
	if cut {
		if n := utf8.RuneCountInString(s); n > p.chars {
			i, k := 0, 0
			for k < p.chars {
				_, size := utf8.DecodeRuneInString(s[i:])
				i += size
				k++
			}
			s = s[:i]
			trailer = more(n-p.chars, "character")
		}
	}
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 {
		if strings.IndexByte(s, '"') < 0 {
			quote = '"'
		} else if strings.IndexByte(s, '`') < 0 && !strings.Contains(s, "${") {
			quote = '`'
		}
	}
	p.buf = append(p.buf, quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			p.str(`\uFFFD`)
		case r == '\n':
			p.str(`\n`)
		case r == '\t':
			p.str(`\t`)
		case r == '\b':
			p.str(`\b`)
		case r == '\f':
			p.str(`\f`)
		case r == '\r':
			p.str(`\r`)
		case r == '\\':
			p.str(`\\`)
		case r == '\'' && quote == '\'':
			p.str(`\'`)
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			const hex = "0123456789ABCDEF"
			p.buf = append(p.buf, '\\', 'x', hex[r>>4], hex[r&15])
		default:
			p.buf = utf8.AppendRune(p.buf, r)
		}
		if len(p.buf) > p.limit {
			p.full = true
			return
		}
	}
	p.buf = append(p.buf, quote)
	p.str(trailer)
}

// jsNumber formats f as JavaScript's Number.prototype.toString does, and
// -0 as util.inspect does.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 { // exact integers: their digits are the shortest
		return strconv.FormatInt(int64(f), 10)
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// The shortest digits that round-trip, and the exponent: f = 0.d1d2... × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n := x + 1
	k := len(digits)
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		if n-1 >= 0 {
			s += "e+" + strconv.Itoa(n-1)
		} else {
			s += "e-" + strconv.Itoa(1-n)
		}
	}
	return sign + s
}

// isoDate formats t as Date.prototype.toISOString does; the zero Time,
// which an invalid Date becomes, as "Invalid Date".
func isoDate(t time.Time) string {
	if t.IsZero() {
		return "Invalid Date"
	}
	t = t.UTC()
	y := t.Year()
	var year string
	switch {
	case y >= 0 && y <= 9999:
		year = leftPad(strconv.Itoa(y), 4)
	case y < 0:
		year = "-" + leftPad(strconv.Itoa(-y), 6)
	default:
		year = "+" + leftPad(strconv.Itoa(y), 6)
	}
	return year + t.Format("-01-02T15:04:05.000Z")
}

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// halfToFloat converts IEEE 754 half-precision bits to a float32.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch exp {
	case 0:
		f := float32(frac) / 1024 / 16384
		if sign != 0 {
			return -f
		}
		return f
	case 31:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}

package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// stringifyVM is a plain engine VM (not a sandbox: it has eval) in which
// plainJSONList and JSON.stringify write the same values.
type stringifyVM struct {
	t  testing.TB
	vm *quickjs.VM
}

func newStringifyVM(t testing.TB) *stringifyVM {
	vm, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vm.Close() })
	if tlsOf(vm) == nil || contextOf(vm) == nil {
		t.Fatal("the quickjs wrapper changed its layout")
	}
	return &stringifyVM{t, vm}
}

// both evaluates expr once, then writes the list of its value with
// plainJSONList and with JSON.stringify; want is the text or the error of
// JSON.stringify. A global hits, if any, must not change in plainJSONList:
// it counts the calls of code in the value.
func (s *stringifyVM) both(expr string) (got string, how jsonResult, want string) {
	s.t.Helper()
	s.eval("globalThis.v = (" + expr + "); undefined")
	v, err := s.vm.EvalValue("v", quickjs.EvalGlobal)
	if err != nil {
		s.t.Fatal(err)
	}
	defer v.Free()
	const hits = `typeof hits === "number" ? hits : 0`
	before := s.eval(hits)
	tls, ctx := tlsOf(s.vm), uintptr(unsafe.Pointer(contextOf(s.vm)))
	buf, how := plainJSONList(tls, ctx, protosOf(tls, ctx), []lib.TJSValue{rawValue(v)}, nil)
	if after := s.eval(hits); after != before {
		s.t.Errorf("%s: plainJSONList ran code of the value", expr)
	}
	if how != jsonDone {
		return "", how, ""
	}
	r, err := s.vm.Eval(`(() => { try { return JSON.stringify([v]); } catch (e) { return "throws " + e.name; } })()`, quickjs.EvalGlobal)
	if err != nil {
		s.t.Fatal(err)
	}
	w, _ := r.(string)
	if r == nil {
		w = "undefined"
	}
	return string(buf), how, w
}

func (s *stringifyVM) eval(src string) any {
	s.t.Helper()
	r, err := s.vm.Eval(src, quickjs.EvalGlobal)
	if err != nil {
		s.t.Fatalf("%s: %v", src, err)
	}
	return r
}

func TestPlainJSON_SameTextAsStringify(t *testing.T) {
	s := newStringifyVM(t)
	for _, expr := range []string{
		`[]`, `[{}]`, `[1, -1, 2147483647, -2147483648, 2147483648]`,
		`[0.1, -0, 1e21, 1e-7, 1.5e-7, 1e-6, 123e-20, 5e-324, 1.7976931348623157e308, NaN, Infinity, -Infinity, 2**53 + 2]`,
		`[true, false, null, undefined, Symbol("s")]`,
		`{ a: undefined, b: Symbol(), c: 1 }`,
		`{ b: 1, a: 2, 10: 3, 2: 4, "01": 5, "-1": 6 }`,
		`["\"\\\/\b\f\n\r\t\u0000\u001f\u007f\u2028\u2029 ß€😀"]`,
		`["\ud800", "\udfff", "a\ud83d", "\ude00b", "\ud83d\ude00", "\udc00\ud800"]`,
		`{ "\ud800": 1, "k\n": 2, "😀": 3 }`,
		`"x".repeat(300) + "y".repeat(300)`,
		`Object.assign(Object.create(null), { a: 1 })`,
		`Object.defineProperty({ a: 1 }, "hidden", { value: 2, enumerable: false })`,
		`[[[[[[1]]]]], { a: { b: { c: [] } } }]`,
		`Math`,
		`new Array(3).fill(null)`,
	} {
		got, how, want := s.both(expr)
		if how != jsonDone {
			t.Errorf("%s: not taken as plain data (%d)", expr, how)
			continue
		}
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", expr, got, want)
		}
	}
}

// Whatever would run code, or is not plain data, is left to the engine,
// with nothing run.
func TestPlainJSON_DeclinesWithoutRunningCode(t *testing.T) {
	s := newStringifyVM(t)
	s.eval(`globalThis.hits = 0`)
	for _, expr := range []string{
		`{ get a() { hits++; return 1; } }`,
		`[{ toJSON() { hits++; return 1; } }]`,
		`Object.defineProperty({}, "toJSON", { value() { hits++; return 1; }, enumerable: false })`,
		`Object.defineProperty([1], "toJSON", { value() { hits++; return 1; } })`,
		`Object.defineProperty([], 0, { get() { hits++; return 1; }, enumerable: true })`,
		`new Proxy({}, { ownKeys() { hits++; return []; }, get() { hits++; } })`,
		`new Proxy([], { get() { hits++; } })`,
		`new (class A { constructor() { this.a = 1; } })()`,
		`new Date(0)`, `new Number(1)`, `new String("s")`, `new Map()`, `new Uint8Array(2)`, `/x/`,
		`[1, , 3]`, `() => 1`, `1n`, `{ a: 1n }`,
		`(() => { const c = {}; c.c = c; return c; })()`,
		`(() => { let a = []; for (let i = 0; i < 100; i++) a = [a]; return a; })()`,
		`["x".repeat(300000)]`,
		`(() => { const a = []; a.length = 2 ** 32 - 1; return a; })()`,
		`Object.create({ inherited: 1 })`,
	} {
		if got, how, _ := s.both(expr); how != jsonDecline {
			t.Errorf("%s: %d (%.40s), want a decline", expr, how, got)
		}
	}
}

// toJSON on the prototypes of every object or array, or a prototype of
// Array.prototype's own, makes every walk decline.
func TestPlainJSON_TamperedPrototypes(t *testing.T) {
	for _, tamper := range []string{
		`Object.prototype.toJSON = function () { hits++; return "P"; }`,
		`Object.defineProperty(Object.prototype, "toJSON", { get() { hits++; } })`,
		`Array.prototype.toJSON = function () { hits++; return "A"; }`,
		`Object.setPrototypeOf(Array.prototype, new Proxy({}, { get() { hits++; } }))`,
	} {
		s := newStringifyVM(t)
		s.eval(`globalThis.hits = 0;` + tamper)
		if _, how, _ := s.both(`[{ a: 1 }]`); how != jsonDecline {
			t.Errorf("after %s: %d, want a decline", tamper, how)
		}
	}
}

// FuzzPlainJSON writes generated values both ways: plain data must be
// taken and give JSON.stringify's text; what is not plain may be declined,
// never written differently.
func FuzzPlainJSON(f *testing.F) {
	for _, seed := range []string{"", "\x08\x02\x05abcd", "\x0a\x04\x03\x00\x00\x00\x00\x00\x00\xf0\x7f", "\x09\x03\x05\x01\xd8\x00\x0d"} {
		f.Add([]byte(seed))
	}
	s := newStringifyVM(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s.t = t
		g := &valueGen{data: data, plain: true}
		expr := g.value(0)
		got, how, want := s.both(expr)
		switch {
		case how == jsonDone && got != want:
			t.Fatalf("%s:\n got %s\nwant %s", expr, got, want)
		case how != jsonDone && g.plain:
			t.Fatalf("%s: plain data declined (%d)", expr, how)
		}
	})
}

// valueGen writes a JavaScript expression from fuzz bytes; plain says
// whether it is plain data.
type valueGen struct {
	data  []byte
	plain bool
	nodes int // values written: past 200, no more arrays or objects
}

func (g *valueGen) next() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *valueGen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = g.next()
	}
	return b
}

var edgeNumbers = []string{"0.1", "-0", "1e21", "1e-7", "1.5e-7", "1e-6", "999999999999999900000", "5e-324",
	"1.7976931348623157e308", "2**31", "-(2**31)-1", "NaN", "-Infinity", "4.35", "0.000001234", "1/3"}

var nonPlain = []string{"new Date(0)", "[1,,2]", "new (class {})", "{ toJSON() { return 5; } }",
	"new Proxy({}, {})", "() => 0", "new Number(3)", "{ get g() { return 1; } }", "Object.create({ a: 1 })"}

func (g *valueGen) value(depth int) string {
	c := g.next() % 16
	if g.nodes++; (depth > 6 || g.nodes > 200) && c >= 8 && c <= 13 {
		c %= 8
	}
	switch c {
	case 0:
		return "null"
	case 1:
		return strconv.FormatBool(g.next()&1 == 1)
	case 2:
		return strconv.Itoa(int(int32(binary.LittleEndian.Uint32(g.bytes(4)))))
	case 3:
		f := math.Float64frombits(binary.LittleEndian.Uint64(g.bytes(8)))
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		case f == 0 && math.Signbit(f):
			return "-0"
		}
		return "(" + strconv.FormatFloat(f, 'g', -1, 64) + ")"
	case 4:
		return "(" + edgeNumbers[int(g.next())%len(edgeNumbers)] + ")"
	case 5, 6:
		return g.str()
	case 7:
		if g.next()&1 == 0 {
			return "undefined"
		}
		return "Symbol()"
	case 8, 9, 10:
		var b strings.Builder
		if c == 10 {
			b.WriteString("Object.assign(Object.create(null), {")
		} else {
			b.WriteString("({")
		}
		for n := int(g.next() % 5); n > 0; n-- {
			fmt.Fprintf(&b, "[%s]: %s,", g.key(), g.value(depth+1))
		}
		return b.String() + "})"
	case 11, 12, 13:
		var b strings.Builder
		b.WriteString("[")
		for n := int(g.next() % 6); n > 0; n-- {
			b.WriteString(g.value(depth+1) + ",")
		}
		return b.String() + "]"
	case 14:
		return "(" + g.str() + ".repeat(" + strconv.Itoa(int(g.next()%64)) + ") + " + g.str() + ")"
	default:
		g.plain = false
		return "(" + nonPlain[int(g.next())%len(nonPlain)] + ")"
	}
}

// key is a property key: a string, or an integer that names an index.
func (g *valueGen) key() string {
	if b := g.next(); b&3 == 0 {
		return strconv.Itoa(int(b >> 2))
	}
	return g.str()
}

// str is a string literal of up to 7 UTF-16 code units, lone surrogates
// and control characters included.
func (g *valueGen) str() string {
	var b strings.Builder
	b.WriteByte('"')
	for n := int(g.next() % 8); n > 0; n-- {
		var u uint16
		switch k := g.next(); k % 4 {
		case 0:
			u = uint16(k>>2) + 0x20 // printable ASCII
		case 1:
			u = uint16(k >> 2) // controls, quotes
		default:
			u = binary.LittleEndian.Uint16(g.bytes(2))
		}
		fmt.Fprintf(&b, `\u%04x`, u)
	}
	b.WriteByte('"')
	return b.String()
}

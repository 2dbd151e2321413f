package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// The kernel's one host function, __airlock_host, is a C function of the
// engine whose body is hostCall, registered through the engine's C API.
// The wrapper's own way (RegisterHostFunc) finds the Go function under a
// mutex, converts the arguments and calls it through reflection: 2.1 µs a
// call against 0.6 µs for the rest of the round trip. hostCall converts
// primitives and strings itself, hands other arguments to the kernel's
// codec (callHost), or writes them as JSON text for a JSON host function
// (callJSONHost); it gets back primitives, strings, JSON text and
// two-element arrays for the kernel's reply.

// vmTable maps a host function's magic number to its VM. It is copied on
// write: VMs are made and closed far less often than they call.
var (
	vmTableMu sync.Mutex
	vmTable   atomic.Pointer[[]*VM]
	vmFree    []int32
)

func registerVM(v *VM) int32 {
	vmTableMu.Lock()
	defer vmTableMu.Unlock()
	var old []*VM
	if p := vmTable.Load(); p != nil {
		old = *p
	}
	t := make([]*VM, len(old), len(old)+1)
	copy(t, old)
	var magic int32
	if n := len(vmFree); n > 0 {
		magic, vmFree = vmFree[n-1], vmFree[:n-1]
		t[magic] = v
	} else {
		magic = int32(len(t))
		t = append(t, v)
	}
	vmTable.Store(&t)
	return magic
}

func unregisterVM(magic int32) {
	vmTableMu.Lock()
	defer vmTableMu.Unlock()
	old := *vmTable.Load()
	t := make([]*VM, len(old))
	copy(t, old)
	t[magic] = nil
	vmFree = append(vmFree, magic)
	vmTable.Store(&t)
}

func lookupVM(magic int32) *VM {
	if p := vmTable.Load(); p != nil && magic >= 0 && int(magic) < len(*p) {
		return (*p)[magic]
	}
	return nil
}

// tlsOf returns the engine thread state of a VM, which the wrapper keeps
// unexported (see runtimeOf).
func tlsOf(m *quickjs.VM) *libc.TLS {
	f := reflect.ValueOf(m).Elem().FieldByName("runtime")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return nil
	}
	rt := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	if rt.IsNil() {
		return nil
	}
	t := rt.Elem().FieldByName("tls")
	if !t.IsValid() || t.Type() != reflect.TypeOf((*libc.TLS)(nil)) {
		return nil
	}
	return *(**libc.TLS)(unsafe.Pointer(t.UnsafeAddr()))
}

// hostName is the global the kernel takes the host function from, and
// hostFrameName the C function's own name, which stack traces show as
// "at host (native)" and the host's stack mapping drops.
var (
	hostName      = mustCString("__airlock_host")
	hostFrameName = mustCString("host")
)

// defineHost puts __airlock_host on the global object, for the kernel to
// take and remove.
func (v *VM) defineHost(tls *libc.TLS) bool {
	ctx := uintptr(unsafe.Pointer(v.ctx))
	fn := lib.XJS_NewCFunction2(tls, ctx, funcPointer(hostCall), hostFrameName, 0, lib.EJS_CFUNC_generic_magic, v.magic)
	if fn.Ftag == lib.EJS_TAG_EXCEPTION {
		return false
	}
	g := lib.XJS_GetGlobalObject(tls, ctx)
	defer lib.XFreeValue(tls, ctx, g)
	// It takes over fn, also when it fails.
	return lib.XJS_DefinePropertyValueStr(tls, ctx, g, hostName, fn, lib.MJS_PROP_WRITABLE|lib.MJS_PROP_CONFIGURABLE) >= 0
}

// hostCall is the engine's C function __airlock_host:
// JSValue f(JSContext *ctx, JSValueConst this, int argc, JSValueConst *argv, int magic).
// Nothing may unwind through the engine: a panic becomes an exception, and
// a runtime.Goexit (a test's FailNow in a host function) marks the VM
// abandoned, never to be freed.
func hostCall(tls *libc.TLS, ctx uintptr, this lib.TJSValue, argc int32, argv uintptr, magic int32) (r lib.TJSValue) {
	v := lookupVM(magic)
	if v == nil {
		return throwTypeError(tls, ctx, "airlock: host call into a closed sandbox")
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			r = throwTypeError(tls, ctx, "airlock: internal error in a host call")
			return
		}
		v.abandoned = true
	}()
	if argc >= 2 && isInt(*arg(argv, 0), 10) {
		r = v.callJSONHost(tls, ctx, argc, argv)
		returned = true
		return r
	}
	bound := argc >= 2 && isInt(*arg(argv, 0), 9)
	if bound {
		for i := int32(2); i < argc; i++ {
			if !isPrimitive(arg(argv, i).Ftag) {
				r = v.callHostWithList(tls, ctx, argc, argv)
				returned = true
				return r
			}
		}
	}
	args := make([]any, argc)
	for i := range args {
		a, ok := goValue(tls, ctx, *arg(argv, int32(i)))
		if !ok {
			returned = true
			return throwTypeError(tls, ctx, errBadDispatch.Error())
		}
		args[i] = a
	}
	if bound {
		args[0] = 0 // a call of host function args[1]
	}
	res, err := v.dispatch(args)
	switch {
	case err != nil:
		r = throwTypeError(tls, ctx, err.Error())
	case bound && isList(res):
		// An answer to decode, an error to throw or a promise to make: the
		// kernel's reply(answer, id) does it.
		r = jsValue(tls, ctx, res)
		if r.Ftag != lib.EJS_TAG_EXCEPTION {
			a := [2]lib.TJSValue{r, *arg(argv, 1)}
			r2 := callKernel(tls, ctx, v.reply, a[:]...)
			lib.XFreeValue(tls, ctx, a[0])
			r = r2
		}
	default:
		r = jsValue(tls, ctx, res)
	}
	returned = true
	return r
}

// callJSONHost calls a JSON host function, the host's C function bound to
// (10, id): its arguments cross as the JSON text of their list, and a
// synchronous answer, JSON text, is parsed here.
func (v *VM) callJSONHost(tls *libc.TLS, ctx uintptr, argc int32, argv uintptr) lib.TJSValue {
	id, ok := goValue(tls, ctx, *arg(argv, 1))
	if !ok {
		return throwTypeError(tls, ctx, errBadDispatch.Error())
	}
	text, ok := v.argumentText(tls, ctx, argc, argv)
	if !ok {
		return lib.TJSValue{Ftag: lib.EJS_TAG_EXCEPTION}
	}
	res, err := v.dispatch([]any{0, id, text})
	if err != nil {
		return throwTypeError(tls, ctx, err.Error())
	}
	if s, ok := res.(string); ok {
		r := parseJSON(tls, ctx, s)
		if r.Ftag != lib.EJS_TAG_EXCEPTION {
			return r
		}
		lib.XFreeValue(tls, ctx, lib.XJS_GetException(tls, ctx))
		if json.Valid([]byte(s)) {
			res = []any{1, "airlock: the sandbox could not hold the answer of the host function (out of memory, or nested too deep)"}
		} else {
			res = []any{1, "airlock: the host function returned text that is not JSON"}
		}
	}
	r := jsValue(tls, ctx, res)
	if isList(res) && r.Ftag != lib.EJS_TAG_EXCEPTION {
		// An error to throw or a promise to make: the kernel's reply does it.
		a := [2]lib.TJSValue{r, *arg(argv, 1)}
		r = callKernel(tls, ctx, v.reply, a[:]...)
		lib.XFreeValue(tls, ctx, a[0])
	}
	return r
}

// argumentText returns the JSON text of the arguments of a JSON host call:
// written by plainJSONList, or by the engine's JSON.stringify for what is
// not plain data. ok is false when the engine threw.
func (v *VM) argumentText(tls *libc.TLS, ctx uintptr, argc int32, argv uintptr) (text string, ok bool) {
	vals := unsafe.Slice(arg(argv, 2), argc-2)
	if v.protos.object == 0 {
		v.protos = protosOf(tls, ctx)
	}
	buf, how := plainJSONList(tls, ctx, v.protos, vals, v.jsonBuf[:0])
	if cap(buf) <= plainJSONMaxBytes {
		v.jsonBuf = buf
	}
	switch how {
	case jsonDone:
		return string(buf), true
	case jsonThrown:
		return "", false
	}
	list := newList(tls, ctx, vals)
	if list.Ftag == lib.EJS_TAG_EXCEPTION {
		return "", false
	}
	defer lib.XFreeValue(tls, ctx, list)
	undefined := lib.TJSValue{Ftag: lib.EJS_TAG_UNDEFINED}
	s := lib.XJS_JSONStringify(tls, ctx, list, undefined, undefined)
	if s.Ftag == lib.EJS_TAG_EXCEPTION {
		return "", false
	}
	defer lib.XFreeValue(tls, ctx, s)
	t, ok := goValue(tls, ctx, s)
	text, _ = t.(string)
	return text, ok
}

var jsonFilename = mustCString("<host reply>")

// parseJSON parses JSON text as the engine's JSON.parse does the string
// jsString makes of it.
func parseJSON(tls *libc.TLS, ctx uintptr, s string) lib.TJSValue {
	s = validUTF8(s)
	n := len(s)
	p := libc.Xmalloc(tls, libc.Tsize_t(n+1)) // the parser wants a NUL after the text
	if p == 0 {
		return lib.XJS_ThrowOutOfMemory(tls, ctx)
	}
	defer libc.Xfree(tls, p)
	b := unsafe.Slice((*byte)(cPointer(p)), n+1)
	copy(b, s)
	b[n] = 0
	return lib.XJS_ParseJSON(tls, ctx, p, libc.Tsize_t(n), jsonFilename)
}

func isList(x any) bool {
	_, ok := x.([]any)
	return ok
}

func arg(argv uintptr, i int32) *lib.TJSValue {
	return (*lib.TJSValue)(cPointer(argv + uintptr(i)*unsafe.Sizeof(lib.TJSValue{})))
}

func isInt(v lib.TJSValue, n int32) bool {
	return v.Ftag == lib.EJS_TAG_INT && int32(*(*uint64)(unsafe.Pointer(&v))) == n
}

// isPrimitive reports whether a value of this tag crosses as it is: a
// number, a string, a boolean, null or undefined.
func isPrimitive(tag int64) bool {
	switch tag {
	case lib.EJS_TAG_INT, lib.EJS_TAG_FLOAT64, lib.EJS_TAG_BOOL, lib.EJS_TAG_NULL, lib.EJS_TAG_UNDEFINED,
		lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		return true
	}
	return false
}

// callHostWithList hands a bound call whose arguments are not all
// primitives, (9, id, ...args), to the kernel: callHost(id, [...args]),
// which encodes them with the codec.
func (v *VM) callHostWithList(tls *libc.TLS, ctx uintptr, argc int32, argv uintptr) lib.TJSValue {
	list := newList(tls, ctx, unsafe.Slice(arg(argv, 2), argc-2))
	if list.Ftag == lib.EJS_TAG_EXCEPTION {
		return list
	}
	defer lib.XFreeValue(tls, ctx, list)
	return callKernel(tls, ctx, v.callHost, *arg(argv, 1), list)
}

// newList makes an array of vals, defined as own elements: assigning them
// would run a setter a program put on Array.prototype.
func newList(tls *libc.TLS, ctx uintptr, vals []lib.TJSValue) lib.TJSValue {
	list := lib.XJS_NewArray(tls, ctx)
	if list.Ftag == lib.EJS_TAG_EXCEPTION {
		return list
	}
	for i, x := range vals {
		if lib.XJS_DefinePropertyValueUint32(tls, ctx, list, uint32(i), lib.XDupValue(tls, ctx, x), lib.MJS_PROP_C_W_E) < 0 {
			lib.XFreeValue(tls, ctx, list)
			return lib.TJSValue{Ftag: lib.EJS_TAG_EXCEPTION}
		}
	}
	return list
}

// callKernel calls a function of the kernel's from hostCall with args,
// which it does not take over.
func callKernel(tls *libc.TLS, ctx uintptr, fn quickjs.Value, args ...lib.TJSValue) lib.TJSValue {
	size := len(args) * int(unsafe.Sizeof(lib.TJSValue{}))
	p := tls.Alloc(size)
	defer tls.Free(size)
	for i, x := range args {
		*arg(p, int32(i)) = x
	}
	undefined := lib.TJSValue{Ftag: lib.EJS_TAG_UNDEFINED}
	return lib.XJS_Call(tls, ctx, rawValue(fn), undefined, int32(len(args)), p)
}

// rawValue is the engine value a wrapper Value holds, unexported in the
// wrapper: its layout is a VM pointer, then the value. TestDirectHostCalls
// checks it.
func rawValue(x quickjs.Value) lib.TJSValue {
	return (*struct {
		vm *quickjs.VM
		v  lib.TJSValue
	})(unsafe.Pointer(&x)).v
}

// goValue converts an argument of the kernel's: a primitive or a string.
func goValue(tls *libc.TLS, ctx uintptr, v lib.TJSValue) (any, bool) {
	switch v.Ftag {
	case lib.EJS_TAG_INT:
		return int(int32(*(*uint64)(unsafe.Pointer(&v)))), true
	case lib.EJS_TAG_FLOAT64:
		return *(*float64)(unsafe.Pointer(&v)), true
	case lib.EJS_TAG_BOOL:
		return int32(*(*uint64)(unsafe.Pointer(&v))) != 0, true
	case lib.EJS_TAG_NULL:
		return nil, true
	case lib.EJS_TAG_UNDEFINED:
		return Undefined{}, true
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		plen := tls.Alloc(int(unsafe.Sizeof(libc.Tsize_t(0))))
		defer tls.Free(int(unsafe.Sizeof(libc.Tsize_t(0))))
		p := lib.XJS_ToCStringLen2(tls, ctx, plen, v, 0)
		if p == 0 {
			return nil, false
		}
		defer lib.XJS_FreeCString(tls, ctx, p)
		return wellFormed(unsafe.Slice((*byte)(cPointer(p)), *(*libc.Tsize_t)(cPointer(plen)))), true
	}
	return nil, false
}

// jsValue converts what dispatch returns: a primitive, a string, or a
// list of them.
func jsValue(tls *libc.TLS, ctx uintptr, x any) (r lib.TJSValue) {
	switch x := x.(type) {
	case nil:
		r.Ftag = lib.EJS_TAG_NULL
	case Undefined:
		r.Ftag = lib.EJS_TAG_UNDEFINED
	case bool:
		if x {
			*(*uint64)(unsafe.Pointer(&r)) = 1
		}
		r.Ftag = lib.EJS_TAG_BOOL
	case int:
		if int(int32(x)) == x {
			*(*uint64)(unsafe.Pointer(&r)) = uint64(uint32(int32(x)))
			r.Ftag = lib.EJS_TAG_INT
		} else {
			*(*float64)(unsafe.Pointer(&r)) = float64(x)
			r.Ftag = lib.EJS_TAG_FLOAT64
		}
	case float64:
		*(*float64)(unsafe.Pointer(&r)) = x
		r.Ftag = lib.EJS_TAG_FLOAT64
	case string:
		return jsString(tls, ctx, x)
	case []any:
		arr := lib.XJS_NewArray(tls, ctx)
		if arr.Ftag == lib.EJS_TAG_EXCEPTION {
			return arr
		}
		for i, e := range x {
			ev := jsValue(tls, ctx, e)
			if ev.Ftag == lib.EJS_TAG_EXCEPTION {
				lib.XFreeValue(tls, ctx, arr)
				return ev
			}
			// It takes over ev, also when it fails.
			if lib.XJS_DefinePropertyValueUint32(tls, ctx, arr, uint32(i), ev, lib.MJS_PROP_C_W_E) < 0 {
				lib.XFreeValue(tls, ctx, arr)
				return lib.TJSValue{Ftag: lib.EJS_TAG_EXCEPTION}
			}
		}
		return arr
	default:
		return throwTypeError(tls, ctx, errBadDispatch.Error())
	}
	return r
}

// jsString makes a JavaScript string of a Go string, with U+FFFD for each
// byte that does not start valid UTF-8, as Go decodes it.
func jsString(tls *libc.TLS, ctx uintptr, s string) lib.TJSValue {
	s = validUTF8(s)
	n := len(s)
	p := libc.Xmalloc(tls, libc.Tsize_t(n+1))
	if p == 0 {
		return lib.XJS_ThrowOutOfMemory(tls, ctx)
	}
	defer libc.Xfree(tls, p)
	copy(unsafe.Slice((*byte)(cPointer(p)), n), s)
	return lib.XJS_NewStringLen(tls, ctx, p, lib.Tsize_t(n))
}

// validUTF8 returns s with U+FFFD for each byte that does not start valid
// UTF-8, as Go decodes it.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // an invalid byte comes as utf8.RuneError
		b.WriteRune(r)
	}
	return b.String()
}

// wellFormed turns UTF-8 the engine wrote into a Go string, with U+FFFD for
// each lone surrogate, which the engine writes as the three bytes of its
// code point (0xED 0xA0–0xBF 0x80–0xBF).
func wellFormed(b []byte) string {
	if bytes.IndexByte(b, 0xed) < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] == 0xed && i+2 < len(b) && b[i+1] >= 0xa0 && b[i+1] <= 0xbf && b[i+2] >= 0x80 && b[i+2] <= 0xbf {
			out = append(out, "\uFFFD"...)
			i += 3
			continue
		}
		out = append(out, b[i])
		i++
	}
	return string(out)
}

var percentS = mustCString("%s")

// throwInternal throws a TypeError with msg, as the wrapper throws a host
// function's error.
func throwTypeError(tls *libc.TLS, ctx uintptr, msg string) lib.TJSValue {
	p, err := libc.CString(msg)
	if err != nil {
		return lib.XJS_ThrowOutOfMemory(tls, ctx)
	}
	defer libc.Xfree(tls, p)
	bp := tls.Alloc(16)
	defer tls.Free(16)
	return lib.XJS_ThrowTypeError(tls, ctx, percentS, libc.VaList(bp+8, p))
}

// cPointer is an address in the engine's memory, outside Go's heap.
func cPointer(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

package engine

import (
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// The VM loads modules through its own loader, registered with the
// engine's C API. Source modules come from the job (Resolve, Load) and are
// compiled as the wrapper's loader compiles them. The globals module is
// native: the engine makes it with an export for each of the run's globals
// and one for the bridged modules, and fills them when it is evaluated,
// from the kernel's hand-over, without parsing anything. Compiling it as
// source cost ~12 µs a run, a fifth of a hello-world's.

// ImportsExport is the globals module's export that holds the bridged
// modules. It is not an identifier, so no global's name can meet it.
const ImportsExport = "airlock:imports"

// GlobalsModule is the name of the run's globals module. It carries the
// VM's secret key, so that user code cannot import it.
func (v *VM) GlobalsModule() string { return v.globalsName }

// installLoader makes the VM load modules through moduleNormalize and
// moduleLoad. Both find the VM by its magic number, the loader's opaque
// value and the context's.
func (v *VM) installLoader(tls *libc.TLS) {
	lib.XJS_SetContextOpaque(tls, uintptr(unsafe.Pointer(v.ctx)), uintptr(v.magic))
	lib.XJS_SetModuleLoaderFunc2(tls, uintptr(unsafe.Pointer(v.rt)), funcPointer(moduleNormalize), funcPointer(moduleLoad), 0, uintptr(v.magic))
}

// moduleNormalize is the engine's module normalizer:
// char *f(JSContext *ctx, const char *base, const char *name, void *opaque).
// It returns the resolved name in the engine's memory, or NULL with an
// exception pending.
func moduleNormalize(tls *libc.TLS, ctx, base, name, opaque uintptr) (r uintptr) {
	v := lookupVM(int32(opaque))
	if v == nil {
		throwTypeError(tls, ctx, "airlock: module resolution in a closed sandbox")
		return 0
	}
	defer func() {
		if p := recover(); p != nil {
			throwTypeError(tls, ctx, "airlock: internal error resolving a module")
			r = 0
		}
	}()
	resolved, err := v.normalize(cText(tls, base), cText(tls, name))
	if err != nil {
		throwTypeError(tls, ctx, "module normalization failed: "+err.Error())
		return 0
	}
	// The engine frees the name with its own allocator.
	if r = lib.Xjs_malloc(tls, ctx, libc.Tsize_t(len(resolved)+1)); r != 0 {
		b := unsafe.Slice((*byte)(cPointer(r)), len(resolved)+1)
		b[copy(b, resolved)] = 0
	}
	return r // js_malloc throws the out-of-memory error itself
}

// moduleLoad is the engine's module loader:
// JSModuleDef *f(JSContext *ctx, const char *name, void *opaque, JSValueConst attributes).
// It returns the module, or NULL with an exception pending.
func moduleLoad(tls *libc.TLS, ctx, cname, opaque uintptr, _ lib.TJSValue) (r uintptr) {
	v := lookupVM(int32(opaque))
	if v == nil {
		throwTypeError(tls, ctx, "airlock: module load in a closed sandbox")
		return 0
	}
	defer func() {
		if p := recover(); p != nil {
			throwTypeError(tls, ctx, "airlock: internal error loading a module")
			r = 0
		}
	}()
	name := cText(tls, cname)
	if v.job != nil && name == v.GlobalsModule() {
		return v.globalsModule(tls, ctx, cname)
	}
	src, err := v.load(name)
	if err != nil {
		throwTypeError(tls, ctx, "module load failed: "+err.Error())
		return 0
	}
	if r = compileModule(tls, ctx, cname, src); r == 0 && v.job != nil && v.job.Fallback != nil {
		// TypeScript tried as JavaScript: compile its transform instead.
		alt, err := v.job.Fallback(name)
		switch {
		case err != nil:
			lib.XFreeValue(tls, ctx, lib.XJS_GetException(tls, ctx))
			throwTypeError(tls, ctx, "module load failed: "+err.Error())
		case alt != "":
			lib.XFreeValue(tls, ctx, lib.XJS_GetException(tls, ctx))
			r = compileModule(tls, ctx, cname, alt)
		}
	}
	if r == 0 {
		return 0
	}
	if v.job != nil && v.job.URL != nil {
		if url := v.job.URL(name); url != "" && !setMetaURL(tls, ctx, r, url) {
			return 0
		}
	}
	return r
}

// compileModule compiles src as module cname. It returns the module, or 0
// with an exception pending.
func compileModule(tls *libc.TLS, ctx, cname uintptr, src string) uintptr {
	p, err := libc.CString(src) // the parser wants a NUL after the text
	if err != nil {
		lib.XJS_ThrowOutOfMemory(tls, ctx)
		return 0
	}
	defer libc.Xfree(tls, p)
	m := lib.XJS_Eval(tls, ctx, p, libc.Tsize_t(len(src)), cname, lib.MJS_EVAL_TYPE_MODULE|lib.MJS_EVAL_FLAG_COMPILE_ONLY)
	if m.Ftag == lib.EJS_TAG_EXCEPTION {
		return 0
	}
	// The engine keeps the module in its list; the value is only a handle.
	r := *(*uintptr)(unsafe.Pointer(&m.Fu))
	lib.XFreeValue(tls, ctx, m)
	return r
}

var urlName = mustCString("url")

// setMetaURL sets import.meta.url of module m, as an assignment would.
func setMetaURL(tls *libc.TLS, ctx, m uintptr, url string) bool {
	meta := lib.XJS_GetImportMeta(tls, ctx, m)
	if meta.Ftag == lib.EJS_TAG_EXCEPTION {
		return false
	}
	defer lib.XFreeValue(tls, ctx, meta)
	s := jsString(tls, ctx, url)
	if s.Ftag == lib.EJS_TAG_EXCEPTION {
		return false
	}
	return lib.XJS_DefinePropertyValueStr(tls, ctx, meta, urlName, s, lib.MJS_PROP_C_W_E) >= 0 // it takes over s
}

// globalsModule makes the native globals module of the running job: one
// export for each global, and ImportsExport.
func (v *VM) globalsModule(tls *libc.TLS, ctx, cname uintptr) uintptr {
	m := lib.XJS_NewCModule(tls, ctx, cname, funcPointer(globalsInit))
	if m == 0 {
		return 0
	}
	for _, n := range v.job.GlobalNames {
		if !addExport(tls, ctx, m, n) {
			return 0
		}
	}
	if !addExport(tls, ctx, m, ImportsExport) {
		return 0
	}
	return m
}

// globalsInit is the globals module's init function, run when the module
// is evaluated, before any source module's body:
// int f(JSContext *ctx, JSModuleDef *m). It takes the run's globals and
// bridged modules from the kernel, which marks the run as started, and
// sets the exports to them.
func globalsInit(tls *libc.TLS, ctx, m uintptr) (r int32) {
	v := lookupVM(int32(lib.XJS_GetContextOpaque(tls, ctx)))
	if v == nil || v.job == nil {
		throwTypeError(tls, ctx, "airlock: the globals of a closed sandbox")
		return -1
	}
	defer func() {
		if p := recover(); p != nil {
			throwTypeError(tls, ctx, "airlock: internal error setting the globals")
			r = -1
		}
	}()
	payload := callKernel(tls, ctx, v.handOver)
	if payload.Ftag == lib.EJS_TAG_EXCEPTION {
		return -1
	}
	defer lib.XFreeValue(tls, ctx, payload)
	// The payload is the kernel's: [globals, imports], made before any user
	// code ran and never seen by it, so reading it runs no code.
	globals := lib.XJS_GetPropertyUint32(tls, ctx, payload, 0)
	if globals.Ftag == lib.EJS_TAG_EXCEPTION {
		return -1
	}
	defer lib.XFreeValue(tls, ctx, globals)
	for i, n := range v.job.GlobalNames {
		if !setExport(tls, ctx, m, n, lib.XJS_GetPropertyUint32(tls, ctx, globals, uint32(i))) {
			return -1
		}
	}
	if !setExport(tls, ctx, m, ImportsExport, lib.XJS_GetPropertyUint32(tls, ctx, payload, 1)) {
		return -1
	}
	return 0
}

func addExport(tls *libc.TLS, ctx, m uintptr, name string) bool {
	p, err := libc.CString(name)
	if err != nil {
		lib.XJS_ThrowOutOfMemory(tls, ctx)
		return false
	}
	defer libc.Xfree(tls, p)
	return lib.XJS_AddModuleExport(tls, ctx, m, p) >= 0
}

// setExport sets export name of module m to val, which it takes over.
func setExport(tls *libc.TLS, ctx, m uintptr, name string, val lib.TJSValue) bool {
	if val.Ftag == lib.EJS_TAG_EXCEPTION {
		return false
	}
	p, err := libc.CString(name)
	if err != nil {
		lib.XFreeValue(tls, ctx, val)
		lib.XJS_ThrowOutOfMemory(tls, ctx)
		return false
	}
	defer libc.Xfree(tls, p)
	return lib.XJS_SetModuleExport(tls, ctx, m, p, val) >= 0
}

// cText reads a C string the engine passed, as the wrapper reads names.
func cText(tls *libc.TLS, p uintptr) string {
	if p == 0 {
		return ""
	}
	return wellFormed(unsafe.Slice((*byte)(cPointer(p)), libc.Xstrlen(tls, p)))
}

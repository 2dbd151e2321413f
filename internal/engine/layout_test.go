package engine

import (
	"testing"
	"unsafe"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// TestRuntimeLayout checks that the engine runtime read through the
// wrapper's unexported field is the real one: its heap grows when the
// sandbox allocates and its limit is the one set.
func TestRuntimeLayout(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.rt == nil {
		t.Fatal("runtime not found: the quickjs wrapper changed its layout")
	}
	before := v.HeapBytes()
	if before < 64<<10 || before > 16<<20 {
		t.Fatalf("heap of a fresh VM = %d bytes", before)
	}
	v.vm.SetMemoryLimit(123 << 20)
	if got := v.rt.Fmalloc_ctx.Fmalloc_state.Fmalloc_limit; got != 123<<20 {
		t.Fatalf("limit read back = %d", got)
	}
	if _, err := v.vm.Eval(`globalThis.keep = new Array(100000).fill(1).map((x, i) => ({i}))`, 0); err != nil {
		t.Fatal(err)
	}
	if after := v.HeapBytes(); after < before+1<<20 {
		t.Fatalf("heap %d -> %d after allocating", before, after)
	}
}

// TestContextLayout checks that the engine context read through the
// wrapper's unexported field is the one that belongs to the runtime.
func TestContextLayout(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.ctx == nil || uintptr(v.ctx.Frt) == 0 {
		t.Fatal("context not found: the quickjs wrapper changed its layout")
	}
	if got := (*lib.TJSRuntime)(*(*unsafe.Pointer)(unsafe.Pointer(&v.ctx.Frt))); got != v.rt {
		t.Fatalf("the context's runtime %p is not the VM's %p", got, v.rt)
	}
}

// TestDirectHostCalls checks what hostCall reads of the wrapper: the
// engine values inside its Values (the kernel's functions), and its thread
// state.
func TestDirectHostCalls(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	tls := tlsOf(v.vm)
	if tls == nil {
		t.Fatal("thread state not found: the quickjs wrapper changed its layout")
	}
	ctx := uintptr(unsafe.Pointer(v.ctx))
	for name, fn := range map[string]quickjs.Value{"callHost": v.callHost, "reply": v.reply, "start": v.start} {
		raw := rawValue(fn)
		if raw.Ftag != lib.EJS_TAG_OBJECT || lib.XJS_IsFunction(tls, ctx, raw) == 0 {
			t.Fatalf("%s is not a function: tag %d", name, raw.Ftag)
		}
	}
	if lookupVM(v.magic) != v {
		t.Fatal("the VM is not registered under its magic number")
	}
}

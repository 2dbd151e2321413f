package engine

import (
	"testing"
	"unsafe"

	lib "modernc.org/libquickjs"
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

package engine

import (
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// allocStats is what the allocator hooks observe of one VM's heap: whether
// an allocation was refused because of the memory limit, and the peak size.
// It is read and written only on the VM's goroutine, where the engine
// allocates.
type allocStats struct {
	limitHit    bool
	peak        int64
	origMalloc  uintptr
	origRealloc uintptr
}

type (
	mallocFunc  = func(tls *libc.TLS, s uintptr, size lib.Tsize_t) uintptr
	reallocFunc = func(tls *libc.TLS, s, ptr uintptr, size lib.Tsize_t) uintptr
)

// The hooks are package-level so that the engine's function pointers to
// them stay valid for the life of the process.
var (
	hookMalloc mallocFunc = func(tls *libc.TLS, s uintptr, size lib.Tsize_t) uintptr {
		st := statsOf(s)
		p := (*(*mallocFunc)(unsafe.Pointer(&st.origMalloc)))(tls, s, size)
		st.observe(s, p, size)
		return p
	}
	hookRealloc reallocFunc = func(tls *libc.TLS, s, ptr uintptr, size lib.Tsize_t) uintptr {
		st := statsOf(s)
		p := (*(*reallocFunc)(unsafe.Pointer(&st.origRealloc)))(tls, s, ptr, size)
		st.observe(s, p, size)
		return p
	}
)

func (st *allocStats) observe(s, p uintptr, size lib.Tsize_t) {
	state := mallocState(s)
	if p == 0 {
		if size > 0 && state.Fmalloc_size+size > state.Fmalloc_limit {
			st.limitHit = true
		}
		return
	}
	if n := int64(state.Fmalloc_size); n > st.peak {
		st.peak = n
	}
}

// mallocState is the engine's malloc state at address s, memory the engine
// allocated outside Go's heap.
func mallocState(s uintptr) *lib.TJSMallocState {
	return (*lib.TJSMallocState)(*(*unsafe.Pointer)(unsafe.Pointer(&s)))
}

// statsOf returns the stats kept in the malloc state's opaque word.
func statsOf(s uintptr) *allocStats {
	return *(**allocStats)(unsafe.Pointer(&mallocState(s).Fopaque))
}

// funcPointer returns the engine's representation of a Go function value:
// the pointer a func value holds.
func funcPointer(f any) uintptr {
	type iface [2]uintptr
	return (*iface)(unsafe.Pointer(&f))[1]
}

// hookAllocator routes the VM's allocations through the hooks. The VM keeps
// st alive; the malloc state holds only its address.
func hookAllocator(rt *lib.TJSRuntime, st *allocStats) {
	mf := &rt.Fmalloc_ctx.Fmf
	st.origMalloc, st.origRealloc = mf.Fjs_malloc, mf.Fjs_realloc
	*(**allocStats)(unsafe.Pointer(&rt.Fmalloc_ctx.Fmalloc_state.Fopaque)) = st
	mf.Fjs_malloc = funcPointer(hookMalloc)
	mf.Fjs_realloc = funcPointer(hookRealloc)
}

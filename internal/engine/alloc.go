package engine

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
)

// allocStats is what the allocator hooks observe of one VM's heap: whether
// an allocation was refused because of the memory limit, and the peak size.
// It is read and written only on the VM's goroutine, where the engine
// allocates.
type allocStats struct {
	// starved is set, from any goroutine, once the host has stopped the
	// VM for good: from then on every allocation fails (see VM.Interrupt).
	starved  atomic.Bool
	limitHit bool
	// ctx is the engine context, for throwing from inside an allocation.
	ctx uintptr
	// oomMuted is set while the engine's own out-of-memory throw is
	// silenced after a refused BigInt (see refuseBigInt).
	oomMuted    bool
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
		if st.oomMuted {
			st.unmuteOOM()
		}
		if st.starved.Load() {
			return 0
		}
		if size > maxBigIntBytes && calledFromBigIntNew() {
			st.refuseBigInt(tls)
			return 0
		}
		p := (*(*mallocFunc)(unsafe.Pointer(&st.origMalloc)))(tls, s, size)
		st.observe(s, p, size)
		return p
	}
	hookRealloc reallocFunc = func(tls *libc.TLS, s, ptr uintptr, size lib.Tsize_t) uintptr {
		st := statsOf(s)
		if st.oomMuted {
			st.unmuteOOM()
		}
		if st.starved.Load() && size > 0 {
			return 0 // a realloc to size 0 frees, which must still work
		}
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

// MaxBigIntWords bounds the BigInts the sandbox makes, in the engine's
// 32-bit words: 131,072 bits. The engine's own limit is 2^20 bits, but
// it works on BigInts in native loops that never poll for an interrupt and
// cost the square of the size: the decimal string of a million-bit BigInt
// takes 2.2 s, a product of two half-million-bit ones 0.25 s. At this size
// each of those takes tens of milliseconds, so a run stops within 100 ms of
// the host's decision. BigInt() of a decimal string reserves a fifth more
// than the value needs (four bits a digit), so it parses at most 32,768
// digits.
const MaxBigIntWords = 4096

// maxBigIntBytes is the allocation the hook sees for the largest of them:
// the allocator's 8-byte header of a large block, a 32-bit length and the
// words.
const maxBigIntBytes = 8 + 4 + 4*MaxBigIntWords

// bigIntNew is the engine function that allocates every BigInt.
const bigIntNew = "modernc.org/libquickjs._js_bigint_new"

// calledFromBigIntNew reports whether the allocation in progress is the
// engine's allocation of a BigInt. It walks a few frames of the Go stack:
// the engine is Go code, and the frames between js_bigint_new and the hook
// are its allocator's. Only allocations above maxBigIntBytes pay for it.
func calledFromBigIntNew() bool {
	var pcs [10]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == bigIntNew {
			return true
		}
		if !more {
			return false
		}
	}
}

var bigIntTooLarge = mustCString(fmt.Sprintf("BigInt is too large for the sandbox (the limit is about %d bits)", MaxBigIntWords*32))

func mustCString(s string) uintptr {
	p, err := libc.CString(s)
	if err != nil {
		panic(err)
	}
	return p
}

// refuseBigInt throws a RangeError for a BigInt over MaxBigIntWords, where
// the engine throws its own for one over its limit (in js_bigint_new, the
// caller of this allocation). The refused allocation then makes the engine
// throw an out-of-memory error over it, unless it believes it is already
// throwing one: the runtime's in_out_of_memory flag is set until the next
// allocation, which comes after that throw.
func (st *allocStats) refuseBigInt(tls *libc.TLS) {
	lib.XJS_ThrowRangeError(tls, st.ctx, bigIntTooLarge, 0)
	*inOutOfMemory(st.ctx) = 1
	st.oomMuted = true
}

func (st *allocStats) unmuteOOM() {
	*inOutOfMemory(st.ctx) = 0
	st.oomMuted = false
}

// inOutOfMemory is the runtime's in_out_of_memory flag: a one-byte bit
// field in the 16-bit word after current_exception, its high byte.
// TestBigIntLimit checks it against the engine in use.
func inOutOfMemory(ctx uintptr) *uint8 {
	c := (*lib.TJSContext)(*(*unsafe.Pointer)(unsafe.Pointer(&ctx)))
	rt := (*lib.TJSRuntime)(*(*unsafe.Pointer)(unsafe.Pointer(&c.Frt)))
	return (*uint8)(unsafe.Add(unsafe.Pointer(&rt.Fcurrent_exception), unsafe.Sizeof(rt.Fcurrent_exception)+1))
}

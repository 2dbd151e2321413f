package engine

import (
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/memory"
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
	// mem is the VM's own allocator (see ownAllocator), or nil when the
	// VM allocates from the process's shared one.
	mem *memory.Allocator
	// owned counts the blocks of mem in use.
	owned int
}

type (
	mallocFunc  = func(tls *libc.TLS, s uintptr, size lib.Tsize_t) uintptr
	reallocFunc = func(tls *libc.TLS, s, ptr uintptr, size lib.Tsize_t) uintptr
	freeFunc    = func(tls *libc.TLS, s, ptr uintptr)
	usableFunc  = func(tls *libc.TLS, ptr uintptr) lib.Tsize_t
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
		var p uintptr
		if st.mem != nil {
			p = st.malloc(s, size)
		} else {
			p = (*(*mallocFunc)(unsafe.Pointer(&st.origMalloc)))(tls, s, size)
		}
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
		var p uintptr
		if st.mem != nil {
			p = st.realloc(tls, s, ptr, size)
		} else {
			p = (*(*reallocFunc)(unsafe.Pointer(&st.origRealloc)))(tls, s, ptr, size)
		}
		st.observe(s, p, size)
		return p
	}
	hookFree freeFunc = func(tls *libc.TLS, s, ptr uintptr) {
		if ptr == 0 {
			return
		}
		st := statsOf(s)
		state := mallocState(s)
		state.Fmalloc_count--
		state.Fmalloc_size -= usable(ptr) + lib.MMALLOC_OVERHEAD
		st.free(tls, ptr)
	}
	hookUsable usableFunc = func(tls *libc.TLS, ptr uintptr) lib.Tsize_t { return usable(ptr) }
)

// A VM's own allocator. The process's C allocator is one heap behind one
// lock for every VM in the process: VMs that run at the same time wait on
// each other for each allocation (two on two CPUs, one making a VM while the
// other runs a job, each ran at a quarter of its speed). So each VM
// allocates from its own modernc.org/memory Allocator, the allocator the C
// library itself uses, without a lock: a VM is used by one goroutine at a
// time.
//
// What the engine allocated before the hooks were installed (the runtime,
// the context and its intrinsics) lives in the shared heap, and may be freed
// or reallocated through the hooks: free and realloc tell the two apart by
// the allocator's own record of its memory regions (its unexported regs
// field, found by reflection at start; every region starts on a 64 KiB
// boundary with its header). When that record is not where it is expected,
// VMs use the shared heap as before. TestOwnAllocator checks it.
const (
	regionLog  = 16
	regionMask = 1<<regionLog - 1
)

// regsOffset is where the Allocator keeps its map of regions, or 0 when it
// could not be found: VMs then share the process's heap.
var regsOffset = func() uintptr {
	f, ok := reflect.TypeOf(memory.Allocator{}).FieldByName("regs")
	if !ok || f.Type != reflect.TypeOf(map[uintptr]struct{}(nil)) {
		return 0
	}
	// Check the region geometry on a throwaway allocator.
	var a memory.Allocator
	defer a.Close()
	for _, size := range []int{16, 1000, 100 << 10} {
		p, err := a.UintptrMalloc(size)
		if err != nil || p == 0 {
			return 0
		}
		regs := *(*map[uintptr]struct{})(unsafe.Add(unsafe.Pointer(&a), f.Offset))
		if _, ok := regs[p&^regionMask]; !ok || memory.UintptrUsableSize(p) < size {
			return 0
		}
	}
	return f.Offset
}()

// usable is the usable size of a block of either allocator: both keep it
// in the header of the block's region.
func usable(p uintptr) lib.Tsize_t { return lib.Tsize_t(memory.UintptrUsableSize(p)) }

// owns reports whether p was allocated by the VM's own allocator.
func (st *allocStats) owns(p uintptr) bool {
	regs := *(*map[uintptr]struct{})(unsafe.Add(unsafe.Pointer(st.mem), regsOffset))
	_, ok := regs[p&^regionMask]
	return ok
}

// maxBlock bounds one allocation: the engine's sizes are unsigned, the
// allocator's signed.
const maxBlock = 1 << 46

// malloc allocates from the VM's allocator, as the engine's default
// allocator does from the shared one: within the memory limit, counted in
// the malloc state.
func (st *allocStats) malloc(s uintptr, size lib.Tsize_t) uintptr {
	state := mallocState(s)
	if state.Fmalloc_size+size > state.Fmalloc_limit || size > maxBlock {
		return 0
	}
	p, err := st.mem.UintptrMalloc(max(int(size), 1))
	if err != nil || p == 0 {
		return 0
	}
	st.owned++
	state.Fmalloc_count++
	state.Fmalloc_size += usable(p) + lib.MMALLOC_OVERHEAD
	return p
}

// free releases p to the allocator it came from.
func (st *allocStats) free(tls *libc.TLS, p uintptr) {
	if st.mem != nil && st.owns(p) {
		st.owned--
		st.mem.UintptrFree(p)
		return
	}
	libc.Xfree(tls, p)
}

// realloc is the engine's default realloc on the VM's allocator. A block of
// the shared heap moves to the VM's.
func (st *allocStats) realloc(tls *libc.TLS, s, ptr uintptr, size lib.Tsize_t) uintptr {
	if ptr == 0 {
		if size == 0 {
			return 0
		}
		return st.malloc(s, size)
	}
	state := mallocState(s)
	old := usable(ptr)
	if size == 0 {
		state.Fmalloc_count--
		state.Fmalloc_size -= old + lib.MMALLOC_OVERHEAD
		st.free(tls, ptr)
		return 0
	}
	if state.Fmalloc_size+size-old > state.Fmalloc_limit || size > maxBlock {
		return 0
	}
	var p uintptr
	if st.owns(ptr) {
		var err error
		if p, err = st.mem.UintptrRealloc(ptr, int(size)); err != nil {
			return 0
		}
	} else {
		var err error
		if p, err = st.mem.UintptrMalloc(int(size)); err != nil || p == 0 {
			return 0
		}
		st.owned++
		n := min(old, size)
		libc.Xmemcpy(tls, p, ptr, n)
		libc.Xfree(tls, ptr)
	}
	if p == 0 {
		return 0
	}
	state.Fmalloc_size += usable(p) - old
	return p
}

// Spare allocators: a closed VM's allocator, all its blocks freed, serves
// the next VM, whose allocations then land in memory already mapped and
// touched instead of faulting in fresh pages.
var spareAllocators = make(chan *memory.Allocator, 64)

// maxSpareBytes is the largest heap whose allocator is kept for reuse;
// larger ones return their memory to the system.
const maxSpareBytes = 8 << 20

func newAllocator() *memory.Allocator {
	select {
	case a := <-spareAllocators:
		return a
	default:
		return new(memory.Allocator)
	}
}

// releaseAllocator takes back the allocator of a VM the engine has freed
// whole: kept for reuse when the VM's heap stayed small and nothing is left
// in it, else closed.
func (st *allocStats) releaseAllocator() {
	a := st.mem
	st.mem = nil
	if a == nil {
		return
	}
	if st.owned == 0 && st.peak <= maxSpareBytes {
		select {
		case spareAllocators <- a:
			return
		default:
		}
	}
	a.Close()
}

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
	if regsOffset != 0 {
		st.mem = newAllocator()
		mf.Fjs_free = funcPointer(hookFree)
		mf.Fjs_malloc_usable_size = funcPointer(hookUsable)
	}
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

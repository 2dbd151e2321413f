package wasmvm

import "sync/atomic"

// pageSize is the page of the host's memory the allocators map, copy and
// scan by (not wasm's 64 KiB page).
const pageSize = 4096

// storeWord and loadWord access a word of a sandbox's memory (see
// linearMemory.word) from any goroutine.
func storeWord(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
func loadWord(p *uint32) uint32     { return atomic.LoadUint32(p) }

// refuse marks a growth of the memory refused at its limit as the shim
// marks an allocation refused at the heap limit (shim/memory.c, refuse): the
// out-of-memory mark, and the stop, so that the program ends there
// whatever it does with the failed allocation (a refused memory.grow is
// a null pointer for the guest's malloc, which QuickJS turns into a
// catchable error, and which the shim's own buffers would report as
// nothing at all). ctl is the control block's offset, 0 before the
// sandbox is bound.
func (m *linearMemory) refuse() {
	if m.ctl != 0 {
		storeWord(m.word(m.ctl+ctlOOM), 1)
		storeWord(m.word(m.ctl+ctlStop), 1)
	}
}

// allocator makes one sandbox's linear memory (Allocate): the image (if
// any) at its start, mapped copy-on-write where the system allows it, and
// at most limit bytes in all.
type allocator struct {
	im    *image
	limit uint64
	mem   *linearMemory
}

// reservation is how much address space a sandbox's memory takes: the
// limit (or the module's maximum, if lower), at least the image, in whole
// pages.
func (a *allocator) reservation(maxBytes uint64) uintptr {
	reserve := uintptr(min(a.limit, maxBytes))
	if a.im != nil && reserve < a.im.size {
		reserve = a.im.size
	}
	return (reserve + pageSize - 1) &^ (pageSize - 1)
}

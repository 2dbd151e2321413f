package wasmvm

import "sync/atomic"

// pageSize is the page of the host's memory the allocators map, copy and
// scan by (not wasm's 64 KiB page).
const pageSize = 4096

// storeWord and loadWord access a word of a sandbox's memory (see
// linearMemory.word) from any goroutine.
func storeWord(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
func loadWord(p *uint32) uint32     { return atomic.LoadUint32(p) }

// allocator makes one sandbox's linear memory (wazero's
// experimental.MemoryAllocator): the image (if any) at its start, mapped
// copy-on-write where the system allows it, and at most limit bytes in all.
type allocator struct {
	im    *image
	limit uint64
	mem   *linearMemory
}

// reservation is how much address space a sandbox's memory takes: the
// limit (or wazero's maximum, if lower), at least the image, in whole
// pages.
func (a *allocator) reservation(maxBytes uint64) uintptr {
	reserve := uintptr(min(a.limit, maxBytes))
	if a.im != nil && reserve < a.im.size {
		reserve = a.im.size
	}
	return (reserve + pageSize - 1) &^ (pageSize - 1)
}

package wasmvm

import "sync/atomic"

// pageSize is the page of the host's memory the allocators map, copy and
// scan by (not wasm's 64 KiB page).
const pageSize = 4096

// storeWord and loadWord access a word of a sandbox's memory (see
// linearMemory.word) from any goroutine.
func storeWord(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
func loadWord(p *uint32) uint32     { return atomic.LoadUint32(p) }

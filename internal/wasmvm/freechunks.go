package wasmvm

import "encoding/binary"

// The C allocator's free chunks. QuickJS's heap is malloc's (wasi-libc's
// dlmalloc), and its accounting counts the blocks in use, not the free
// chunks between them: a heap fragmented by blocks freed between live
// ones holds memory no allocation is using, which the memory limit bounds
// (Sandbox.SetMemoryLimit) but which an idle sandbox need not keep. No
// allocation reads what a free chunk held (malloc hands out its bytes as
// they are, and calloc clears them), so the pages wholly inside free
// chunks can be given back: they read as zeros, or as the image's page,
// when used again. freePages finds them by walking the chunks, from the
// snapshot's fence (see Snapshot.capture) to the end of the memory.
//
// A chunk of wasm32 dlmalloc (malloc.c, "malloc_chunk details"): at its
// offset p, the previous chunk's size if that one is free (4 bytes), then
// its head, its size with flag bits (4 bytes); the next chunk is at
// p+size. Bit 1 of the head is set while the chunk is in use. A free
// chunk keeps its list links, and in a tree bin its children, parent and
// index, in the 24 bytes after the head, and its size again in the first
// word of the next chunk. The top chunk (what is left at the end of the
// memory) is free, followed by the segment's end marker (a head of
// TOP_FOOT_SIZE, 56 bytes, no page).
const (
	chunkInUse  = 2  // CINUSE_BIT
	chunkFlags  = 7  // FLAG_BITS
	chunkMin    = 16 // MIN_CHUNK_SIZE
	chunkHeader = 32 // what a free chunk keeps at its start
)

// freePages returns the spans of whole pages that lie inside free chunks
// of mem, walking the chunks from offset from, a chunk's start; and the
// offset where the walk ended, the end of mem unless a head made no sense.
// The heads are the guest's: a head that claims a size beyond the memory,
// or below the least chunk, ends the walk. A corrupted heap can at worst
// have its own pages given back, which read as zeros afterwards.
func freePages(mem []byte, from uint32) (spans []span, end uint64) {
	p, n := uint64(from), uint64(len(mem))
	for p+8 <= n {
		head := binary.LittleEndian.Uint32(mem[p+4:])
		size := uint64(head &^ chunkFlags)
		if size < chunkMin || p+size > n {
			break
		}
		if head&chunkInUse == 0 {
			lo := (p + chunkHeader + pageSize - 1) &^ (pageSize - 1)
			hi := (p + size) &^ (pageSize - 1) // the next chunk's first word stays
			if lo < hi {
				if k := len(spans); k > 0 && uint64(spans[k-1].off+spans[k-1].len) == lo {
					spans[k-1].len += uintptr(hi - lo)
				} else {
					spans = append(spans, span{uintptr(lo), uintptr(hi - lo)})
				}
			}
		}
		p += size
	}
	return spans, p
}

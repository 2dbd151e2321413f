//go:build !airlock_anonmem

package wasmvm

import (
	"bytes"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// trim drops the sandbox's own copy of every page it wrote that holds the
// image's bytes again (a reference count raised and lowered, a list
// linked and unlinked): the mapping reads the image's shared page there
// again. It returns the spans dropped, for untrim.
func (m *linearMemory) trim() []span {
	buf, ok := m.pagemap()
	if !ok {
		return nil
	}
	defer pagemapBufs.Put(buf)
	entries := *buf
	mem := unsafe.Slice((*byte)(m.base), m.im.size)
	var zero [pageSize]byte
	var spans []span
	run := uintptr(0) // run: the pages to drop ending before page i
	drop := func(end uintptr) {
		if run > 0 {
			if unix.Madvise(mem[(end-run)*pageSize:end*pageSize], unix.MADV_DONTNEED) == nil {
				spans = append(spans, span{(end - run) * pageSize, run * pageSize})
			}
			run = 0
		}
	}
	for i := range uintptr(len(entries) / 8) {
		if !private(entries[i*8:]) {
			drop(i)
			continue
		}
		own := mem[i*pageSize : (i+1)*pageSize]
		// A page the image does not store is a hole of the memfd: zeros,
		// not read through the mapping (that would allocate it).
		var img []byte
		if _, stored := slices.BinarySearch(m.im.pages, uint32(i)); stored {
			img = m.im.src[i*pageSize : (i+1)*pageSize]
		} else {
			img = zero[:]
		}
		if !bytes.Equal(own, img) {
			drop(i)
			continue
		}
		run++
	}
	drop(uintptr(len(entries) / 8))
	return spans
}

// untrim makes the pages trim dropped the sandbox's own again, in one
// call for each span: a run writes most of them again, and a fault for
// each costs more (BENCHMARKS.md, "Idle executor memory").
func (m *linearMemory) untrim(spans []span) {
	for _, sp := range spans {
		unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(m.base, sp.off)), sp.len), unix.MADV_POPULATE_WRITE)
	}
}

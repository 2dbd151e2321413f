//go:build unix

package wasmvm

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Unix a sandbox's memory is a mapping of its whole reservation
// (memory_linux.go, memory_unix.go): freed at once, and never moved.

func (m *linearMemory) Free() {
	if m.base != nil {
		unix.MunmapPtr(m.base, m.reserved)
		m.base = nil
	}
}

// drop gives back the pages of spans: their next use reads them as zeros
// (as the image's pages, in the image's range of a mapping of it). On
// Linux at once; elsewhere the system takes it as advice.
func (m *linearMemory) drop(spans []span) {
	for _, sp := range spans {
		unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(m.base, sp.off)), sp.len), unix.MADV_DONTNEED)
	}
}

// word is the 32-bit word at off, for atomic access from any goroutine.
// The buffer never moves, so the pointer stays valid until Free.
func (m *linearMemory) word(off uint32) *uint32 {
	return (*uint32)(unsafe.Add(m.base, off))
}

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

// word is the 32-bit word at off, for atomic access from any goroutine.
// The buffer never moves, so the pointer stays valid until Free.
func (m *linearMemory) word(off uint32) *uint32 {
	return (*uint32)(unsafe.Add(m.base, off))
}

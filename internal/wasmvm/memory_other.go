//go:build !unix

package wasmvm

import "unsafe"

// Elsewhere than Unix (Windows) a sandbox's memory is a Go slice with the
// capacity of its limit, and the image is copied into it: no sharing of
// pages, and the limit counts in the Go heap's size.

type linearMemory struct {
	buf   []byte
	limit uintptr // at most cap(buf): the most the guest's memory may grow to (Sandbox.SetMemoryLimit)
	ctl   uint32  // the control block, for refuse
	im    *image
}

func (a *allocator) Allocate(maxBytes uint64) *linearMemory {
	reserve := a.reservation(maxBytes)
	m := &linearMemory{buf: make([]byte, 0, reserve), limit: reserve, im: a.im}
	if a.im != nil {
		m.buf = append(m.buf, a.im.bytes...)
	}
	a.mem = m
	return m
}

func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > uint64(m.limit) || size > uint64(cap(m.buf)) {
		if m.buf != nil { // not freed
			m.refuse()
		}
		return nil
	}
	if n := uint64(len(m.buf)); size > n {
		m.buf = m.buf[:size]
		clear(m.buf[n:])
	}
	return m.buf[:size]
}

func (m *linearMemory) Free() { m.buf = nil }

// drop: the memory is a Go slice here, nothing is given back.
func (m *linearMemory) drop([]span) {}

func (m *linearMemory) word(off uint32) *uint32 {
	return (*uint32)(unsafe.Pointer(&m.buf[:off+4][off]))
}

func (m *linearMemory) rewind(size uintptr) bool {
	if m.im == nil || size != m.im.size {
		return false
	}
	copy(m.buf, m.im.bytes)
	return true
}

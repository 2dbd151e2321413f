//go:build unix && (!linux || airlock_anonmem)

package wasmvm

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On the other Unix systems (macOS, the BSDs) a sandbox's memory is, as on
// Linux, a reservation of its limit outside the Go heap (PROT_NONE), mapped
// read-write as it grows, so the buffer never moves; but the snapshot's
// image is copied into it rather than mapped copy-on-write (no memfd), and
// a rewind copies the whole image back. A Go slice of the limit's capacity,
// as on the remaining systems (memory_other.go), would count the limit in
// the Go heap's size for every sandbox and so hold off its collections.
// On Linux, the tag airlock_anonmem builds this allocator instead of the
// memfd one, so that its tests run there.

type linearMemory struct {
	base      unsafe.Pointer
	reserved  uintptr
	limit     uintptr // at most reserved: the most the guest's memory may grow to (Sandbox.SetMemoryLimit)
	committed uintptr // mapped read-write: the guest's memory
	ctl       uint32  // the control block, for refuse
	im        *image
}

func (a *allocator) Allocate(maxBytes uint64) *linearMemory {
	reserve := a.reservation(maxBytes)
	p, err := unix.MmapPtr(-1, 0, nil, reserve, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		panic(fmt.Sprintf("wasmvm: reserve linear memory: %v", err)) // Snapshot.instantiate recovers it into an error
	}
	m := &linearMemory{base: p, reserved: reserve, limit: reserve, im: a.im}
	if a.im != nil {
		if m.Reallocate(uint64(a.im.size)) == nil {
			unix.MunmapPtr(p, reserve)
			panic("wasmvm: map the image's memory")
		}
		copy(unsafe.Slice((*byte)(p), a.im.size), a.im.bytes)
	}
	a.mem = m
	return m
}

// Reallocate grows the usable memory to size bytes, or returns nil beyond
// the limit: memory.grow then fails inside the guest, and the program
// ends out of memory (refuse).
func (m *linearMemory) Reallocate(size uint64) []byte {
	sz := uintptr(size)
	if m.base == nil {
		return nil
	}
	if sz > m.limit || sz > m.reserved {
		m.refuse()
		return nil
	}
	if sz > m.committed {
		end := (sz + pageSize - 1) &^ (pageSize - 1)
		if _, err := unix.MmapPtr(-1, 0, unsafe.Add(m.base, m.committed), end-m.committed,
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED); err != nil {
			return nil
		}
		m.committed = end
	}
	return unsafe.Slice((*byte)(m.base), sz)
}

// rewind copies the image over the memory, which must not have grown
// beyond it.
func (m *linearMemory) rewind(size uintptr) bool {
	if m.base == nil || m.im == nil || size != m.im.size {
		return false
	}
	copy(unsafe.Slice((*byte)(m.base), size), m.im.bytes)
	return true
}

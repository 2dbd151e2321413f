//go:build linux

package early

import (
	"runtime"
	"syscall"
	"unsafe"
)

// heapPrefault is how much heap is populated ahead of a run's start: a
// little more than a hello run's heap.
const heapPrefault = 8 << 20

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault the pages
// of a range in, writable, in one call. Older kernels refuse it (EINVAL),
// and the heap then faults page by page as before.
const madvPopulateWrite = 23

// hugePage is the size of a transparent huge page (x86-64 and arm64 with
// 4 KiB pages).
const hugePage = 2 << 20

// populateHeap grows the heap by heapPrefault bytes with their pages
// populated, and frees them: one collection now, while the heap is a few
// hundred KiB, returns the pages to the heap's free pages, where the next
// allocations take them. At 400 percent the heap's goal is above what they
// add, so the scavenger leaves them.
//
// The pages are asked for as transparent huge pages first (MADV_HUGEPAGE;
// the kernel's default, "madvise", gives them only where asked). On the
// virtual machines measured, a process's first touch of each 4 KiB page
// costs ~10 µs even after the kernel populated it (the hypervisor maps
// the page then): 8 MiB of small pages cost ~20 ms of first touches over
// the start, 8 MiB of huge pages ~0.1 ms (RATIONALE.md, "The first touch
// of a page").
func populateHeap() {
	b := make([]byte, heapPrefault)
	hugePages(b)
	if syscall.Madvise(b, madvPopulateWrite) != nil {
		return
	}
	b = nil
	runtime.GC()
}

// hugePages asks for transparent huge pages over the part of b that whole
// huge pages cover. A kernel without them refuses, and nothing changes.
func hugePages(b []byte) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo, hi := (p+hugePage-1)&^(hugePage-1), (p+uintptr(len(b)))&^(hugePage-1)
	if lo < hi {
		syscall.Madvise(b[lo-p:hi-p], syscall.MADV_HUGEPAGE)
	}
}

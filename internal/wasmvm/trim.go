package wasmvm

// Trim gives back what an idle sandbox holds and can make again: its own
// copies of the image's pages that hold the image's bytes again (on Linux:
// the pages where a run raised and lowered a reference count, most of those
// an executor's step writes), which read the shared image again. The next
// call makes them again, in one call for each run of them (RATIONALE.md,
// "Idle executor memory"); the calls run on the caller's goroutine, whose
// stack the Go runtime shrinks itself. It also gives back the pages inside the C
// allocator's free chunks (freePages), which nothing reads: the memory a
// fragmented heap holds beyond what is live; those come back one by one
// as allocations use them again. It returns the image's pages given back
// since the last call into the sandbox. Not during a call, and on the
// sandbox's goroutine as Eval is; Terminate and Interrupt may come
// meanwhile, and are not lost. The sandbox stays usable.
func (s *Sandbox) Trim() int {
	if s.mod == nil || s.entered {
		return 0
	}
	sn := s.snap
	sn.mu.RLock() // trim reads the image: it stays until the trim is done
	defer sn.mu.RUnlock()
	if sn.closed {
		return 0
	}
	// Terminate and Interrupt write the control block from other
	// goroutines: a page compared equal to the image and then dropped
	// would lose such a write.
	s.mu.Lock()
	defer s.mu.Unlock()
	if mem, ok := s.mod.Memory().Read(0, s.mod.Memory().Size()); ok && sn.heapFrom != 0 {
		free, _ := freePages(mem, sn.heapFrom)
		s.mem.drop(free)
	}
	s.trimmed = append(s.trimmed, s.mem.trim()...)
	n := 0
	for _, sp := range s.trimmed {
		n += int(sp.len / pageSize)
	}
	return n
}

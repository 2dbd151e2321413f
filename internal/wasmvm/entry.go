package wasmvm

import "context"

// Entry names one of the shim's functions a sandbox calls. Every call goes
// through the shim's one export qjs_entry, its arguments on Sandbox.stack
// and the entry after them (chosen when the engine ran on wazero, which
// gave each exported function a native stack of its own, RATIONALE.md,
// "Idle executor memory"; it keeps the module's interface small). The values are shim/shim.h's
// ENTRY_* constants. The entries from EntrySlots on are another layer's
// (the kernel's, internal/qjs/shim/kernel.h), which Call calls with their
// arguments as value slots: this package does not know what they do.
type Entry uint64

const (
	entryEval        Entry = 0
	entryRunJobs     Entry = 1
	entryMalloc      Entry = 2
	entryFree        Entry = 3
	entryDefHostFunc Entry = 4
	entryDropJobs    Entry = 5
	entryInspectStep Entry = 6
	entryPrepareRun  Entry = 7

	// EntrySlots is the first entry that takes its arguments as value
	// slots (shim.h's ENTRY_SLOTS): Call's.
	EntrySlots Entry = 32
)

// entryArg is the index of the entry on the stack, after the widest
// function's five arguments.
const entryArg = 5

// enter calls the shim's function e with the arguments on st (s.stack, or
// a stack of the caller's), its result in st[0]. A call made while another
// is under way (from a host function) is nested (instance.enter).
func (s *Sandbox) enter(ctx context.Context, e Entry, st []uint64) error {
	st[entryArg] = uint64(e)
	if s.entered {
		return s.mod.enter(ctx, st, true)
	}
	if len(s.trimmed) > 0 { // the pages Trim gave back
		s.mem.untrim(s.trimmed)
		s.trimmed = s.trimmed[:0]
	}
	s.entered = true
	err := s.mod.enter(ctx, st, false)
	s.entered = false
	return err
}

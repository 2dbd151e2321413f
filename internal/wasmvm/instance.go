package wasmvm

import (
	"context"
	"fmt"
)

// An instance is one instance of the module translated to Go
// (instance_go.go). The image and its allocator, the snapshot, the pool,
// the calls and the host functions see it through this interface, which
// keeps them apart from the generated code.
type instance interface {
	// Memory is the instance's linear memory.
	Memory() memory
	// call calls the export name with its arguments on st, its result in
	// st[0] (the snapshot's set-up calls).
	call(ctx context.Context, name string, st []uint64) error
	// enter calls qjs_entry with st (entry.go); nested, from a host
	// function of a call under way.
	enter(ctx context.Context, st []uint64, nested bool) error
	// start sets the stack pointer to sp, the loop countdown to tickEvery
	// and the call depth (if any) to zero: a copy of the image starts so.
	start(sp uint64)
	// stackPointer is the value of __stack_pointer; ctlAddr that of
	// qjs_ctl, the control block's address.
	stackPointer() uint64
	ctlAddr() uint32
	// setSP sets __stack_pointer (tests).
	setSP(uint64)
	// rearm sets the loop countdown to tickEvery again (env.tick).
	rearm()
	// callDepth is the call depth the module's depth checks count
	// (internal/qjs/stopcheck -depth), or 0 if it has none: 0 between
	// calls, more than the bound after a depth trap.
	callDepth() int
	Close(ctx context.Context) error
	IsClosed() bool
}

// memory is what this package uses of a linear memory (goMemory).
type memory interface {
	Size() uint32
	Grow(deltaPages uint32) (previousPages uint32, ok bool)
	Read(offset, byteCount uint32) ([]byte, bool)
	Write(offset uint32, v []byte) bool
	WriteString(offset uint32, v string) bool
	ReadUint32Le(offset uint32) (uint32, bool)
	WriteUint32Le(offset, v uint32) bool
	ReadUint64Le(offset uint32) (uint64, bool)
	WriteUint64Le(offset uint32, v uint64) bool
}

// instantiate makes a new instance of the engine's module whose memory a
// allocates, at least pages of 64 KiB (the image's size; 0: the module's
// own initial size). The allocator cannot return an error, so a failed
// mapping, which it panics with, is turned into an error here rather than
// ending the process.
func (e *Engine) instantiate(ctx context.Context, a *allocator, pages uint32) (in instance, err error) {
	defer func() {
		if p := recover(); p != nil {
			in, err = nil, fmt.Errorf("wasmvm: instantiate: %v", p)
		}
	}()
	return newGoInstance(a, pages)
}

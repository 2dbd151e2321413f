package wasmvm

import (
	"errors"
	"fmt"
)

var (
	// ErrTerminated: the run was stopped by Terminate.
	ErrTerminated = errors.New("wasmvm: terminated")
	// ErrMemoryLimit: the program reached its memory limit. The mark is
	// set by the engine's allocator, outside the program's reach: a
	// program that catches the error is stopped all the same.
	ErrMemoryLimit = errors.New("wasmvm: memory limit reached")
	// ErrSpent: the sandbox was stopped, faulted or reached its memory
	// limit; only Reset or Close may follow.
	ErrSpent = errors.New("wasmvm: sandbox must be reset")
	// ErrClosed: the sandbox, snapshot or engine is closed.
	ErrClosed = errors.New("wasmvm: closed")
)

// Exception is a value thrown by the program and not caught.
type Exception struct {
	// Text is the thrown value as text: for an Error, "Name: message"
	// followed by its stack on the next lines.
	Text string
}

func (e *Exception) Error() string { return e.Text }

// TrapError is an engine fault: the WebAssembly code trapped (an
// out-of-bounds access, a stack overflow of the C code, a bug in the
// engine). The sandbox is spent; the host and other sandboxes are not
// affected.
type TrapError struct {
	Err error // the trap: a runtime error of the translated code
}

func (e *TrapError) Error() string { return fmt.Sprintf("wasmvm: engine fault: %v", e.Err) }
func (e *TrapError) Unwrap() error { return e.Err }

// HostPanicError is a panic of a host function, recovered at the engine
// boundary. The sandbox is spent.
type HostPanicError struct {
	Name  string
	Value any
}

func (e *HostPanicError) Error() string {
	return fmt.Sprintf("wasmvm: host function %q panicked: %v", e.Name, e.Value)
}

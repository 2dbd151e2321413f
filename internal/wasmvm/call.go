package wasmvm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A layer above this package gives the shim's realm its own work (the
// kernel of internal/engine, declared in internal/qjs/shim/kernel.h) with
// two things this package offers and does not read: the host function the
// shim calls on its own behalf (SetHostFunc), whose first argument says
// what it asks, and the shim's entries from EntrySlots on (Call), which
// take their arguments as value slots.

// SetHostFunc sets the Go function that answers the host calls the shim
// makes on its own behalf (shim.h's HOST_FN): besides a HostFunc's values,
// it may answer Async, and Bytes. Reset clears it.
func (s *Sandbox) SetHostFunc(fn HostFunc) { s.hostFn = fn }

// Call calls the shim's entry e (EntrySlots or above) with args as value
// slots, which the entry reads as a host call's answer: a primitive, text
// (String, JSON, Error, each followed by a NUL in the guest) or bytes (Bytes),
// written with the slots into one guest buffer, freed after the call. Its
// outcome is as an Eval's: what the entry threw, as an *Exception, or its
// value. No job runs. Errors as for Eval.
func (s *Sandbox) Call(ctx context.Context, e Entry, args ...Value) (Result, error) {
	if err := s.ready(ctx); err != nil {
		return Result{}, err
	}
	if e < EntrySlots {
		return Result{}, fmt.Errorf("wasmvm: entry %d does not take slots", e)
	}
	n := uint64(len(args)) * slotSize
	for i := range args {
		switch args[i].Kind {
		case String, JSON, Error:
			n += uint64(len(args[i].Text)) + 1
		case Bytes:
			n += uint64(len(args[i].Bytes)) + 1
		case Async:
			return Result{}, errors.New("wasmvm: an entry's argument cannot be Async")
		}
	}
	if n > 1<<31 {
		return Result{}, errors.New("wasmvm: arguments too large")
	}
	var buf uint32
	if n > 0 {
		var err error
		if buf, err = s.malloc(ctx, uint32(n)); err != nil {
			return Result{}, err
		}
		// Written in place through a view of the buffer: no guest code
		// runs until s.run, so the view stays valid.
		b, _ := s.mod.Memory().Read(buf, uint32(n))
		writeSlots(b, buf, args)
	}
	st := s.stack[:]
	st[0], st[1], st[2] = uint64(s.ctxPtr), uint64(buf), uint64(len(args))
	return s.run(ctx, e, buf)
}

// writeSlots writes args as slots at the start of b, the guest buffer at
// address at, and their texts and bytes after the slots, each followed by
// a NUL.
func writeSlots(b []byte, at uint32, args []Value) {
	off := len(args) * slotSize
	clear(b[:off])
	for i := range args {
		a := &args[i]
		sl := b[i*slotSize:]
		var tag uint32
		var data []byte
		switch a.Kind {
		case Null:
			tag = tagNull
		case Bool:
			tag = tagFalse
			if a.Bool {
				tag = tagTrue
			}
		case Number:
			tag = tagNumber
			binary.LittleEndian.PutUint64(sl[8:], math.Float64bits(a.Number))
		case String, JSON, Error:
			tag = tagString
			switch a.Kind {
			case JSON:
				tag = tagJSON
			case Error:
				tag = tagError
			}
			binary.LittleEndian.PutUint32(sl[4:], uint32(len(a.Text)))
			binary.LittleEndian.PutUint32(sl[8:], at+uint32(off))
			off += copy(b[off:], a.Text)
			b[off] = 0
			off++
		case Bytes:
			tag, data = tagBytes, a.Bytes
			binary.LittleEndian.PutUint32(sl[4:], uint32(len(data)))
			binary.LittleEndian.PutUint32(sl[8:], at+uint32(off))
			off += copy(b[off:], data)
			b[off] = 0
			off++
		}
		binary.LittleEndian.PutUint32(sl, tag)
	}
}

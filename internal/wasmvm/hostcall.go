package wasmvm

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tetratelabs/wazero/api"
)

// hostCall is env.host_call(fn, argv, argc) -> status: the arguments are
// argc slots at argv (tag, len, f64 or pointer); the answer goes to the
// control block's ret slot, its text (if any) waits in the sandbox for
// host_result. Status 0 is an answer, 1 a failure that spends the sandbox.
func hostCall(ctx context.Context, m api.Module, stack []uint64) {
	s, _ := ctx.Value(sandboxKey{}).(*Sandbox)
	if s == nil {
		stack[0] = 1
		return
	}
	fn, argv, argc := uint32(stack[0]), uint32(stack[1]), uint32(stack[2])
	stack[0] = 1
	if fn >= uint32(len(s.funcs)) {
		return
	}
	mem := m.Memory()
	raw, ok := mem.Read(argv, argc*slotSize)
	if !ok {
		return
	}
	args := s.args[:0]
	for i := uint32(0); i < argc; i++ {
		sl := raw[i*slotSize:]
		tag := binary.LittleEndian.Uint32(sl)
		n := binary.LittleEndian.Uint32(sl[4:])
		var v Value
		switch tag {
		case tagUndefined:
		case tagNull:
			v.Kind = Null
		case tagFalse, tagTrue:
			v = Value{Kind: Bool, Bool: tag == tagTrue}
		case tagNumber:
			v = Value{Kind: Number, Number: math.Float64frombits(binary.LittleEndian.Uint64(sl[8:]))}
		case tagString, tagJSON:
			b, ok := mem.Read(binary.LittleEndian.Uint32(sl[8:]), n)
			if !ok {
				return
			}
			v = Value{Kind: String, Text: string(b)}
			if tag == tagJSON {
				v.Kind = JSON
			}
		default:
			return
		}
		args = append(args, v)
	}
	s.args = args
	f := s.funcs[fn]
	ret, err, panicked := callHost(ctx, f.fn, args)
	clear(s.args)
	if panicked != nil {
		s.fault = &HostPanicError{Name: f.name, Value: panicked}
		storeWord(s.stopWord, 1)
		return
	}
	var tag uint32
	s.pending = s.pending[:0]
	if err != nil {
		tag = tagError
		s.pending = append(s.pending, err.Error()...)
	} else {
		switch ret.Kind {
		case Undefined:
			tag = tagUndefined
		case Null:
			tag = tagNull
		case Bool:
			tag = tagFalse
			if ret.Bool {
				tag = tagTrue
			}
		case Number:
			tag = tagNumber
		case String, JSON:
			tag = tagString
			if ret.Kind == JSON {
				tag = tagJSON
			}
			s.pending = append(s.pending, ret.Text...)
		default:
			tag = tagError
			s.pending = append(s.pending, fmt.Sprintf("host function %q returned a value of unknown kind %d", f.name, ret.Kind)...)
		}
	}
	var slot [slotSize]byte
	binary.LittleEndian.PutUint32(slot[0:], tag)
	binary.LittleEndian.PutUint32(slot[4:], uint32(len(s.pending)))
	if tag == tagNumber {
		binary.LittleEndian.PutUint64(slot[8:], math.Float64bits(ret.Number))
	}
	if !mem.Write(s.ctl+ctlRet, slot[:]) {
		return
	}
	stack[0] = 0
}

func callHost(ctx context.Context, fn HostFunc, args []Value) (v Value, err error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	v, err = fn(ctx, args)
	return v, err, nil
}

// hostResult is env.host_result(dst): it copies the pending answer text
// into dst, a buffer of the announced length the guest allocated.
func hostResult(ctx context.Context, m api.Module, stack []uint64) {
	s, _ := ctx.Value(sandboxKey{}).(*Sandbox)
	if s == nil {
		return
	}
	m.Memory().Write(uint32(stack[0]), s.pending)
	s.pending = s.pending[:0]
}

// loadModule is env.load_module(name, len) -> status: it asks the
// sandbox's ModuleLoader for the source of the module name and leaves it
// (or the error's text, status 1) for host_result, its length in the
// control block's ret slot.
func loadModule(ctx context.Context, m api.Module, stack []uint64) {
	s, _ := ctx.Value(sandboxKey{}).(*Sandbox)
	if s == nil {
		stack[0] = 1
		return
	}
	mem := m.Memory()
	b, ok := mem.Read(uint32(stack[0]), uint32(stack[1]))
	name := string(b)
	s.pending = s.pending[:0]
	status := uint64(1)
	switch {
	case !ok:
		s.pending = append(s.pending, "bad name"...)
	case s.loader == nil:
		s.pending = append(s.pending, "no modules can be imported"...)
	default:
		src, err, panicked := callLoader(ctx, s.loader, name)
		switch {
		case panicked != nil:
			s.fault = &HostPanicError{Name: "module loader", Value: panicked}
			storeWord(s.stopWord, 1)
			s.pending = append(s.pending, "module loader failed"...)
		case err != nil:
			s.pending = append(s.pending, err.Error()...)
		default:
			s.pending = append(s.pending, src...)
			status = 0
		}
	}
	mem.WriteUint32Le(s.ctl+ctlRet+4, uint32(len(s.pending)))
	stack[0] = status
}

func callLoader(ctx context.Context, l ModuleLoader, name string) (src string, err error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	src, err = l(ctx, name)
	return src, err, nil
}

// Command stopcheck is the last step of the engine's build (../build.sh): it
// rewrites a WebAssembly module so that every loop header tests the stop
// word of the shim's control block (qjs_ctl.stop, the address exported as the
// global "qjs_ctl") and traps when it is not zero:
//
//	i32.const <&qjs_ctl.stop>
//	i32.load
//	if
//	  unreachable
//	end
//
// The check is a load from linear memory, not a global: wazero's optimizing
// compiler keeps a mutable global in a register between calls, so a loop
// without calls never sees a global change, while a memory load is done on
// every iteration. Every long-running piece of wasm code runs a loop (deep
// recursion is bounded by the stack), so a host that stores 1 to the word
// stops the guest at its next back edge, inside QuickJS's own C loops too.
//
// Usage: go run ./internal/qjs/stopcheck in.wasm out.wasm
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: stopcheck in.wasm out.wasm")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, loops, err := instrument(in, "qjs_ctl")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stopcheck:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("stopcheck: %d loop headers checked\n", loops)
}

type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) u32() uint32 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 || v > 1<<32-1 {
		r.err = fmt.Errorf("bad LEB128 at %d", r.i)
		return 0
	}
	r.i += n
	return uint32(v)
}

func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		if r.err != nil || r.i >= len(r.b) {
			r.err = errors.New("truncated")
			return 0
		}
		c := r.b[r.i]
		r.i++
		v |= int64(c&0x7F) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (r *reader) byte1() byte {
	if r.err != nil || r.i >= len(r.b) {
		r.err = errors.New("truncated")
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *reader) name() string {
	n := int(r.u32())
	if r.err != nil || r.i+n > len(r.b) {
		r.err = errors.New("truncated name")
		return ""
	}
	s := string(r.b[r.i : r.i+n])
	r.i += n
	return s
}

func (r *reader) limits() {
	if f := r.byte1(); f&1 != 0 {
		r.u32()
		r.u32()
	} else {
		r.u32()
	}
}

type section struct {
	id         byte
	hdr, start int
	end        int
}

// instrument returns mod with the stop check at every loop header and the
// number of loops checked. global names the exported i32 global holding the
// address of the stop word.
func instrument(mod []byte, global string) ([]byte, int, error) {
	if len(mod) < 8 || string(mod[:4]) != "\x00asm" {
		return nil, 0, errors.New("not a wasm module")
	}
	var secs []section
	for i := 8; i < len(mod); {
		r := &reader{b: mod, i: i + 1}
		n := int(r.u32())
		if r.err != nil || r.i+n > len(mod) {
			return nil, 0, errors.New("bad section header")
		}
		secs = append(secs, section{id: mod[i], hdr: i, start: r.i, end: r.i + n})
		i = r.i + n
	}
	// Find the global's index (exports) and its address (globals).
	var importedGlobals uint32
	globalIdx := int64(-1)
	inits := map[uint32]int64{}
	for _, s := range secs {
		r := &reader{b: mod[:s.end], i: s.start}
		switch s.id {
		case 2:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.name()
				r.name()
				switch r.byte1() {
				case 0:
					r.u32()
				case 1:
					r.byte1()
					r.limits()
				case 2:
					r.limits()
				case 3:
					r.byte1()
					r.byte1()
					importedGlobals++
				}
			}
		case 6:
			n := r.u32()
			mutable := 0
			for k := uint32(0); k < n && r.err == nil; k++ {
				r.byte1() // type
				if r.byte1() == 1 {
					mutable++
				}
				if op := r.byte1(); op == 0x41 {
					inits[importedGlobals+k] = r.sleb()
					if r.byte1() != 0x0B {
						return nil, 0, errors.New("unexpected global init expression")
					}
				} else {
					// skip a non-i32.const init to its end
					for r.err == nil && r.byte1() != 0x0B {
					}
				}
			}
			// A snapshot of an instance restores its memory and
			// __stack_pointer: any other mutable global would be lost.
			if mutable != 1 {
				return nil, 0, fmt.Errorf("%d mutable globals, want 1 (__stack_pointer)", mutable)
			}
		case 7:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				name := r.name()
				kind := r.byte1()
				idx := r.u32()
				if kind == 3 && name == global {
					globalIdx = int64(idx)
				}
			}
		}
		if r.err != nil {
			return nil, 0, fmt.Errorf("section %d: %w", s.id, r.err)
		}
	}
	addr, ok := inits[uint32(globalIdx)]
	if globalIdx < 0 || !ok {
		return nil, 0, fmt.Errorf("no exported i32 global %q", global)
	}
	check := appendSleb([]byte{0x41}, addr)
	check = append(check, 0x28, 0x02, 0x00) // i32.load align=4 offset=0
	check = append(check, 0x04, 0x40, 0x00, 0x0B)

	out := append([]byte(nil), mod[:8]...)
	loops := 0
	for _, s := range secs {
		if s.id != 10 {
			out = append(out, mod[s.hdr:s.end]...)
			continue
		}
		code, n, err := instrumentCode(mod[s.start:s.end], check)
		if err != nil {
			return nil, 0, err
		}
		loops += n
		out = append(out, 10)
		out = binary.AppendUvarint(out, uint64(len(code)))
		out = append(out, code...)
	}
	return out, loops, nil
}

func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7F)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func instrumentCode(payload, check []byte) ([]byte, int, error) {
	r := &reader{b: payload}
	n := r.u32()
	out := binary.AppendUvarint(nil, uint64(n))
	loops := 0
	for f := uint32(0); f < n && r.err == nil; f++ {
		size := int(r.u32())
		end := r.i + size
		if end > len(payload) {
			return nil, 0, errors.New("truncated function body")
		}
		body := &reader{b: payload[:end], i: r.i}
		for nl := body.u32(); nl > 0 && body.err == nil; nl-- {
			body.u32()
			body.byte1()
		}
		nb := append([]byte(nil), payload[r.i:body.i]...)
		last := body.i
		for body.i < end && body.err == nil {
			op := body.byte1()
			switch {
			case op == 0x02 || op == 0x04:
				blockType(body)
			case op == 0x03: // loop
				blockType(body)
				nb = append(nb, payload[last:body.i]...)
				nb = append(nb, check...)
				last = body.i
				loops++
			case op == 0x0C || op == 0x0D || op == 0x10 || op == 0x12 || (op >= 0x20 && op <= 0x26) || op == 0xD2:
				body.u32()
			case op == 0x0E:
				for k := body.u32(); k > 0 && body.err == nil; k-- {
					body.u32()
				}
				body.u32()
			case op == 0x11 || op == 0x13:
				body.u32()
				body.u32()
			case op == 0x1C:
				body.i += int(body.u32())
			case op >= 0x28 && op <= 0x3E:
				body.u32()
				body.u32()
			case op == 0x3F || op == 0x40:
				body.byte1()
			case op == 0x41 || op == 0x42:
				body.sleb()
			case op == 0x43:
				body.i += 4
			case op == 0x44:
				body.i += 8
			case op == 0xD0:
				body.byte1()
			case op == 0xFC:
				switch sub := body.u32(); {
				case sub <= 7:
				case sub == 8:
					body.u32()
					body.byte1()
				case sub == 9 || sub == 13 || (sub >= 15 && sub <= 17):
					body.u32()
				case sub == 10:
					body.byte1()
					body.byte1()
				case sub == 11:
					body.byte1()
				case sub == 12 || sub == 14:
					body.u32()
					body.u32()
				default:
					return nil, 0, fmt.Errorf("function %d: opcode 0xFC %d not handled", f, sub)
				}
			case op == 0xFD:
				return nil, 0, fmt.Errorf("function %d: SIMD not handled", f)
			case op == 0x06 || op == 0x07 || op == 0x08 || op == 0x09 || op == 0x18 || op == 0x19 || op == 0x1F:
				return nil, 0, fmt.Errorf("function %d: exception-handling opcode %#x not handled", f, op)
			}
		}
		if body.err != nil {
			return nil, 0, fmt.Errorf("function %d: %w", f, body.err)
		}
		nb = append(nb, payload[last:end]...)
		out = binary.AppendUvarint(out, uint64(len(nb)))
		out = append(out, nb...)
		r.i = end
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	return out, loops, nil
}

func blockType(r *reader) {
	switch c := r.b[r.i]; c {
	case 0x40, 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
		r.i++
	default:
		r.sleb() // type index (s33)
	}
}

// Command stopcheck is the last step of the engine's build (../build.sh): it
// rewrites a WebAssembly module so that every loop, each time it repeats
// (before a branch back to its header; at the header itself for a loop that
// br_table branches back to), counts down a new exported mutable global,
// "qjs_tick", and when it reaches zero calls the imported function
// env.tick, trapping if that returns non-zero:
//
//	global.get $qjs_tick
//	i32.const 1
//	i32.sub
//	global.set $qjs_tick
//	global.get $qjs_tick
//	i32.eqz
//	if
//	  call $env.tick     ;; the host resets qjs_tick; non-zero: stop
//	  if
//	    unreachable
//	  end
//	end
//
// Every long-running piece of wasm code repeats a loop (deep recursion is
// bounded by the stack), so the host gets control back every so many loop
// iterations, inside QuickJS's own C loops too, and can stop the guest
// there. A loop that ends in its first iteration, as most of QuickJS's
// hash-chain and list walks do, runs no check. The count is the guest's own state, so no optimizer can hoist the
// check; a flag the host sets from outside, by contrast, is kept in a
// register by an optimising compiler between calls (a mutable global) and a
// loop without calls never sees it change. The call also matters for the
// Go runtime: code running in wasm cannot be preempted, so a garbage
// collection that stops the world waits until the guest enters Go again.
//
// With -data, the module is written without its data section, and the
// section's contents to the file given (see qjs.DATA).
//
// Usage: go run ./internal/qjs/stopcheck [-data out.data] in.wasm out.wasm
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
)

// skipChecks leaves the loops as they are (-nochecks).
var skipChecks bool

// dropStart drops the start section (-nostart): with the memory imported,
// the linker makes a start function, __wasm_init_memory, that zeroes the
// bss, which would zero part of a snapshot's image each time an instance
// is made from it. A new memory is zeros already.
var dropStart bool

// maxDepth, if not zero, is the bound of the depth checks (-depth, see
// depth.go); depthChecked counts the functions that got one.
var (
	maxDepth     int
	depthChecked int
)

func main() {
	noChecks := flag.Bool("nochecks", false, "add qjs_tick but no loop checks (to measure their cost)")
	dataOut := flag.String("data", "", "write the data section to this file, and the module without it")
	depth := flag.Int("depth", 0, "bound every cycle of the call graph at this depth (0: no depth checks)")
	noStart := flag.Bool("nostart", false, "drop the start function, which must be the linker's __wasm_init_memory")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: stopcheck [-nochecks] [-data out.data] in.wasm out.wasm")
		os.Exit(2)
	}
	skipChecks = *noChecks
	maxDepth = *depth
	dropStart = *noStart
	in, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, checks, err := instrument(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stopcheck:", err)
		os.Exit(1)
	}
	if *dataOut != "" {
		var data []byte
		if out, data, err = split(out); err == nil {
			err = os.WriteFile(*dataOut, data, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "stopcheck:", err)
			os.Exit(1)
		}
	}
	if err := os.WriteFile(flag.Arg(1), out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("stopcheck: %d loop checks\n", checks)
	if maxDepth > 0 {
		fmt.Printf("stopcheck: %d functions in call cycles, depth bound %d\n", depthChecked, maxDepth)
	}
}

// split returns the module without its data section (and without the
// data count section, which is valid only with it), and that section's
// contents (see qjs.DATA).
func split(b []byte) (module, data []byte, err error) {
	secs, err := sections(b)
	if err != nil {
		return nil, nil, err
	}
	module = append(make([]byte, 0, len(b)), b[:8]...)
	for _, s := range secs {
		switch s.id {
		case 11:
			data = b[s.start:s.end]
		case 12: // data count
		default:
			module = append(module, b[s.hdr:s.end]...)
		}
	}
	if data == nil {
		return nil, nil, errors.New("no data section")
	}
	return module, data, nil
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

// imports reads the import section at r, calling f with each import's
// module, name and kind (0 a function, 1 a table, 2 a memory, 3 a global).
func (r *reader) imports(f func(module, name string, kind byte)) {
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		m := r.name()
		name := r.name()
		kind := r.byte1()
		switch kind {
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
		}
		f(m, name, kind)
	}
}

type section struct {
	id         byte
	hdr, start int
	end        int
}

// sections lists the sections of module mod.
func sections(mod []byte) ([]section, error) {
	if len(mod) < 8 || string(mod[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm module")
	}
	var secs []section
	for i := 8; i < len(mod); {
		r := &reader{b: mod, i: i + 1}
		n := int(r.u32())
		if r.err != nil || n < 0 || r.i+n > len(mod) {
			return nil, errors.New("bad section header")
		}
		secs = append(secs, section{id: mod[i], hdr: i, start: r.i, end: r.i + n})
		i = r.i + n
	}
	return secs, nil
}

// tickName and tickImport name the counter global stopcheck adds and the
// host function it calls.
const (
	tickName         = "qjs_tick"
	tickModule       = "env"
	tickImport       = "tick"
	tickInitialValue = 10000
)

// instrument returns mod with the tick check wherever a loop repeats (see
// instrumentCode) and the number of checks added.
func instrument(mod []byte) ([]byte, int, error) {
	secs, err := sections(mod)
	if err != nil {
		return nil, 0, err
	}
	var importedGlobals, importedFuncs, globals uint32
	tickFunc := int64(-1)
	for _, s := range secs {
		r := &reader{b: mod[:s.end], i: s.start}
		switch s.id {
		case 2:
			r.imports(func(m, name string, kind byte) {
				switch kind {
				case 0:
					if m == tickModule && name == tickImport {
						tickFunc = int64(importedFuncs)
					}
					importedFuncs++
				case 3:
					importedGlobals++
				}
			})
		case 6:
			globals = r.u32()
			mutable := 0
			for k := uint32(0); k < globals && r.err == nil; k++ {
				r.byte1() // type
				if r.byte1() == 1 {
					mutable++
				}
				for r.err == nil && r.byte1() != 0x0B { // the init expression
				}
			}
			// A snapshot of an instance restores its memory, the stack
			// pointer and qjs_tick: any other mutable global would be lost.
			if mutable != 1 {
				return nil, 0, fmt.Errorf("%d mutable globals, want 1 (__stack_pointer)", mutable)
			}
		}
		if r.err != nil {
			return nil, 0, fmt.Errorf("section %d: %w", s.id, r.err)
		}
	}
	skip, bulk, err := uncheckedFuncs(mod, secs, importedFuncs)
	if err != nil {
		return nil, 0, err
	}
	// __wasm_init_memory fills the bss with memory.fill, once, in the
	// start function; with -nostart it is never called.
	initMemory := map[uint32]bool{}
	if dropStart {
		for f := range bulk {
			if bulkNames[f] == "__wasm_init_memory" {
				initMemory[f] = true
			}
		}
	}
	if tickFunc < 0 {
		return nil, 0, fmt.Errorf("no imported function %s.%s", tickModule, tickImport)
	}
	g := importedGlobals + globals // the new global's index
	var dc *depthCheck
	if maxDepth > 0 {
		if dc, err = newDepthCheck(mod, secs, importedFuncs, g+1, maxDepth); err != nil {
			return nil, 0, err
		}
		depthChecked = len(dc.cyclic)
	}
	var check []byte
	check = binary.AppendUvarint(append(check, 0x23), uint64(g))
	check = append(check, 0x41, 0x01, 0x6B)
	check = binary.AppendUvarint(append(check, 0x24), uint64(g))
	check = binary.AppendUvarint(append(check, 0x23), uint64(g))
	check = append(check, 0x45, 0x04, 0x40)
	check = binary.AppendUvarint(append(check, 0x10), uint64(tickFunc))
	check = append(check, 0x04, 0x40, 0x00, 0x0B, 0x0B)

	out := append([]byte(nil), mod[:8]...)
	emit := func(id byte, payload []byte) {
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(payload)))
		out = append(out, payload...)
	}
	checks := 0
	for _, s := range secs {
		payload := mod[s.start:s.end]
		switch s.id {
		case 6: // globals: append (mut i32) = tickInitialValue
			r := &reader{b: payload}
			n := r.u32()
			p := binary.AppendUvarint(nil, uint64(n+1))
			p = append(p, payload[r.i:]...)
			if dc != nil {
				p = binary.AppendUvarint(nil, uint64(n+2))
				p = append(p, payload[r.i:]...)
			}
			p = appendSleb(append(p, 0x7F, 0x01, 0x41), tickInitialValue)
			p = append(p, 0x0B)
			if dc != nil { // qjs_depth, (mut i32) = 0
				p = append(p, 0x7F, 0x01, 0x41, 0x00, 0x0B)
			}
			emit(6, p)
		case 7: // exports: add qjs_tick
			r := &reader{b: payload}
			n := r.u32()
			added := uint64(1)
			if dc != nil {
				added++
			}
			p := binary.AppendUvarint(nil, uint64(n)+added)
			p = append(p, payload[r.i:]...)
			p = binary.AppendUvarint(p, uint64(len(tickName)))
			p = append(p, tickName...)
			p = binary.AppendUvarint(append(p, 0x03), uint64(g))
			if dc != nil {
				p = binary.AppendUvarint(p, uint64(len(depthName)))
				p = append(p, depthName...)
				p = binary.AppendUvarint(append(p, 0x03), uint64(g+1))
			}
			emit(7, p)
		case 8:
			if !dropStart {
				out = append(out, mod[s.hdr:s.end]...)
				break
			}
			r := &reader{b: payload}
			if f := r.u32(); r.err != nil || !initMemory[f-importedFuncs] {
				return nil, 0, errors.New("the start function is not __wasm_init_memory")
			}
		case 10:
			code, n, err := instrumentCode(payload, check, skip, bulk, dc)
			if err != nil {
				return nil, 0, err
			}
			checks += n
			emit(10, code)
		default:
			out = append(out, mod[s.hdr:s.end]...)
		}
	}
	return out, checks, nil
}

// unchecked names the functions whose loops get no check: the
// interpreter's dispatch loop, where a check would cost every bytecode
// (~18% of compute measured); QuickJS polls its interrupt handler there
// itself, on every backward jump and call (js_poll_interrupts), and the
// handler calls env.tick. Its other loops are bounded by the sizes of the
// function being run (arguments, variables).
var unchecked = map[string]bool{"JS_CallInternal": true}

// bulkFuncs names the only functions allowed to use memory.copy and
// memory.fill (shim/bulk.c): each instruction runs to its end without a
// stop check, so a large one could not be stopped; these three work in
// chunks with a check between them. A memory.copy or memory.fill anywhere
// else (a file compiled with bulk memory) is refused.
var bulkFuncs = map[string]bool{"memcpy": true, "memmove": true, "memset": true, "__wasm_init_memory": true}

// bulkNames names the functions of uncheckedFuncs' bulk.
var bulkNames = map[uint32]string{}

// uncheckedFuncs maps the functions named in unchecked to their index in
// the code section, from the name section; every name must be found. It
// also returns the indexes of bulkFuncs.
func uncheckedFuncs(mod []byte, secs []section, importedFuncs uint32) (skip, bulk map[uint32]bool, err error) {
	skip, bulk = map[uint32]bool{}, map[uint32]bool{}
	for _, s := range secs {
		if s.id != 0 {
			continue
		}
		r := &reader{b: mod[:s.end], i: s.start}
		if r.name() != "name" {
			continue
		}
		for r.i < s.end && r.err == nil {
			id := r.byte1()
			n := int(r.u32())
			end := r.i + n
			if id == 1 {
				for k := r.u32(); k > 0 && r.err == nil; k-- {
					idx := r.u32()
					name := r.name()
					if unchecked[name] && idx >= importedFuncs {
						skip[idx-importedFuncs] = true
					}
					if bulkFuncs[name] && idx >= importedFuncs {
						bulk[idx-importedFuncs] = true
						bulkNames[idx-importedFuncs] = name
					}
				}
			}
			r.i = end
		}
		if r.err != nil {
			return nil, nil, fmt.Errorf("name section: %w", r.err)
		}
	}
	if len(skip) != len(unchecked) {
		return nil, nil, fmt.Errorf("found %d of the %d functions left unchecked (is the name section stripped?)", len(skip), len(unchecked))
	}
	return skip, bulk, nil
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

// instrumentCode adds the stop check to the code section's functions. A
// loop is checked where it repeats, not where it is entered: before each
// branch back to its header (br, and br_if as "if, check, br"), so that a
// loop that runs once, as most of QuickJS's hash-chain and list walks do,
// runs no check (RATIONALE.md, "Loop checks on the back edge"). A loop some
// br_table branches back to, or whose block type is a type index (it
// could take parameters), is checked at its header instead. It returns the
// section and the number of checks added.
func instrumentCode(payload, check []byte, skip, bulk map[uint32]bool, dc *depthCheck) ([]byte, int, error) {
	r := &reader{b: payload}
	n := r.u32()
	out := binary.AppendUvarint(nil, uint64(n))
	checks := 0
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
		code := body.i
		var nb []byte
		loops := !skipChecks && !skip[f]
		deep := dc != nil && dc.cyclic[f]
		if !loops && !deep {
			if err := walk(body, end, f, bulk, nil); err != nil {
				return nil, 0, err
			}
			nb = payload[r.i:end]
		} else {
			// First the loops to check at their header, then the checks.
			header := map[int]bool{}
			if err := walk(body, end, f, bulk, func(in instr) {
				switch {
				case in.op == 0x03 && in.typeIndex:
					header[in.loop] = true
				case in.op == 0x0E:
					for _, t := range in.targets {
						if t >= 0 {
							header[t] = true
						}
					}
				}
			}); err != nil {
				return nil, 0, err
			}
			nb = append(nb, payload[r.i:code]...)
			if deep {
				// The depth check, then the body in a block of the
				// function's results, so that a branch out of the body
				// leaves by the decrement after it.
				nb = append(nb, dc.enter...)
				bt, err := dc.blockType(f)
				if err != nil {
					return nil, 0, err
				}
				nb = append(nb, 0x02, bt)
			}
			last := code
			body.i = code
			err := walk(body, end, f, bulk, func(in instr) {
				switch {
				case in.op == 0x0F && deep:
					nb = append(nb, payload[last:in.start]...)
					nb = append(nb, dc.leave...)
					last = in.start
				case !loops:
				case in.op == 0x03 && header[in.loop]:
					nb = append(nb, payload[last:in.end]...)
					nb = append(nb, check...)
					last = in.end
					checks++
				case in.op == 0x0C && in.target >= 0 && !header[in.target]:
					nb = append(nb, payload[last:in.start]...)
					nb = append(nb, check...)
					last = in.start
					checks++
				case in.op == 0x0D && in.target >= 0 && !header[in.target]:
					// br_if l: if; check; br l+1; end
					nb = append(nb, payload[last:in.start]...)
					nb = append(nb, 0x04, 0x40)
					nb = append(nb, check...)
					nb = binary.AppendUvarint(append(nb, 0x0C), uint64(in.label+1))
					nb = append(nb, 0x0B)
					last = in.end
					checks++
				}
			})
			if err != nil {
				return nil, 0, err
			}
			nb = append(nb, payload[last:end]...)
			if deep { // the body's end closed the block: leave, end
				nb = append(nb, dc.leave...)
				nb = append(nb, 0x0B)
			}
		}
		out = binary.AppendUvarint(out, uint64(len(nb)))
		out = append(out, nb...)
		r.i = end
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	return out, checks, nil
}

// instr is an instruction walk reports: its opcode and extent; for a loop
// its ordinal in the function (loop) and whether its block type is a type
// index; for br and br_if its label and the ordinal of its target if that
// is a loop (target, else -1); for br_table the same for each of its
// targets.
type instr struct {
	op         byte
	start, end int
	loop       int
	typeIndex  bool
	label      uint32
	target     int
	callee     uint32 // call, return_call: the function called
	targets    []int
}

// walk decodes a function's code from body's position to end, keeping
// the stack of open blocks, and calls visit (if not nil) for every loop,
// br, br_if, br_table, return and call. It refuses what the module must
// not contain: a bulk memory instruction outside bulk's functions (unless
// bulk is nil), SIMD, exceptions.
func walk(body *reader, end int, f uint32, bulk map[uint32]bool, visit func(instr)) error {
	var stack []int // per open block: its loop ordinal, or -1
	loops := 0
	target := func(l uint32) int {
		if int(l) >= len(stack) {
			return -1 // the function's own block
		}
		return stack[len(stack)-1-int(l)]
	}
	for body.i < end && body.err == nil {
		start := body.i
		op := body.byte1()
		switch {
		case op == 0x02 || op == 0x04:
			blockType(body)
			stack = append(stack, -1)
		case op == 0x03: // loop
			typeIndex := blockType(body)
			stack = append(stack, loops)
			if visit != nil {
				visit(instr{op: op, start: start, end: body.i, loop: loops, typeIndex: typeIndex})
			}
			loops++
		case op == 0x0B:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case op == 0x0C || op == 0x0D:
			l := body.u32()
			if visit != nil {
				visit(instr{op: op, start: start, end: body.i, label: l, target: target(l)})
			}
		case op == 0x0E:
			var ts []int
			for k := body.u32(); k > 0 && body.err == nil; k-- {
				ts = append(ts, target(body.u32()))
			}
			ts = append(ts, target(body.u32()))
			if visit != nil {
				visit(instr{op: op, start: start, end: body.i, targets: ts})
			}
		case op == 0x0F:
			if visit != nil {
				visit(instr{op: op, start: start, end: body.i})
			}
		case op == 0x10 || op == 0x12:
			callee := body.u32()
			if visit != nil {
				visit(instr{op: op, start: start, end: body.i, callee: callee})
			}
		case (op >= 0x20 && op <= 0x26) || op == 0xD2:
			body.u32()
		case op == 0x11 || op == 0x13:
			body.u32()
			body.u32()
			if visit != nil {
				visit(instr{op: op, start: start, end: body.i})
			}
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
			case sub == 10 || sub == 11:
				if bulk != nil && !bulk[f] {
					return fmt.Errorf("function %d: memory.copy or memory.fill outside %v (a file compiled with bulk memory?)", f, bulkFuncs)
				}
				body.byte1()
				if sub == 10 {
					body.byte1()
				}
			case sub == 12 || sub == 14:
				body.u32()
				body.u32()
			default:
				return fmt.Errorf("function %d: opcode 0xFC %d not handled", f, sub)
			}
		case op == 0xFD:
			return fmt.Errorf("function %d: SIMD not handled", f)
		case op == 0x06 || op == 0x07 || op == 0x08 || op == 0x09 || op == 0x18 || op == 0x19 || op == 0x1F:
			return fmt.Errorf("function %d: exception-handling opcode %#x not handled", f, op)
		}
	}
	if body.err != nil {
		return fmt.Errorf("function %d: %w", f, body.err)
	}
	return nil
}

// blockType skips a block type and reports whether it is a type index
// (a block that may take parameters) rather than empty or one value type.
func blockType(r *reader) bool {
	switch c := r.b[r.i]; c {
	case 0x40, 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
		r.i++
		return false
	default:
		r.sleb() // type index (s33)
		return true
	}
}

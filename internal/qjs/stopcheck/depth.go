package main

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The depth checks (-depth N): every function that lies on a cycle of the
// module's static call graph counts its activations in a new exported
// mutable global, "qjs_depth", and traps (unreachable) when an entry
// would make it exceed N:
//
//	global.get $qjs_depth
//	i32.const 1
//	i32.add
//	global.set $qjs_depth
//	global.get $qjs_depth
//	i32.const N
//	i32.gt_u
//	if
//	  unreachable
//	end
//	block (result ...)   ;; the function's body
//	  ...
//	end
//	global.get $qjs_depth ;; and before every return
//	i32.const 1
//	i32.sub
//	global.set $qjs_depth
//
// A run of calls without a cyclic function on it is a path of the
// acyclic rest of the graph, so it is bounded by the module itself; with
// every cycle bounded at N activations, the depth of the native stack of
// a translation of the module to Go (wasm2go), which has no call-depth
// limit of its own and whose overflow ends the process, is bounded by
// construction. A trap unwinds without the decrements: the host sets the
// global back to zero whenever it starts a sandbox.
//
// The graph: a call is an edge to its callee; a call_indirect an edge to
// every function whose address is in a table (the element segments); a
// call of an import through which the host may call the module again
// (every import of "env" but tick and host_result: a host function may
// run a nested call of the sandbox) an edge to every exported function.

// depthName names the depth global.
const depthName = "qjs_depth"

// reentrant names the imports of tickModule after which the host may
// call into the module again.
var notReentrant = map[string]bool{"tick": true, "host_result": true}

type depthCheck struct {
	cyclic       map[uint32]bool // defined functions (code section index) on a cycle
	enter, leave []byte
	results      [][]byte // per defined function: its result types
}

// newDepthCheck computes the call graph of mod, its strongly connected
// components, and the instructions of the check for global g and bound
// max.
func newDepthCheck(mod []byte, secs []section, importedFuncs, g uint32, max int) (*depthCheck, error) {
	var (
		types     [][]byte // results of each function type
		funcType  []uint32 // type of each defined function
		reenter   []uint32 // imported functions that may re-enter
		exported  []uint32 // exported functions (module index)
		tableFns  []uint32 // functions in the element segments
		codeStart = -1
	)
	var codeSec section
	for _, s := range secs {
		r := &reader{b: mod[:s.end], i: s.start}
		switch s.id {
		case 1:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				if r.byte1() != 0x60 {
					return nil, errors.New("type section: not a function type")
				}
				np := r.u32()
				r.i += int(np)
				nr := r.u32()
				if r.i+int(nr) > len(r.b) {
					return nil, errors.New("type section: truncated")
				}
				types = append(types, r.b[r.i:r.i+int(nr)])
				r.i += int(nr)
			}
		case 2:
			fi := uint32(0)
			r.imports(func(m, name string, kind byte) {
				if kind != 0 {
					return
				}
				if m == tickModule && !notReentrant[name] {
					reenter = append(reenter, fi)
				}
				fi++
			})
		case 3:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				funcType = append(funcType, r.u32())
			}
		case 7:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.name()
				kind := r.byte1()
				idx := r.u32()
				if kind == 0 {
					exported = append(exported, idx)
				}
			}
		case 9:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				if flags := r.u32(); flags != 0 {
					return nil, fmt.Errorf("element segment of flags %d not handled", flags)
				}
				for r.err == nil && r.byte1() != 0x0B { // the offset expression
				}
				for k := r.u32(); k > 0 && r.err == nil; k-- {
					tableFns = append(tableFns, r.u32())
				}
			}
		case 10:
			codeSec, codeStart = s, s.start
		}
		if r.err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, r.err)
		}
	}
	if codeStart < 0 {
		return nil, errors.New("no code section")
	}
	// The graph over all functions (module index space); imports are nodes
	// too, so that a re-entering import closes the cycles through the host.
	nFuncs := importedFuncs + uint32(len(funcType))
	edges := make([][]uint32, nFuncs)
	for _, imp := range reenter {
		edges[imp] = append(edges[imp], exported...)
	}
	r := &reader{b: mod[:codeSec.end], i: codeSec.start}
	n := r.u32()
	if n != uint32(len(funcType)) {
		return nil, errors.New("code and function sections differ")
	}
	for f := uint32(0); f < n && r.err == nil; f++ {
		size := int(r.u32())
		end := r.i + size
		body := &reader{b: mod[:end], i: r.i}
		for nl := body.u32(); nl > 0 && body.err == nil; nl-- {
			body.u32()
			body.byte1()
		}
		self := importedFuncs + f
		indirect := false
		err := walk(body, end, f, nil, func(in instr) {
			switch in.op {
			case 0x10:
				edges[self] = append(edges[self], in.callee)
			case 0x11:
				indirect = true
			}
		})
		if err != nil {
			return nil, err
		}
		if indirect {
			edges[self] = append(edges[self], tableFns...)
		}
		r.i = end
	}
	if r.err != nil {
		return nil, r.err
	}
	dc := &depthCheck{cyclic: map[uint32]bool{}}
	for _, comp := range sccs(edges) {
		cyc := len(comp) > 1
		if !cyc {
			v := comp[0]
			for _, w := range edges[v] {
				if w == v {
					cyc = true
				}
			}
		}
		if !cyc {
			continue
		}
		for _, v := range comp {
			if v >= importedFuncs {
				dc.cyclic[v-importedFuncs] = true
			}
		}
	}
	for _, t := range funcType {
		if int(t) >= len(types) {
			return nil, errors.New("function of an unknown type")
		}
		dc.results = append(dc.results, types[t])
	}
	gl := binary.AppendUvarint(nil, uint64(g))
	dc.enter = cat(
		[]byte{0x23}, gl, []byte{0x41, 0x01, 0x6A, 0x24}, gl,
		[]byte{0x23}, gl, appendSleb([]byte{0x41}, int64(max)), []byte{0x4B, 0x04, 0x40, 0x00, 0x0B})
	dc.leave = cat([]byte{0x23}, gl, []byte{0x41, 0x01, 0x6B, 0x24}, gl)
	return dc, nil
}

// blockType is the block type of a block holding function f's body: its
// result, or none.
func (dc *depthCheck) blockType(f uint32) (byte, error) {
	switch res := dc.results[f]; len(res) {
	case 0:
		return 0x40, nil
	case 1:
		return res[0], nil
	default:
		return 0, fmt.Errorf("function %d: %d results not handled", f, len(res))
	}
}

// sccs returns the strongly connected components of the graph (Tarjan's
// algorithm, iterative: the graph's paths are long).
func sccs(edges [][]uint32) [][]uint32 {
	n := len(edges)
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []uint32
	var out [][]uint32
	next := 0
	type frame struct {
		v uint32
		e int
	}
	for root := 0; root < n; root++ {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{uint32(root), 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, uint32(root))
		on[root] = true
		for len(call) > 0 {
			fr := &call[len(call)-1]
			v := fr.v
			if fr.e < len(edges[v]) {
				w := edges[v][fr.e]
				fr.e++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				var comp []uint32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				out = append(out, comp)
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
		}
	}
	return out
}

// cat is bs, one after the other.
func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

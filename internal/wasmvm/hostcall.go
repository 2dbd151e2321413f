package wasmvm

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// sandboxCtx is the context of a call into the guest: the caller's, and
// the sandbox its host functions answer for (sandboxOf).
type sandboxCtx struct {
	context.Context
	s *Sandbox
}

func (c *sandboxCtx) Value(key any) any {
	if key == (sandboxKey{}) {
		return c.s
	}
	return c.Context.Value(key)
}

// sandboxOf is the sandbox a host function answers for: a type assertion
// where the context is the call's own (a lookup through context.Value was
// 3% of a host call), the lookup otherwise.
func sandboxOf(ctx context.Context) *Sandbox {
	if c, ok := ctx.(*sandboxCtx); ok {
		return c.s
	}
	s, _ := ctx.Value(sandboxKey{}).(*Sandbox)
	return s
}

// hostCall is env.host_call(fn, argv, argc) -> status: the arguments are
// argc slots at argv (tag, len, f64 or pointer); the answer goes to the
// control block's ret slot. Its text or bytes (if any) go to the buffer the
// call offered in that slot (pointer and size) when they fit, the pointer
// left in the payload; otherwise the payload is 0 and they wait in the
// sandbox for host_result. Status 0 is an answer, 1 a failure that spends
// the sandbox.
func hostCall(ctx context.Context, mem memory, stack []uint64) {
	s := sandboxOf(ctx)
	if s == nil {
		stack[0] = 1
		return
	}
	fn, argv, argc := uint32(stack[0]), uint32(stack[1]), uint32(stack[2])
	stack[0] = 1
	var f namedFunc
	switch {
	case fn == hostFn && s.hostFn != nil:
		f = namedFunc{"shim", s.hostFn}
	case fn < uint32(len(s.funcs)):
		f = s.funcs[fn]
	default:
		return
	}
	raw, ok := mem.Read(argv, argc*slotSize)
	if !ok {
		return
	}
	// The buffer the call offers for the answer's text (the shim's
	// offer_answer), read before the host function runs.
	offer, ok := mem.Read(s.ctl+ctlRet, slotSize)
	if !ok {
		return
	}
	offerLen, offerPtr := binary.LittleEndian.Uint32(offer[4:]), binary.LittleEndian.Uint32(offer[8:])
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
		case tagBytes:
			// A view of the guest's memory: no guest code runs until the
			// host function returns.
			b, ok := mem.Read(binary.LittleEndian.Uint32(sl[8:]), n)
			if !ok {
				return
			}
			v = Value{Kind: Bytes, Bytes: b}
		default:
			return
		}
		args = append(args, v)
	}
	s.args = args
	ret, err, panicked := callHost(ctx, f.fn, args)
	clear(s.args)
	if panicked != nil {
		s.fault = &HostPanicError{Name: f.name, Value: panicked}
		storeWord(s.stopWord, 1)
		return
	}
	var tag uint32
	var text string
	var bytes []byte
	s.pending = s.pending[:0]
	if err != nil {
		tag = tagError
		text = err.Error()
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
		case String:
			tag, text = tagString, ret.Text
		case JSON:
			tag, text = tagJSON, ret.Text
		case Bytes:
			tag, bytes = tagBytes, ret.Bytes
		case Async:
			tag = tagAsync
		case Error:
			tag, text = tagError, ret.Text
		default:
			tag = tagError
			text = fmt.Sprintf("host function %q returned a value of unknown kind %d", f.name, ret.Kind)
		}
	}
	var payload uint64
	n := len(text) + len(bytes) // one of them
	switch tag {
	case tagNumber, tagAsync:
		payload = math.Float64bits(ret.Number)
	case tagString, tagJSON, tagError, tagBytes:
		// Text or bytes shorter than the offered buffer go there with a
		// NUL after them, the buffer's address in the payload: the guest
		// needs no second crossing (host_result) for them. Longer ones
		// wait in pending.
		if offerPtr != 0 && uint64(n) < uint64(offerLen) {
			if b, ok := mem.Read(offerPtr, uint32(n)+1); ok {
				if bytes != nil {
					copy(b, bytes)
				} else {
					copy(b, text)
				}
				b[n] = 0
				payload = uint64(offerPtr)
				break
			}
		}
		s.pending = append(s.pending, text...)
		s.pending = append(s.pending, bytes...)
	}
	// The answer is written in place, through a view of the slot: a Go
	// array handed to mem.Write would escape, an allocation per call.
	slot, ok := mem.Read(s.ctl+ctlRet, slotSize)
	if !ok {
		return
	}
	binary.LittleEndian.PutUint32(slot[0:], tag)
	binary.LittleEndian.PutUint32(slot[4:], uint32(n))
	binary.LittleEndian.PutUint64(slot[8:], payload)
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
func hostResult(ctx context.Context, mem memory, stack []uint64) {
	s := sandboxOf(ctx)
	if s == nil {
		return
	}
	mem.Write(uint32(stack[0]), s.pending)
	s.pending = s.pending[:0]
}

// loadModule is env.load_module(name, len, what) -> status: it asks the
// sandbox's module hooks for the source of the module name (what 0), the
// source to compile instead (1) or its import.meta.url (2), and leaves the
// text for host_result, its length in the control block's ret slot.
// Status: 0 the text, 1 an error message, 2 the native globals module (the
// text: its export names, each ended by NUL), 3 none.
func loadModule(ctx context.Context, mem memory, stack []uint64) {
	s := sandboxOf(ctx)
	if s == nil {
		stack[0] = 1
		return
	}
	b, ok := mem.Read(uint32(stack[0]), uint32(stack[1]))
	name, what := string(b), uint32(stack[2])
	s.pending = s.pending[:0]
	status := uint64(1)
	h := &s.modules
	var globals []string
	if ok && what != 1 && what != 2 && h.Globals != nil {
		globals = h.Globals(name)
	}
	switch {
	case !ok:
		s.pending = append(s.pending, "bad name"...)
	case what == 1 || what == 2:
		status = 3
		text, err, panicked := callHook(func() (string, error) {
			if what == 1 && h.Fallback != nil {
				return h.Fallback(name)
			}
			if what == 2 && h.URL != nil {
				return h.URL(name), nil
			}
			return "", nil
		})
		if panicked != nil || err != nil || text != "" {
			status = s.hookAnswer(text, err, panicked, "")
		}
	case globals != nil:
		for _, n := range globals {
			s.pending = append(s.pending, n...)
			s.pending = append(s.pending, 0)
		}
		status = 2
	case h.Load == nil:
		s.pending = append(s.pending, "no modules can be imported"...)
	default:
		src, err, panicked := callHook(func() (string, error) { return h.Load(ctx, name) })
		status = s.hookAnswer(src, err, panicked, "module loader failed")
	}
	mem.WriteUint32Le(s.ctl+ctlRet+4, uint32(len(s.pending)))
	stack[0] = status
}

// normalizeModule is env.normalize_module(base, blen, name, nlen) -> status:
// the name of the module that name refers to when module base imports it,
// from the hooks' Normalize, or QuickJS's own rule (see normalizeName).
func normalizeModule(ctx context.Context, mem memory, stack []uint64) {
	s := sandboxOf(ctx)
	if s == nil {
		stack[0] = 1
		return
	}
	if n := stack[3]; n > MaxSpecifier {
		s.pending = fmt.Appendf(s.pending[:0], "the module specifier is %d bytes long, over the bound of %d bytes", n, MaxSpecifier)
		mem.WriteUint32Le(s.ctl+ctlRet+4, uint32(len(s.pending)))
		stack[0] = 1
		return
	}
	bb, ok1 := mem.Read(uint32(stack[0]), uint32(stack[1]))
	nb, ok2 := mem.Read(uint32(stack[2]), uint32(stack[3]))
	base, name := string(bb), string(nb)
	s.pending = s.pending[:0]
	status := uint64(1)
	switch {
	case !ok1 || !ok2:
		s.pending = append(s.pending, "bad name"...)
	case s.modules.Normalize == nil:
		s.pending = append(s.pending, normalizeName(base, name)...)
		status = 0
	default:
		text, err, panicked := callHook(func() (string, error) { return s.modules.Normalize(base, name) })
		status = s.hookAnswer(text, err, panicked, "module resolution failed")
	}
	mem.WriteUint32Le(s.ctl+ctlRet+4, uint32(len(s.pending)))
	stack[0] = status
}

// normalizeName is QuickJS's default rule (js_default_module_normalize_name):
// a specifier starting with "." is resolved against the directory of base,
// its leading "./" and "../" only, a "../" stopping at a directory named
// "." or ".."; any other is taken as it is.
func normalizeName(base, name string) string {
	if !strings.HasPrefix(name, ".") {
		return name
	}
	dir := ""
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		dir = base[:i]
	}
	r := name
	for {
		if strings.HasPrefix(r, "./") {
			r = r[2:]
			continue
		}
		if !strings.HasPrefix(r, "../") || dir == "" {
			break
		}
		last := dir
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			last = dir[i+1:]
		}
		if last == "." || last == ".." {
			break
		}
		dir = dir[:len(dir)-len(last)]
		dir = strings.TrimSuffix(dir, "/")
		r = r[3:]
	}
	if dir == "" {
		return r
	}
	return dir + "/" + r
}

// hookAnswer leaves a module hook's outcome for host_result and returns
// the status: 0 its text, 1 its error's message, or on a panic 1 with
// failed as the message, the sandbox spent.
func (s *Sandbox) hookAnswer(text string, err error, panicked any, failed string) uint64 {
	switch {
	case panicked != nil:
		s.fault = &HostPanicError{Name: "module loader", Value: panicked}
		storeWord(s.stopWord, 1)
		s.pending = append(s.pending, failed...)
	case err != nil:
		s.pending = append(s.pending, err.Error()...)
	default:
		s.pending = append(s.pending, text...)
		return 0
	}
	return 1
}

func callHook(f func() (string, error)) (text string, err error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	text, err = f()
	return text, err, nil
}

package wasmvm

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/airlockrun/airlock/internal/qjs/qjsgo"
)

// The engine runs the module translated to Go by wasm2go
// (internal/qjs/qjsgo, built by internal/qjs/build.sh, its memory
// imported, every cycle of its call graph bounded by a depth check).

// goInstance is an instance of the translated module. Its memory is the
// sandbox's allocator's (imported: the module grows it through goMemory's
// Grow, within the limit), its host functions are this package's, and
// every call is a Go call on the caller's goroutine.
type goInstance struct {
	m      *qjsgo.Module
	mem    goMemory
	host   goHost
	closed bool
}

// newGoInstance makes an instance whose memory a allocates: pages of 64
// KiB (the image's size), or the module's initial size if pages is 0.
func newGoInstance(a *allocator, pages uint32) (instance, error) {
	lm := a.Allocate(1 << 32)
	g := &goInstance{mem: goMemory{lm: lm}}
	g.host.in = g
	g.m = qjsgo.New(&g.host, &g.host)
	if pages == 0 {
		// The module's initial memory: up to its heap's base, as the
		// linker sizes it.
		pages = (uint32(*g.m.X__heap_base()) + 65535) >> 16
	}
	b := lm.Reallocate(uint64(pages) << 16)
	if b == nil {
		lm.Free()
		return nil, fmt.Errorf("wasmvm: memory for the image refused")
	}
	g.mem.buf = b
	return g, nil
}

func (g *goInstance) Memory() memory { return &g.mem }

// trap turns what a call of the module panicked with into its error: a
// trap (unreachable, an access out of bounds, a bad indirect call, a
// division by zero, a conversion out of range) is a panic of the
// translated code.
func trap(p any) error {
	if e, ok := p.(runtime.Error); ok {
		return fmt.Errorf("wasm trap: %w", e)
	}
	return fmt.Errorf("wasm trap: %v", p)
}

// run runs f, a call of the module, with ctx the context of the host
// functions it calls, and returns the trap it ended in, if any.
func (g *goInstance) run(ctx context.Context, f func()) (err error) {
	prev := g.host.ctx
	g.host.ctx = ctx
	defer func() {
		g.host.ctx = prev
		if p := recover(); p != nil {
			err = trap(p)
		}
	}()
	f()
	return nil
}

func (g *goInstance) enter(ctx context.Context, st []uint64, nested bool) error {
	return g.run(ctx, func() {
		r := g.m.Xqjs_entry(int32(st[0]), int32(st[1]), int32(st[2]), int32(st[3]), int32(st[4]), int32(st[5]))
		st[0] = uint64(uint32(r))
	})
}

func (g *goInstance) call(ctx context.Context, name string, st []uint64) error {
	a := func(i int) int32 { return int32(st[i]) }
	r := int32(0)
	var f func()
	switch name {
	case "_initialize":
		f = g.m.X_initialize
	case "qjs_vm_new":
		f = func() { r = g.m.Xqjs_vm_new(a(0)) }
	case "qjs_random_state":
		f = func() { r = g.m.Xqjs_random_state(a(0)) }
	case "qjs_set_strip":
		f = func() { g.m.Xqjs_set_strip(a(0), a(1)) }
	case "qjs_gc":
		f = func() { g.m.Xqjs_gc(a(0)) }
	case "qjs_malloc":
		f = func() { r = g.m.Xqjs_malloc(a(0)) }
	case "qjs_free":
		f = func() { g.m.Xqjs_free(a(0)) }
	case "qjs_prepare_snapshot":
		f = func() { r = g.m.Xqjs_prepare_snapshot(a(0), a(1), a(2)) }
	default:
		return fmt.Errorf("wasmvm: no export %q", name)
	}
	if err := g.run(ctx, f); err != nil {
		return err
	}
	st[0] = uint64(uint32(r))
	return nil
}

func (g *goInstance) start(sp uint64) {
	*g.m.X__stack_pointer() = int32(sp)
	*g.m.Xqjs_tick() = tickEvery
	*g.m.Xqjs_depth() = 0 // a trap unwinds without the decrements
}

func (g *goInstance) stackPointer() uint64 { return uint64(uint32(*g.m.X__stack_pointer())) }
func (g *goInstance) ctlAddr() uint32      { return uint32(*g.m.Xqjs_ctl()) }
func (g *goInstance) setSP(v uint64)       { *g.m.X__stack_pointer() = int32(v) }
func (g *goInstance) rearm()               { *g.m.Xqjs_tick() = tickEvery }
func (g *goInstance) callDepth() int       { return int(*g.m.Xqjs_depth()) }

func (g *goInstance) Close(context.Context) error {
	if !g.closed {
		g.closed = true
		g.mem.lm.Free()
		g.mem.buf = nil
	}
	return nil
}

func (g *goInstance) IsClosed() bool { return g.closed }

// goMemory is the module's imported memory (qjsgo.Memory) over the
// sandbox's linear memory, and this package's view of it (memory).
type goMemory struct {
	lm  *linearMemory
	buf []byte // the guest's memory: what Reallocate last returned
}

// grow is memory.grow: the allocator grows the memory up to the sandbox's
// limit, and refuses beyond it (an out-of-memory). It returns the old size
// in pages, or -1.
func (m *goMemory) grow(delta, max int64) int64 {
	old := int64(len(m.buf) >> 16)
	if delta == 0 {
		return old
	}
	if delta < 0 || old+delta > max {
		return -1
	}
	b := m.lm.Reallocate(uint64(old+delta) << 16)
	if b == nil {
		return -1
	}
	m.buf = b
	return old
}

func (m *goMemory) Size() uint32 { return uint32(len(m.buf)) }

func (m *goMemory) Grow(delta uint32) (uint32, bool) {
	r := m.grow(int64(delta), 65536)
	return uint32(r), r >= 0
}

// goImport is the memory as the module imports it (qjsgo.Memory).
type goImport struct{ m *goMemory }

func (i goImport) Slice() *[]byte              { return &i.m.buf }
func (i goImport) Grow(delta, max int64) int64 { return i.m.grow(delta, max) }

func (m *goMemory) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m.buf)) {
		return nil, false
	}
	return m.buf[off : off+n : off+n], true
}

func (m *goMemory) Write(off uint32, v []byte) bool {
	if uint64(off)+uint64(len(v)) > uint64(len(m.buf)) {
		return false
	}
	copy(m.buf[off:], v)
	return true
}

func (m *goMemory) WriteString(off uint32, v string) bool {
	if uint64(off)+uint64(len(v)) > uint64(len(m.buf)) {
		return false
	}
	copy(m.buf[off:], v)
	return true
}

func (m *goMemory) ReadUint32Le(off uint32) (uint32, bool) {
	if uint64(off)+4 > uint64(len(m.buf)) {
		return 0, false
	}
	return binary.LittleEndian.Uint32(m.buf[off:]), true
}

func (m *goMemory) WriteUint32Le(off, v uint32) bool {
	if uint64(off)+4 > uint64(len(m.buf)) {
		return false
	}
	binary.LittleEndian.PutUint32(m.buf[off:], v)
	return true
}

func (m *goMemory) ReadUint64Le(off uint32) (uint64, bool) {
	if uint64(off)+8 > uint64(len(m.buf)) {
		return 0, false
	}
	return binary.LittleEndian.Uint64(m.buf[off:]), true
}

func (m *goMemory) WriteUint64Le(off uint32, v uint64) bool {
	if uint64(off)+8 > uint64(len(m.buf)) {
		return false
	}
	binary.LittleEndian.PutUint64(m.buf[off:], v)
	return true
}

// goHost is the module's imports: env (this package's host functions,
// hostcall.go) and the three functions of WASI it links.
type goHost struct {
	in  *goInstance
	ctx context.Context // the call under way's (a sandboxCtx)
}

// Xmemory: the module reads and writes the memory through the slice's
// address, so a growth (which changes the slice in place) is seen.
func (h *goHost) Xmemory() qjsgo.Memory { return goImport{&h.in.mem} }

func (h *goHost) Xhost_call(fn, argv, argc int32) int32 {
	var a [4]uint64
	st := a[:]
	st[0], st[1], st[2] = uint64(uint32(fn)), uint64(uint32(argv)), uint64(uint32(argc))
	hostCall(h.ctx, &h.in.mem, st)
	return int32(st[0])
}

func (h *goHost) Xhost_result(dst int32) {
	var a [4]uint64
	st := a[:]
	st[0] = uint64(uint32(dst))
	hostResult(h.ctx, &h.in.mem, st)
}

func (h *goHost) Xload_module(name, n, what int32) int32 {
	var a [4]uint64
	st := a[:]
	st[0], st[1], st[2] = uint64(uint32(name)), uint64(uint32(n)), uint64(uint32(what))
	loadModule(h.ctx, &h.in.mem, st)
	return int32(st[0])
}

func (h *goHost) Xnormalize_module(base, blen, name, nlen int32) int32 {
	var a [4]uint64
	st := a[:]
	st[0], st[1], st[2], st[3] = uint64(uint32(base)), uint64(uint32(blen)), uint64(uint32(name)), uint64(uint32(nlen))
	normalizeModule(h.ctx, &h.in.mem, st)
	return int32(st[0])
}

func (h *goHost) Xtick() int32 {
	var a [4]uint64
	st := a[:]
	tick(h.ctx, &h.in.mem, st)
	return int32(st[0])
}

func (h *goHost) Xclock_time_get(id int32, _ int64, out int32) int32 {
	return int32(clockTimeGet(&h.in.mem, uint32(id), uint32(out)))
}

const errnoBadf = 8

func (h *goHost) Xfd_close(int32) int32                     { return errnoBadf }
func (h *goHost) Xfd_seek(int32, int64, int32, int32) int32 { return errnoBadf }
func (h *goHost) Xfd_write(int32, int32, int32, int32) int32 {
	return errnoBadf
}

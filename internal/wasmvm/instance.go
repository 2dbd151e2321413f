package wasmvm

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// An instance is one instance of the module on one of the backends: wazero
// (here), or the module translated to Go by wasm2go (instance_wasm2go.go,
// the default, left out with the tag airlock_wazero). Everything else in this package,
// the image and its allocator, the snapshot, the pool, the calls and the
// host functions, is the same for both.
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
	// trimStack gives back the native stack of the instance's calls, if
	// the backend keeps one of its own (Trim).
	trimStack()
	Close(ctx context.Context) error
	IsClosed() bool
}

// memory is what this package uses of a linear memory: wazero's api.Memory
// has these methods, and the wasm2go backend's memory too.
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

// backend is the code that runs the module.
type backend uint8

const (
	backendWazero  backend = iota
	backendWasm2go         // the module translated to Go (the default)
)

// defaultBackend is the backend of NewEngine: the module translated to Go
// (instance_wasm2go.go sets it), or wazero with the tag airlock_wazero.
var defaultBackend = backendWazero

// newWasm2go makes an instance of the module translated to Go whose
// memory a allocates; set by instance_wasm2go.go, nil with the tag
// airlock_wazero.
var newWasm2go func(a *allocator, pages uint32) (instance, error)

// instantiate makes a new instance of the engine's module whose memory a
// allocates, at least pages of 64 KiB (the image's size; 0: the module's
// own initial size). wazero does not recover a panic of the allocator,
// which cannot return an error, so a failed mapping is turned into an
// error here rather than ending the process.
func (e *Engine) instantiate(ctx context.Context, a *allocator, pages uint32) (in instance, err error) {
	defer func() {
		if p := recover(); p != nil {
			in, err = nil, fmt.Errorf("wasmvm: instantiate: %v", p)
		}
	}()
	if e.backend == backendWasm2go {
		return newWasm2go(a, pages)
	}
	mod, err := e.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, a), e.cm, e.cfg)
	if err != nil {
		return nil, fmt.Errorf("wasmvm: instantiate: %w", err)
	}
	w := &wazeroInstance{Module: mod,
		sp:     mod.ExportedGlobal("__stack_pointer").(api.MutableGlobal),
		tick:   mod.ExportedGlobal("qjs_tick").(api.MutableGlobal),
		fEntry: mod.ExportedFunction("qjs_entry"),
	}
	if g, ok := mod.ExportedGlobal("qjs_depth").(api.MutableGlobal); ok { // a build with depth checks
		w.depth = g
	}
	in = w
	mem := in.Memory()
	if cur := mem.Size() / 65536; cur < pages {
		if _, ok := mem.Grow(pages - cur); !ok {
			mod.Close(ctx)
			return nil, fmt.Errorf("wasmvm: memory for the image refused")
		}
	}
	return in, nil
}

// wazeroInstance is an instance on wazero, with the function and globals
// the host uses looked up once (wazero makes a new call engine, with its
// own native stack, for every ExportedFunction).
type wazeroInstance struct {
	api.Module
	sp   api.MutableGlobal
	tick api.MutableGlobal // qjs_tick, the loop countdown to the next env.tick
	// depth is qjs_depth, the call depth of a build with depth checks
	// (stopcheck -depth), or nil.
	depth api.MutableGlobal

	fEntry api.Function // qjs_entry, through which every function is called (entry.go)
}

func (w *wazeroInstance) Memory() memory { return w.Module.Memory() }

func (w *wazeroInstance) call(ctx context.Context, name string, st []uint64) error {
	return w.ExportedFunction(name).CallWithStack(ctx, st)
}

// enter: a call made while another is under way (from a host function)
// gets a call engine of its own, since one native stack cannot hold two
// calls.
func (w *wazeroInstance) enter(ctx context.Context, st []uint64, nested bool) error {
	if nested {
		return w.ExportedFunction("qjs_entry").CallWithStack(ctx, st)
	}
	if w.fEntry == nil { // trimStack dropped it
		w.fEntry = w.ExportedFunction("qjs_entry")
	}
	return w.fEntry.CallWithStack(ctx, st)
}

func (w *wazeroInstance) start(sp uint64) {
	w.sp.Set(sp)
	w.tick.Set(tickEvery)
	if w.depth != nil {
		w.depth.Set(0)
	}
}

func (w *wazeroInstance) stackPointer() uint64 { return w.sp.Get() }
func (w *wazeroInstance) ctlAddr() uint32      { return uint32(w.ExportedGlobal("qjs_ctl").Get()) }
func (w *wazeroInstance) setSP(v uint64)       { w.sp.Set(v) }
func (w *wazeroInstance) rearm()               { w.tick.Set(tickEvery) }
func (w *wazeroInstance) trimStack()           { w.fEntry = nil }

func (w *wazeroInstance) callDepth() int {
	if w.depth != nil {
		return int(int32(w.depth.Get()))
	}
	return 0
}

// wazeroHost is the wazero form of a host function of hostcall.go.
func wazeroHost(f func(context.Context, memory, []uint64)) api.GoModuleFunc {
	return func(ctx context.Context, m api.Module, st []uint64) { f(ctx, m.Memory(), st) }
}

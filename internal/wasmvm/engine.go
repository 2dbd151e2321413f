package wasmvm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/airlockrun/airlock/internal/qjs"
)

// EngineOptions configures NewEngine. The zero value (or nil) is the
// default.
type EngineOptions struct {
	// CacheDir is where snapshot images are kept between processes (in
	// its snapshots/ directory), and, on wazero (the tag airlock_wazero),
	// the compiled module. Empty means os.UserCacheDir()/airlock/wazero; if
	// that is not available, nothing is kept.
	CacheDir string
	// NoCache keeps nothing between processes, ignoring CacheDir.
	NoCache bool
	// Interpreter runs the module on wazero's interpreter (the tag
	// airlock_wazero; the default backend ignores it): slower, and nothing
	// is compiled or cached. Tests use it to check that engine.
	Interpreter bool
}

// Engine is the module compiled once: a wazero runtime, the host functions
// the module imports, and the compiled module. Snapshots and sandboxes are
// made from it. An Engine is safe for concurrent use; Close it after every
// snapshot made from it is closed.
type Engine struct {
	backend backend
	rt      wazero.Runtime // wazero's (nil on the wasm2go backend)
	cache   wazero.CompilationCache
	cm      wazero.CompiledModule // without its data section: see parseData
	data    []dataSegment         // the module's data, written by the first instance only
	cfg     wazero.ModuleConfig
	// snapDir is where snapshot images are cached ("": not cached), and
	// wasmSum the module's SHA-256, part of their key.
	snapDir string
	wasmSum [32]byte

	closeOnce sync.Once
}

type dataSegment struct {
	offset uint32
	bytes  []byte
}

// sandboxKey finds the sandbox of a host call in its context.
type sandboxKey struct{}

// NewEngine compiles the engine's module (or loads it from the compilation
// cache) and registers its host functions.
func NewEngine(ctx context.Context, opts *EngineOptions) (*Engine, error) {
	return newEngine(ctx, opts, qjs.WASM, qjs.DATA)
}

// newEngine is NewEngine with another build of the module (benchmarks
// compare builds): wasm without its data section, data that section's
// contents (see qjs.WASM).
func newEngine(ctx context.Context, opts *EngineOptions, wasm, data []byte) (*Engine, error) {
	return newEngineOn(ctx, defaultBackend, opts, wasm, data)
}

// newEngineOn is newEngine on backend b (benchmarks compare them). On the
// wasm2go backend, wasm only keys the snapshot cache: the module is the
// Go package built from the same objects (internal/qjs/qjsgo).
func newEngineOn(ctx context.Context, b backend, opts *EngineOptions, wasm, data []byte) (*Engine, error) {
	if b == backendWasm2go && newWasm2go == nil {
		return nil, errors.New("wasmvm: the wasm2go backend is left out of builds with the tag airlock_wazero")
	}
	var o EngineOptions
	if opts != nil {
		o = *opts
	}
	rc := wazero.NewRuntimeConfig()
	if o.Interpreter {
		rc = wazero.NewRuntimeConfigInterpreter()
		o.NoCache = true
	}
	rc = rc.WithCloseOnContextDone(false)
	e := &Engine{backend: b}
	if !o.NoCache {
		dir := o.CacheDir
		if dir == "" {
			if d, err := os.UserCacheDir(); err == nil {
				dir = filepath.Join(d, "airlock", "wazero")
			}
		}
		if dir != "" {
			if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
				e.cache = c
				rc = rc.WithCompilationCache(c)
				e.snapDir = filepath.Join(dir, "snapshots")
			}
		}
	}
	h := sha256.New()
	h.Write(wasm)
	h.Write(data)
	if b == backendWasm2go {
		h.Write([]byte("wasm2go"))
	}
	h.Sum(e.wasmSum[:0])
	segs, err := parseData(data)
	if err != nil {
		return nil, err
	}
	e.data = segs
	if b == backendWasm2go {
		if e.cache != nil {
			e.cache.Close(ctx)
			e.cache = nil
		}
		return e, nil
	}
	e.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	if err := e.instantiateHost(ctx); err != nil {
		e.Close(ctx)
		return nil, err
	}
	if e.cm, err = e.rt.CompileModule(ctx, wasm); err != nil {
		e.Close(ctx)
		return nil, fmt.Errorf("wasmvm: compile: %w", err)
	}
	// No start function: the first instance runs _initialize itself, after
	// writing the data; copies of a snapshot start from its memory. The
	// random source is one for all instances: unset, wazero gives each
	// instance a math/rand source of its own (5 KiB), which nothing reads
	// (random_get is the host module's below).
	e.cfg = wazero.NewModuleConfig().WithName("").WithStartFunctions().WithRandSource(rand.Reader)
	return e, nil
}

// Close releases the runtime and every module instance left open.
// Idempotent.
func (e *Engine) Close(ctx context.Context) error {
	var err error
	e.closeOnce.Do(func() {
		if e.rt != nil {
			err = e.rt.Close(ctx)
		}
		if e.cache != nil {
			e.cache.Close(ctx)
		}
	})
	return err
}

// instantiateHost registers the modules "env" (host calls) and
// "wasi_snapshot_preview1". Of WASI, only the clocks and randomness reach
// the host: the wall clock and the monotonic clock for Date and
// performance-like timing, and crypto/rand. The file descriptor functions
// libc links in answer EBADF: no file system, no stdio, no environment and
// no arguments exist for the guest.
func (e *Engine) instantiateHost(ctx context.Context) error {
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	_, err := e.rt.NewHostModuleBuilder("env").
		NewFunctionBuilder().WithGoModuleFunction(wazeroHost(hostCall),
		[]api.ValueType{i32, i32, i32}, []api.ValueType{i32}).Export("host_call").
		NewFunctionBuilder().WithGoModuleFunction(wazeroHost(hostResult),
		[]api.ValueType{i32}, nil).Export("host_result").
		NewFunctionBuilder().WithGoModuleFunction(wazeroHost(tick),
		nil, []api.ValueType{i32}).Export("tick").
		NewFunctionBuilder().WithGoModuleFunction(wazeroHost(loadModule),
		[]api.ValueType{i32, i32, i32}, []api.ValueType{i32}).Export("load_module").
		NewFunctionBuilder().WithGoModuleFunction(wazeroHost(normalizeModule),
		[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).Export("normalize_module").
		Instantiate(ctx)
	if err != nil {
		return err
	}
	const errnoSuccess, errnoBadf, errnoInval = 0, 8, 28
	badf := api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) { stack[0] = errnoBadf })
	_, err = e.rt.NewHostModuleBuilder("wasi_snapshot_preview1").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, m api.Module, stack []uint64) {
		stack[0] = uint64(clockTimeGet(m.Memory(), uint32(stack[0]), uint32(stack[2])))
	}), []api.ValueType{i32, i64, i32}, []api.ValueType{i32}).Export("clock_time_get").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, m api.Module, stack []uint64) {
		buf, ok := m.Memory().Read(uint32(stack[0]), uint32(stack[1]))
		if !ok {
			stack[0] = errnoInval
			return
		}
		rand.Read(buf)
		stack[0] = errnoSuccess
	}), []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("random_get").
		NewFunctionBuilder().WithGoModuleFunction(badf, []api.ValueType{i32}, []api.ValueType{i32}).Export("fd_close").
		NewFunctionBuilder().WithGoModuleFunction(badf, []api.ValueType{i32, i64, i32, i32}, []api.ValueType{i32}).Export("fd_seek").
		NewFunctionBuilder().WithGoModuleFunction(badf, []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).Export("fd_write").
		Instantiate(ctx)
	return err
}

var monoStart = time.Now()

// clockTimeGet is WASI's clock_time_get(id, precision, out) -> errno: the
// wall clock (0) and the monotonic clock (1).
func clockTimeGet(mem memory, id, out uint32) uint32 {
	const errnoSuccess, errnoInval = 0, 28
	var ns uint64
	switch id {
	case 0: // realtime
		ns = uint64(time.Now().UnixNano())
	case 1: // monotonic
		ns = uint64(time.Since(monoStart).Nanoseconds())
	default:
		return errnoInval
	}
	if !mem.WriteUint64Le(out, ns) {
		return errnoInval
	}
	return errnoSuccess
}

// parseData reads the active data segments of a data section's contents.
// The module comes without them (see qjs.WASM): a copy of a snapshot must
// not have the data written again over the image (it would both undo the
// image and dirty its copy-on-write pages), so only the instance that
// makes a snapshot writes them.
func parseData(p []byte) ([]dataSegment, error) {
	bad := errors.New("wasmvm: unsupported data section")
	n, l := binary.Uvarint(p)
	if l <= 0 {
		return nil, bad
	}
	i := l
	var segs []dataSegment
	for k := uint64(0); k < n; k++ {
		if i+2 > len(p) || p[i] != 0 || p[i+1] != 0x41 { // active, memory 0, i32.const
			return nil, bad
		}
		i += 2
		off, l := sleb(p[i:])
		if l <= 0 {
			return nil, bad
		}
		i += l
		if i >= len(p) || p[i] != 0x0B {
			return nil, bad
		}
		i++
		size, l := binary.Uvarint(p[i:])
		if l <= 0 || i+l+int(size) > len(p) {
			return nil, bad
		}
		i += l
		segs = append(segs, dataSegment{offset: uint32(off), bytes: p[i : i+int(size)]})
		i += int(size)
	}
	return segs, nil
}

// sleb decodes a signed LEB128 number; n <= 0 if it is malformed.
func sleb(b []byte) (v int64, n int) {
	var shift uint
	for n < len(b) && shift < 64 {
		c := b[n]
		n++
		v |= int64(c&0x7F) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, n
		}
	}
	return 0, 0
}

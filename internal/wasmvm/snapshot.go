package wasmvm

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// SnapshotOptions configures NewSnapshot. The zero value (or nil) is the
// default.
type SnapshotOptions struct {
	// Setup is JavaScript run before the capture, as a script, in the realm
	// the shim made and hardened. Empty: none.
	Setup string
	// Init are entries of the shim's (Call), called after Setup with no
	// arguments, in order: another layer's readying of the realm (the
	// kernel's, internal/engine).
	Init []Entry
	// Hidden is JavaScript run after Init, as a script compiled without
	// source or debug information: no program can read its functions' text
	// (Function.prototype.toString), and their frames are left out of a
	// backtrace. Empty: none.
	Hidden string
	// Headroom is free heap the image carries, so that a sandbox can
	// allocate that much before its memory grows (a sandbox whose memory
	// grew cannot be rewound). Zero means 4 MiB. Its zero pages cost
	// nothing on Linux.
	Headroom uint32
	// Pool is how many instances of closed sandboxes the snapshot keeps,
	// rewound to the image, for NewSandbox to reuse instead of
	// instantiating the module again. Zero means DefaultPool; negative
	// keeps none.
	Pool int
}

// defaultHeadroom is the Headroom of a snapshot whose options set none.
const defaultHeadroom = 4 << 20

// DefaultPool is the number of rewound instances a snapshot keeps when
// its options set none.
const DefaultPool = 8

// Snapshot is a hardened VM captured once: its linear memory and the stack
// pointer, the wasm module's only mutable global. Every sandbox starts
// from it. A Snapshot is safe for concurrent use; Close it after the
// sandboxes made from it.
type Snapshot struct {
	e        *Engine
	im       *image
	sp       uint64 // __stack_pointer
	ctxPtr   uint32 // the JSContext
	ctl      uint32 // the control block
	randAddr uint32 // Math.random's state
	pages    uint32 // memory size of the image
	base     uint64 // bytes of the image outside QuickJS's heap accounting
	heapFrom uint32 // the allocator's first chunk after the fence (capture)

	cached bool // read from the snapshot cache, not built

	mu     sync.RWMutex // read: the image is in use (rewinds); write: closed, pool
	closed bool
	pool   []pooled // rewound instances, LIFO
	poolN  int

	instances atomic.Int64 // instantiated by NewSandbox, not taken from the pool
}

// pooled is the instance of a closed sandbox, rewound to the image.
type pooled struct {
	mod   instance
	mem   *linearMemory
	limit uint64
}

// NewSnapshot makes a VM (hardened by the shim as it makes it), runs
// opts.Setup, Init and Hidden, and captures the result.
func (e *Engine) NewSnapshot(ctx context.Context, opts *SnapshotOptions) (*Snapshot, error) {
	var o SnapshotOptions
	if opts != nil {
		o = *opts
	}
	if o.Headroom == 0 {
		o.Headroom = defaultHeadroom
	}
	poolN := o.Pool
	if poolN == 0 {
		poolN = DefaultPool
	}
	path := e.snapshotPath(&o)
	if path != "" {
		if sn := loadSnapshot(path); sn != nil {
			sn.e, sn.poolN, sn.cached = e, poolN, true
			return sn, nil
		}
	}
	sn, err := e.buildSnapshot(ctx, &o)
	if err != nil {
		return nil, err
	}
	sn.poolN = poolN
	sn.learnHot(ctx, nil)
	if path != "" {
		saveSnapshot(path, sn) // best effort: a failure costs the next process a rebuild
	}
	return sn, nil
}

// buildSnapshot makes, hardens and sets up a VM and captures it.
func (e *Engine) buildSnapshot(ctx context.Context, o *SnapshotOptions) (*Snapshot, error) {
	a := &allocator{limit: snapMaxImage}
	mod, err := e.instantiate(ctx, a, 0)
	if err != nil {
		return nil, err
	}
	defer mod.Close(ctx)
	mem := mod.Memory()
	for _, d := range e.data {
		if !mem.Write(d.offset, d.bytes) {
			return nil, errors.New("wasmvm: data segment out of range")
		}
	}
	call := exportCaller(ctx, mod)
	if _, err := call("_initialize"); err != nil {
		return nil, err
	}
	sn := &Snapshot{e: e, ctl: mod.ctlAddr()}
	p, err := call("qjs_vm_new", stackSize-stackReserve)
	if err != nil || p == 0 {
		return nil, fmt.Errorf("wasmvm: qjs_vm_new: %v", err)
	}
	sn.ctxPtr = uint32(p)
	if p, err = call("qjs_random_state", uint64(sn.ctxPtr)); err != nil {
		return nil, err
	}
	sn.randAddr = uint32(p)

	// Run the setup in a sandbox bound to this instance (the shim hardened
	// the realm as it made it).
	sb := &Sandbox{snap: sn, mod: mod, mem: a.mem, ctxPtr: sn.ctxPtr, ctl: sn.ctl}
	sb.bind()
	if o.Setup != "" {
		if _, err := sb.Eval(ctx, o.Setup, "<setup>", Script); err != nil {
			return nil, fmt.Errorf("wasmvm: snapshot setup: %w", err)
		}
	}
	for _, e := range o.Init {
		if _, err := sb.Call(ctx, e); err != nil {
			return nil, fmt.Errorf("wasmvm: snapshot entry %d: %w", e, err)
		}
	}
	if o.Hidden != "" {
		if _, err := call("qjs_set_strip", uint64(sn.ctxPtr), 3); err != nil {
			return nil, err
		}
		_, err := sb.Eval(ctx, o.Hidden, "<hidden>", Script)
		if _, err2 := call("qjs_set_strip", uint64(sn.ctxPtr), 0); err == nil {
			err = err2
		}
		if err != nil {
			return nil, fmt.Errorf("wasmvm: snapshot's hidden script: %w", err)
		}
	}
	sn.sp = mod.stackPointer()
	if err := sn.capture(mem, call, o.Headroom); err != nil {
		return nil, err
	}
	return sn, nil
}

// exportCaller calls mod's exports by name, for the snapshot's one-off
// set-up calls: each call makes a call engine of its own.
func exportCaller(ctx context.Context, mod instance) func(name string, args ...uint64) (uint64, error) {
	st := make([]uint64, 8)
	return func(name string, args ...uint64) (uint64, error) {
		copy(st, args)
		if err := mod.call(ctx, name, st); err != nil {
			return 0, fmt.Errorf("wasmvm: %s: %w", name, err)
		}
		return st[0], nil
	}
}

// capture readies the heap of the instance whose memory is mem and whose
// functions call calls (a collection; the headroom; the allocators' holes
// taken out of reach, snapPrepare) and writes its memory as sn's image:
// its non-zero pages only. sn's ctxPtr must be set.
func (sn *Snapshot) capture(mem memory, call func(string, ...uint64) (uint64, error), headroom uint32) error {
	if _, err := call("qjs_gc", uint64(sn.ctxPtr)); err != nil {
		return err
	}
	p, err := call("qjs_malloc", uint64(headroom))
	if err != nil || p == 0 {
		return fmt.Errorf("wasmvm: headroom: %v", err)
	}
	if _, err := call("qjs_free", p); err != nil {
		return err
	}
	if _, err := call("qjs_prepare_snapshot", uint64(sn.ctxPtr), uint64(snapPrepare), p); err != nil {
		return err
	}
	// The fence: a block at the start of the allocator's top chunk, never
	// freed. What a sandbox allocates comes after it, and the chunk after
	// it starts where it ends for good (a chunk in use is never merged
	// with its neighbours): Trim walks the chunks from there (freePages).
	fence, err := call("qjs_malloc", 16)
	if err != nil || fence == 0 {
		return fmt.Errorf("wasmvm: fence: %v", err)
	}
	head, _ := mem.ReadUint32Le(uint32(fence) - 4)
	sn.heapFrom = uint32(fence) - 8 + head&^chunkFlags
	size := mem.Size()
	b, _ := mem.Read(0, size)
	used, _ := mem.ReadUint32Le(sn.ctl + ctlHeapUsed)
	sn.base = uint64(size) - uint64(used)
	sn.pages = size / 65536
	var idx []uint32
	for off := 0; off < len(b); off += pageSize {
		if !isZero(b[off:min(off+pageSize, len(b))]) {
			idx = append(idx, uint32(off/pageSize))
		}
	}
	sn.im, err = newImage(uintptr(size), idx, func(k int) []byte {
		return b[int(idx[k])*pageSize : int(idx[k]+1)*pageSize]
	})
	return err
}

// CaptureOptions configures Capture. The zero value (or nil) is the
// default.
type CaptureOptions struct {
	// Headroom and Pool are as in SnapshotOptions.
	Headroom uint32
	Pool     int
	// Learn is run in a fresh copy of the new image, to learn the pages a
	// new sandbox has populated at once (the snapshot's hot pages): what a
	// first program of the sandboxes to come does. Nil: a small
	// evaluation, as NewSnapshot learns.
	Learn func(*Sandbox) error
}

// Capture makes a snapshot of the sandbox as it is now: every sandbox of
// the new snapshot starts where this one is, with what its calls defined
// in the realm. It is for a set-up shared by many sandboxes (the
// executor's session), so that what the set-up writes is the image's,
// shared, and not each sandbox's own pages. The sandbox must have no
// functions of DefineFunc (their Go side is not in the image) and no call
// under way; it is spent afterwards. The snapshot is not cached on disk.
func (s *Sandbox) Capture(ctx context.Context, opts *CaptureOptions) (*Snapshot, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	if len(s.funcs) > 0 {
		return nil, errors.New("wasmvm: a sandbox with host functions cannot be captured")
	}
	var o CaptureOptions
	if opts != nil {
		o = *opts
	}
	if o.Headroom == 0 {
		o.Headroom = defaultHeadroom
	}
	if o.Pool == 0 {
		o.Pool = DefaultPool
	}
	s.spent = true // its heap is readied for the capture, its memory grown
	p := s.snap
	sn := &Snapshot{e: p.e, ctxPtr: p.ctxPtr, ctl: p.ctl, randAddr: p.randAddr, sp: s.mod.stackPointer(), poolN: o.Pool}
	if err := sn.capture(s.mod.Memory(), exportCaller(ctx, s.mod), o.Headroom); err != nil {
		return nil, err
	}
	sn.learnHot(ctx, o.Learn)
	return sn, nil
}

// snapPrepare is what qjs_prepare_snapshot does before the capture: 1
// takes the image's small-block arenas off QuickJS's lists (patch 0009),
// 2 takes malloc's free chunks below the headroom, so that a run's new
// blocks land together in the headroom (RATIONALE.md, "What a run writes
// of the image"). The page-count test and BenchmarkIdlePSS compare them.
var snapPrepare = 3

// learnHot runs learn (nil: a hello eval) in a fresh copy of the image
// and records the pages it touched, which every new sandbox then has
// populated at once (see image.hot). A failure only leaves the list empty.
func (sn *Snapshot) learnHot(ctx context.Context, learn func(*Sandbox) error) {
	s, err := sn.NewSandbox(ctx, nil)
	if err != nil {
		return
	}
	defer s.Close(ctx)
	if learn == nil {
		_, err = s.Eval(ctx, "1+2", "hello.js", Script)
	} else {
		err = learn(s)
	}
	if err == nil {
		s.mem.learnHot()
	}
}

// Close releases the image. Sandboxes made from it keep working on Linux
// (their mappings hold the memfd) but cannot be rewound. Idempotent.
func (sn *Snapshot) Close() error {
	sn.mu.Lock()
	pool := sn.pool
	sn.pool = nil
	if !sn.closed {
		sn.closed = true
		sn.im.close()
	}
	sn.mu.Unlock()
	for _, p := range pool {
		p.mod.Close(context.Background())
	}
	return nil
}

// take returns a pooled instance of the given limit, if any.
func (sn *Snapshot) take(limit uint64) (pooled, bool) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	for i := len(sn.pool) - 1; i >= 0; i-- {
		if p := sn.pool[i]; p.limit == limit {
			sn.pool = append(sn.pool[:i], sn.pool[i+1:]...)
			return p, true
		}
	}
	return pooled{}, false
}

// give rewinds a closed sandbox's instance and keeps it, if the pool has
// room and the rewind succeeds; it reports whether it kept it. The rewind
// runs under the read lock only, so that closes on several goroutines
// overlap.
func (sn *Snapshot) give(p pooled) bool {
	// The read lock keeps Close from releasing the image during the rewind.
	sn.mu.RLock()
	full := sn.closed || len(sn.pool) >= sn.poolN
	ok := !full && p.mem.rewind(uintptr(p.mod.Memory().Size()))
	sn.mu.RUnlock()
	if !ok {
		return false
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if sn.closed || len(sn.pool) >= sn.poolN {
		return false
	}
	sn.pool = append(sn.pool, p)
	return true
}

// Instances is how many sandboxes NewSandbox made as new instances of the
// module, rather than from the pool of rewound ones.
func (sn *Snapshot) Instances() int64 { return sn.instances.Load() }

// ImageSize is the size of the snapshot's linear memory in bytes: the least
// memory limit a sandbox can have.
func (sn *Snapshot) ImageSize() uint64 { return uint64(sn.pages) * 65536 }

// SandboxOptions configures NewSandbox. The zero value (or nil) is the
// default.
type SandboxOptions struct {
	// MemoryLimit caps the sandbox's linear memory, in bytes, image
	// included, and reserves its address space; memory.grow fails beyond
	// it (an out-of-memory) and QuickJS's allocator refuses a little
	// before it. Sandbox.SetMemoryLimit lowers it later. Zero means
	// DefaultMemoryLimit; a limit below the image's size plus 1 MiB is
	// raised to that.
	MemoryLimit uint64
}

// DefaultMemoryLimit is the memory limit of a sandbox whose options set
// none.
const DefaultMemoryLimit = 64 << 20

// heapSlack is the part of the memory limit kept from QuickJS's heap for
// the allocator's own overhead and fragmentation, so that the heap limit
// (a catchable-looking error, then the stop) usually comes before a failed
// memory.grow; either one sets the out-of-memory mark.
const heapSlack = 1 << 20

// NewSandbox starts a sandbox from the snapshot: a new instance whose
// memory is the image, copy-on-write on Linux.
func (sn *Snapshot) NewSandbox(ctx context.Context, opts *SandboxOptions) (*Sandbox, error) {
	var o SandboxOptions
	if opts != nil {
		o = *opts
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	o.MemoryLimit = max(o.MemoryLimit, sn.ImageSize()+heapSlack)
	sn.mu.Lock()
	closed := sn.closed
	sn.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if p, ok := sn.take(o.MemoryLimit); ok {
		s := &Sandbox{snap: sn, mod: p.mod, mem: p.mem, ctxPtr: sn.ctxPtr, ctl: sn.ctl, made: p.limit, limit: p.limit}
		s.bind()
		s.start()
		return s, nil
	}
	sn.instances.Add(1)
	a := &allocator{im: sn.im, limit: o.MemoryLimit}
	mod, err := sn.instantiate(ctx, a)
	if err != nil {
		return nil, err
	}
	s := &Sandbox{snap: sn, mod: mod, mem: a.mem, ctxPtr: sn.ctxPtr, ctl: sn.ctl, made: o.MemoryLimit, limit: o.MemoryLimit}
	s.bind()
	s.start()
	return s, nil
}

// instantiate makes a new instance whose memory a allocates. It holds the
// read lock, so that Close cannot release the image while the allocator
// maps it (TestPoolConcurrent closed it mid-instantiation: the memfd was
// gone, and the mapping failed). Its memory has the image's size.
func (sn *Snapshot) instantiate(ctx context.Context, a *allocator) (instance, error) {
	sn.mu.RLock()
	defer sn.mu.RUnlock()
	if sn.closed {
		return nil, ErrClosed
	}
	return sn.e.instantiate(ctx, a, sn.pages)
}

// start sets what differs between copies of the image: the stack pointer,
// Math.random's seed, and the memory and heap limits (s.limit).
func (s *Sandbox) start() {
	sn := s.snap
	s.mod.start(sn.sp)
	// The seed is read into its place through a view of the memory: a Go
	// array handed to rand.Read would escape, an allocation per start.
	mem := s.mod.Memory()
	seed, _ := mem.Read(sn.randAddr, 8)
	rand.Read(seed)
	for binary.LittleEndian.Uint64(seed) == 0 {
		rand.Read(seed)
	}
	s.applyLimit()
}

// applyLimit caps the linear memory at s.limit and QuickJS's heap at
// what that leaves (heapRoom).
func (s *Sandbox) applyLimit() {
	s.mem.limit = uintptr(min(s.limit, s.made))
	s.mod.Memory().WriteUint32Le(s.ctl+ctlHeapLimit, uint32(min(s.heapRoom(), 1<<32-1)))
}

// heapRoom is the most QuickJS's heap may hold within the memory limit:
// the limit less the image's bytes outside the heap and heapSlack.
func (s *Sandbox) heapRoom() uint64 {
	if s.limit > s.snap.base+heapSlack {
		return s.limit - s.snap.base - heapSlack
	}
	return 0
}

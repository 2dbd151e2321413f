// Package wasmvm runs JavaScript in QuickJS compiled to WebAssembly
// (internal/qjs), translated to Go by wasm2go (internal/qjs/qjsgo: its
// memory imported from this package's allocator, every cycle of its call
// graph bounded by a depth check that traps, since a Go stack overflow
// would end the process). Nothing is compiled at run time: the module is
// part of the binary.
//
// An [Engine] readies the module once per process. A [Snapshot] is a VM made and hardened
// once, its linear memory captured; every [Sandbox] starts from it, mapping
// the image copy-on-write on Linux (a plain copy elsewhere), and can be
// rewound to it ([Sandbox.Reset]) for reuse. The image is captured with
// the free blocks of both allocators (QuickJS's arenas, malloc's chunks)
// out of reach, so that what a sandbox allocates lands together in the
// headroom instead of on the image's scattered holes, a written page each
// ([Sandbox.WrittenPages] counts them). A sandbox set up for many others
// to start from is captured as a snapshot of its own ([Sandbox.Capture]);
// an idle sandbox gives back the pages that hold the image's bytes again,
// and the pages inside the C allocator's free chunks ([Sandbox.Trim]). Every call into the module goes
// through one export, so that a sandbox holds one native call stack.
//
// Start-up: the pages a first hello eval touches are populated when a
// sandbox's memory is mapped (learned once per snapshot); closing a
// sandbox that is not spent rewinds its instance into the snapshot's pool
// ([SnapshotOptions.Pool]), from which NewSandbox takes it; and the
// snapshot's image is cached on disk, keyed by the module's identity and
// the setup, checked by a SHA-256 trailer, rebuilt
// if anything about the file is wrong.
//
//	e, _ := wasmvm.NewEngine(ctx, nil)
//	sn, _ := e.NewSnapshot(ctx, nil)
//	s, _ := sn.NewSandbox(ctx, &wasmvm.SandboxOptions{MemoryLimit: 64 << 20})
//	defer s.Close(ctx)
//	s.DefineFunc(ctx, "add1", func(_ context.Context, a []wasmvm.Value) (wasmvm.Value, error) {
//		return wasmvm.Value{Kind: wasmvm.Number, Number: a[0].Number + 1}, nil
//	})
//	r, err := s.Eval(ctx, "add1(41)", "main.js", wasmvm.Script) // r.Value.Text == "42"
//
// # Security model
//
// The guest is QuickJS and its C library inside a wasm instance: whatever
// a program does, and whatever bug it finds in the engine, it reaches only
// that instance's linear memory. It sees what the host grants:
//
//   - The ECMAScript intrinsics, structuredClone and queueMicrotask. No
//     eval; direct and indirect eval and the Function, AsyncFunction,
//     GeneratorFunction and AsyncGeneratorFunction constructors throw an
//     EvalError, decided in the engine (a patch), so no program can undo it.
//     No SharedArrayBuffer, Atomics or WebAssembly.
//   - Of WASI, the wall and monotonic clocks and crypto/rand. No files, no
//     stdio, no environment, no arguments: the fd functions libc links in
//     answer EBADF.
//   - The functions defined with [Sandbox.DefineFunc]; values cross by copy
//     ([Value]). And the shim's own host function ([Sandbox.SetHostFunc])
//     and its numbered entries ([Sandbox.Call]), through which a layer
//     above (internal/engine's kernel) runs jobs: this package carries
//     their values and does not read them.
//   - The modules its [ModuleLoader] supplies ([Sandbox.SetModuleLoader]);
//     without one, every import fails.
//
// Stops: every loop of the module counts down where it repeats and calls
// the host every 10,000 iterations (see internal/qjs/stopcheck), but the
// interpreter's, which polls QuickJS's interrupt handler, and that asks the
// host too, every 10,000 jumps and calls; the host answers stop once [Sandbox.Terminate] was called or the context of the run is
// done. So a stop lands in QuickJS's native loops (string searches, array
// walks, sorts, BigInt, regexps, JSON) as in bytecode, with no limits on
// lengths, and the goroutine running a guest returns to Go regularly, where
// the Go runtime can preempt it.
//
// Memory: a sandbox's linear memory is reserved at the limit it is made
// with and cannot grow beyond its limit, which [Sandbox.SetMemoryLimit]
// lowers for a program whose limit is known after the sandbox was made:
// the limit holds whatever the C allocator's fragmentation. QuickJS's
// allocator refuses a little before the limit. Either refusal (the shim's
// at the heap limit, the host's at a refused memory.grow) sets an
// out-of-memory mark in the shim's control block and stops the program;
// the host reads the mark, so [ErrMemoryLimit] is reported even if the
// program caught the error. An engine fault (a trap) ends that
// sandbox with a [*TrapError]; the host and other sandboxes are untouched.
//
// # Concurrency
//
// [Engine] and [Snapshot] are safe for concurrent use. A [Sandbox] belongs
// to one goroutine at a time: Eval, RunJobs, DefineFunc, Reset and Close
// must not overlap. [Sandbox.Terminate] is safe from any goroutine at any
// time, before, during or after a run, and after Close. Host functions run
// on the goroutine of the Eval or RunJobs that called them.
//
// Close order: sandboxes, then their snapshot, then the engine.
//
// # Errors
//
// Eval, RunJobs and Call return [*Exception] for a value the program threw (the
// sandbox stays usable), and, spending the sandbox until Reset:
// [ErrTerminated], the context's error for a done context, [ErrMemoryLimit],
// [*TrapError] and [*HostPanicError]. A spent sandbox answers [ErrSpent].
package wasmvm

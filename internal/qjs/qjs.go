// Package qjs holds the engine's WebAssembly module: QuickJS with our
// patches and shim, compiled to wasm32-wasi by build.sh and committed, so
// that building Airlock needs no C toolchain. README.md states its
// provenance, licence and how to rebuild it.
//
// The module's interface (the exports, the imports env.host_call and
// env.host_result, and the control block qjs_ctl) is described in
// shim/shim.c and shim/shim.h; internal/wasmvm runs the module. The
// kernel's JavaScript (Kernel) lives here too, beside the C it is one
// contract with (shim/kernel.c: the hooks it takes, the methods the shim
// calls); internal/engine evaluates it into its snapshot.
package qjs

import _ "embed"

// WASM is the module, instrumented with stop checks (see stopcheck),
// without its data section: sandboxes start from a snapshot's memory, and
// only the instance that makes a snapshot writes the data (DATA) into its
// memory. The build keeps them apart so that a process does not copy the
// module to take the data out (RATIONALE.md, "The command's start").
//
//go:embed qjs.wasm
var WASM []byte

// DATA is the contents of the module's data section: its active data
// segments, as in the binary format.
//
//go:embed qjs.data
var DATA []byte

// Kernel is the kernel's JavaScript (shim/kernel.js): the glue of a run and
// of an executor's session, evaluated once into the snapshot that every
// sandbox starts from, compiled without source or debug information. It
// takes the hooks shim/kernel.c defines and hands itself to the shim,
// which calls its methods (internal/engine calls them through wasmvm).
//
//go:embed shim/kernel.js
var Kernel string

// Package qjs holds the engine's sources and build: QuickJS with our
// patches and shim, compiled to wasm32-wasi by build.sh and translated to
// Go (package qjsgo), committed with the module's data (DATA), so that
// building Airlock needs no C toolchain. README.md states its provenance,
// licence and how to rebuild it.
//
// The module's interface (the exports, the imports env.host_call and
// env.host_result, and the control block qjs_ctl) is described in
// shim/shim.c and shim/shim.h; internal/wasmvm runs the module. The
// kernel, the protocol of a job between the shim and internal/engine (its
// operations and entries), is declared in shim/kernel.h; its work is the
// shim's C, with no JavaScript of its own.
package qjs

import _ "embed"

// DATA is the contents of the module's data section: its active data
// segments, as in the binary format. The translated module leaves them
// out: sandboxes start from a snapshot's memory, and only the instance that
// makes a snapshot writes the data into its memory (a copy of a snapshot
// must not have them written again over the image).
//
//go:embed qjs.data
var DATA []byte

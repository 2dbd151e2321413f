// Package qjs holds the engine's WebAssembly module: QuickJS with our
// patches and shim, compiled to wasm32-wasi by build.sh and committed, so
// that building Airlock needs no C toolchain. README.md states its
// provenance, licence and how to rebuild it.
//
// The module's interface (the exports, the imports env.host_call and
// env.host_result, and the control block qjs_ctl) is described in shim.c;
// internal/wasmvm is its only user.
package qjs

import _ "embed"

// WASM is the module, instrumented with stop checks (see stopcheck).
//
//go:embed qjs.wasm
var WASM []byte

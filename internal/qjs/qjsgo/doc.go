// Package qjsgo is the engine's module (internal/qjs) translated to Go by
// wasm2go: QuickJS, the patches and the shim, linked with the memory
// imported, with the stop checks and a depth check on every cycle of the
// call graph (internal/qjs/stopcheck -depth). build.sh writes qjs.go; it
// is built only with the tag airlock_wasm2go (internal/wasmvm's backend
// of that tag), so that the default build does not compile its ~200,000
// lines.
package qjsgo

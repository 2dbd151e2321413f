// Package qjsgo is the engine's module (internal/qjs) translated to Go by
// wasm2go: QuickJS, the patches and the shim, linked with the memory
// imported, with the stop checks and a depth check on every cycle of the
// call graph (internal/qjs/stopcheck -depth). build.sh writes qjs.go, every
// method of the module marked //go:norace and //go:nocheckptr and the small
// helpers' //go:nosplit dropped, so that they are inlined into them (the
// race detector made the guest ~20 times slower), and qjs_sum.go, the
// module's identity (Sum). internal/wasmvm runs it.
package qjsgo

// Package test262 runs tc39's test262 conformance suite against the
// sandbox through its public API only, as a program meets it: a script is
// an [airlock.Executor] step (strict or sloppy as the test's flags say), a
// module is an [airlock.Run] entry with its fixtures in
// [airlock.Options].Modules, and each test gets a fresh executor or run and
// a timeout of its own.
//
// The suite is not committed: fetch.sh fetches it at the commit QuickJS
// pins, with QuickJS's own list of the tests it fails. The runner is a test
// behind a flag, so that go test ./... stays fast (it skips at once without
// the flag):
//
//	./internal/test262/fetch.sh /tmp/test262
//	nice go test ./internal/test262 -timeout 0 -test262 /tmp/test262 \
//		[-test262.dirs built-ins/Array,language/module-code] [-test262.out report.md]
//
// It reports the pass rate of each folder and lists the failures, apart
// from what is out of scope by design (code generation, SharedArrayBuffer
// and Atomics, a second realm, the features QuickJS does not implement)
// and the failures QuickJS has of its own; the test fails when a failure of
// our own is left. CONFORMANCE.md holds the figures.
package test262

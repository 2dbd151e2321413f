//go:build race

package wasmvm

// raceEnabled is set when the tests run under the race detector, which
// watches neither backend's guest code (deep_test.go).
const raceEnabled = true

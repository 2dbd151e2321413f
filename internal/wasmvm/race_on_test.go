//go:build race

package wasmvm

// raceEnabled is set when the tests run under the race detector, which
// slows the Go backend's guest code twentyfold and cannot watch wazero's.
const raceEnabled = true

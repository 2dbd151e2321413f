//go:build !race

package wasmvm

// raceEnabled: see race_on_test.go.
const raceEnabled = false

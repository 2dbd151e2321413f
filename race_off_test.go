//go:build !race

package airlock_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false

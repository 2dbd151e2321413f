//go:build !race

package nesting_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false

//go:build !race

package integration_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false

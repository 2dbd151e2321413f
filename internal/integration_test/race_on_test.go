//go:build race

package integration_test

// raceEnabled is set when the tests run under the race detector, where the
// engine runs about 40 times slower.
const raceEnabled = true

//go:build race

package nesting_test

// raceEnabled is set when the tests run under the race detector, whose
// instrumentation makes every Go frame larger: a measurement of the stack
// the parsers need holds for the build without it.
const raceEnabled = true

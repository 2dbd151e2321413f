package main

import (
	"strings"
	"testing"
)

func TestSleb(t *testing.T) {
	for _, v := range []int64{0, 1, 63, 64, -1, -64, -65, 10000, 1142312, -1 << 40} {
		r := &reader{b: appendSleb(nil, v)}
		if got := r.sleb(); got != v || r.err != nil {
			t.Errorf("sleb(%d) = %d, %v", v, got, r.err)
		}
	}
}

// TestRefusals: stopcheck fails the build rather than write a module the
// host would mishandle.
func TestRefusals(t *testing.T) {
	if _, _, err := instrument([]byte("not wasm")); err == nil {
		t.Error("instrumented a non-module")
	}
	// An instrumented module: stopcheck expects __stack_pointer as the
	// only mutable global before it adds qjs_tick.
	once, _, err := instrument(loopModule())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = instrument(once)
	if err == nil || !strings.Contains(err.Error(), "mutable globals") {
		t.Errorf("instrumenting twice: %v", err)
	}
}

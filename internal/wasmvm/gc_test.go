package wasmvm

import (
	"fmt"
	"testing"
)

// TestCycleCollectionStaysAheadOfTheLimit: a program that keeps most of
// its heap limit live and makes cyclic garbage (which only the collector
// frees) runs to its end: the next collection is set at most halfway from
// the heap left to the limit, so it runs before the limit is reached. (The
// heap's growth of 3 times between collections, uncapped, ends this run
// with ErrMemoryLimit.)
func TestCycleCollectionStaysAheadOfTheLimit(t *testing.T) {
	const limit = 48 << 20
	s := newSandbox(t, &SandboxOptions{MemoryLimit: limit})
	room := limit - s.snap.base - heapSlack // the heap limit
	live := room * 5 / 8                    // kept: 3 times it is far past the limit
	src := fmt.Sprintf(`{
		const keep = [];
		for (let n = 0; n < %d; n += 8192) keep.push(new Uint8Array(8192 - 256));
		for (let made = 0; made < %d; made += 600) {
			const a = {pad: new Array(64).fill(made)}, b = {a};
			a.b = b; // a cycle: freed by the collector only
		}
		keep.length
	}`, live, 2*room)
	if got := evalJSON(t, s, src); got == "0" {
		t.Fatalf("got %s", got)
	}
}

// TestCollectorRunsFarFromTheLimit: with room to spare the heap may grow
// to several times what a collection left, but the collector still runs:
// cyclic garbage of ~50 MB leaves a small peak.
func TestCollectorRunsFarFromTheLimit(t *testing.T) {
	s := newSandbox(t, &SandboxOptions{MemoryLimit: 256 << 20})
	if got := evalJSON(t, s, `{
		for (let i = 0; i < 200000; i++) { const a = {pad: [i, i, i, i]}, b = {a}; a.b = b }
		true
	}`); got != "true" {
		t.Fatalf("got %s", got)
	}
	if peak := s.HeapPeak(); peak > 32<<20 {
		t.Errorf("heap peak %d MiB with a small live heap: the collector did not run", peak>>20)
	}
}

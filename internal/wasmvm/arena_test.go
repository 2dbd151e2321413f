package wasmvm

import (
	"strconv"
	"testing"
)

// TestArenaBlocksReused: QuickJS's small blocks, taken from their arenas
// in order as they are needed (patch 0011) and freed into the arenas' free
// lists, are each handed out once at a time (every object keeps its
// contents, checked by a sum computed here too) and reused (the heap in
// use returns to the same size after each of several rounds).
func TestArenaBlocksReused(t *testing.T) {
	const src = `{
		let keep = [], sum = 0;
		for (let r = 0; r < 20; r++) {
			const a = [];
			for (let i = 0; i < 5000; i++) a.push({i, s: 'k' + (i * 7 + r), arr: new Array(i % 40).fill(r)});
			keep = a.filter((_, i) => i % 2 === 0);
			for (const o of keep) sum += o.i + o.s.length + o.arr.reduce((x, y) => x + y, 0);
		}
		sum
	}`
	want := 0
	for r := range 20 {
		for i := 0; i < 5000; i += 2 {
			want += i + len("k"+strconv.Itoa(i*7+r)) + (i%40)*r
		}
	}
	s := newSandbox(t, &SandboxOptions{MemoryLimit: 256 << 20})
	var first uint64
	for round := range 5 {
		if got := evalJSON(t, s, src); got != strconv.Itoa(want) {
			t.Fatalf("round %d: sum %s, want %d", round, got, want)
		}
		used := s.MemoryUsed()
		if round == 0 {
			first = used
			continue
		}
		if used > first+64<<10 {
			t.Fatalf("round %d: %d bytes of heap in use after the run, %d after the first", round, used, first)
		}
	}
}

package wasmvm

import "testing"

// TestFreePagesWalk: the walk of the C allocator's chunks from the
// snapshot's fence reaches the end of the memory exactly, in a fresh
// sandbox, after a program that grew the memory, and after one that
// fragmented the heap: the model of wasi-libc's dlmalloc that freePages
// reads (the heads, the top chunk, the segment's end) is the module's.
// Were it not, the walk would stop early (a head that makes no sense) and
// give back less, never more, than the free chunks.
func TestFreePagesWalk(t *testing.T) {
	s := newSandbox(t, &SandboxOptions{MemoryLimit: 256 << 20})
	check := func(what string) []span {
		t.Helper()
		size := s.mod.Memory().Size()
		mem, _ := s.mod.Memory().Read(0, size)
		spans, end := freePages(mem, s.snap.heapFrom)
		n := uintptr(0)
		for _, sp := range spans {
			n += sp.len
		}
		t.Logf("%s: memory %d MiB, the walk from %#x ended at %#x, %d KiB in free chunks' pages", what, size>>20, s.snap.heapFrom, end, n>>10)
		if end != uint64(size) {
			t.Errorf("%s: the walk ended at %#x, not at the memory's end %#x", what, end, size)
		}
		return spans
	}
	check("fresh")
	evalJSON(t, s, `globalThis.big = new Uint8Array(40 << 20).fill(7); 1`)
	check("grown")
	evalJSON(t, s, `globalThis.big = null; `+fragment(20))
	spans := check("fragmented")
	free := uintptr(0)
	for _, sp := range spans {
		free += sp.len
	}
	if free < 20<<20 {
		t.Errorf("%d MiB in free chunks' pages after the fragmenting program, want its 60 MiB of holes", free>>20)
	}
}

// livePages fills a live buffer of 1 MiB, each 4 KiB page with a value of
// its own, never 0; liveCheck reads three bytes of every page of it (a
// page given back would read zeros).
const (
	livePages = `globalThis.live = new Uint8Array(1 << 20);
		for (let p = 0; p < 256; p++) live.fill(p % 255 + 1, p * 4096, (p + 1) * 4096);`
	liveCheck = `for (let p = 0; p < 256; p++) for (const i of [0, 2047, 4095])
			if (live[p * 4096 + i] !== p % 255 + 1) return "page " + p;`
)

// TestTrimGivesBackFreeChunks: an idle sandbox whose heap a program
// fragmented (20 holes of ~1.5 MiB kept apart by live blocks, and a live
// buffer of 1 MiB) gives back the pages of the holes at Trim, keeps every
// page of its live data, and allocates in the holes again afterwards.
func TestTrimGivesBackFreeChunks(t *testing.T) {
	s := newSandbox(t, &SandboxOptions{MemoryLimit: 256 << 20})
	evalJSON(t, s, livePages+`
		globalThis.pins = []; for (let k = 0; k < 20; k++) {
			let b = new ArrayBuffer((1 << 20) + k * 4096);
			const p = new ArrayBuffer(b.byteLength + 4096, {maxByteLength: 64 << 20}); p.resize(16); pins.push(p);
			b = null;
		}
		1`)
	before, ok := residentFrom(s, s.snap.heapFrom)
	if !ok {
		t.Skip("the resident pages cannot be read here")
	}
	s.Trim()
	after, _ := residentFrom(s, s.snap.heapFrom)
	t.Logf("resident past the fence: %d MiB before Trim, %d MiB after", before>>20, after>>20)
	if before-after < 16<<20 || after > 4<<20 {
		t.Errorf("Trim gave back %d MiB of %d MiB, %d MiB left: want the ~24 MiB of holes back, the live 1 MiB kept",
			(before-after)>>20, before>>20, after>>20)
	}
	if got := evalJSON(t, s, `(() => { `+liveCheck+`
		return pins.length + ":" + pins.every(p => p.byteLength === 16) })()`); got != `"20:true"` {
		t.Errorf("after Trim: %s", got)
	}
	size := s.mod.Memory().Size()
	if got := evalJSON(t, s, `const again = []; for (let k = 0; k < 10; k++) again.push(new Uint8Array(1 << 20).fill(k)); again.every((a, k) => a[12345] === k)`); got != "true" {
		t.Errorf("allocating in the holes again: %s", got)
	}
	if grown := s.mod.Memory().Size(); grown != size {
		t.Errorf("the memory grew from %d to %d MiB: the holes were not used again", size>>20, grown>>20)
	}
}

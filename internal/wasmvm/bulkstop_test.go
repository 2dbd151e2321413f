package wasmvm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// bulkMarker is written at byte 64 of a buffer before a bulk operation, so
// that the test finds the buffer in the guest's memory (64: a freed chunk's
// first bytes hold the allocator's links).
var bulkMarker = []byte{0xfe, 0x01, 0xa7, 0x5c, 0x33, 0xd0, 0x8b, 0x11, 0x9e, 0x42, 0xc6, 0x07, 0x7d, 0xe9, 0x25, 0xb8}

// TestStopDuringBulkMemory: Terminate stops one large fill, copy or
// zeroing while it runs. WebAssembly's memory.fill and memory.copy are
// single instructions that wazero runs to their end; the module's memset,
// memcpy and memmove (shim/bulk.c) work in chunks with a stop check
// between them. Each program calls started() before its operation, with
// the buffer it works on marked; the test finds the buffer, waits until
// the operation has changed a byte 1 MiB into it (under way; seen at the
// guest's tick between two chunks), terminates, and when the run has ended
// checks the buffer's last byte: unchanged means
// the operation stopped early. With one memory.fill or memory.copy, the
// operation would have run to its end. Order by events only.
func TestStopDuringBulkMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills buffers of hundreds of MB")
	}
	const n = 192 << 20
	marker := func(v string) string {
		s := v + ".set(["
		for i, b := range bulkMarker {
			if i > 0 {
				s += ","
			}
			s += strconv.Itoa(int(b))
		}
		return s + "], 64); "
	}
	N := strconv.Itoa(n)
	for _, c := range []struct {
		name, src string
		from, to  byte // the watched bytes' value before and after the operation
		// copy: the operation copies the marked buffer to a new one, the
		// one watched, found (by the marker its first chunk copies) in the
		// 4 MiB after the marked buffer, where the allocator puts it
		copy bool
	}{
		{"TypedArray fill", "const d = new Uint8Array(" + N + "); " + marker("d") + "started(); d.fill(1); 0", 0, 1, false},
		{"TypedArray set", "const s = new Uint8Array(" + N + ").fill(1), d = new Uint8Array(" + N + "); " + marker("d") +
			"started(); d.set(s); 0", 0, 1, false},
		{"copyWithin", "const d = new Uint8Array(2 * " + N + "); d.fill(1, 0, " + N + "); " + marker("d.subarray("+N+")") +
			"started(); d.copyWithin(" + N + ", 0, " + N + "); 0", 0, 1, false},
		// t grows the memory for the copy, so the test can read it from
		// started() on (it reads only memory that existed then)
		{"slice", "const s = new Uint8Array(" + N + ").fill(1); let t = new Uint8Array(" + N + " + (8 << 20)); t = null; " + marker("s") +
			"started(); s.slice(); 0", 0, 1, true},
		{"zeroing of a reused allocation", "let a = new Uint8Array(" + N + ").fill(1); " + marker("a") +
			"a = null; started(); const b = new Uint8Array(" + N + "); 0", 1, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSandbox(t, &SandboxOptions{MemoryLimit: 1 << 30})
			mem := s.mod.Memory()
			// all: the memory as started() finds it (a view of it, read on
			// the guest's goroutine only: in started() and at its ticks)
			var all []byte
			var buf uint32
			byteAt := func(off uint32) byte { return all[buf+off] }
			err := s.DefineFunc(context.Background(), "started", func(context.Context, []Value) (Value, error) {
				all, _ = mem.Read(0, mem.Size())
				at := bytes.Index(all, bulkMarker)
				if at < 0 || bytes.Index(all[at+1:], bulkMarker) >= 0 {
					return Value{}, errors.New("the marked buffer is not found once in memory")
				}
				buf = uint32(at - 64)
				if !c.copy && byteAt(n-1) != c.from {
					return Value{}, fmt.Errorf("the buffer's last byte is %d before the operation, want %d", byteAt(n-1), c.from)
				}
				// Terminate from the guest's own tick once the operation is
				// under way (a byte 1 MiB in has changed): an event of the
				// guest's work, not a race with it. The tick that
				// terminates answers stop; an operation done in one
				// instruction would reach its end before any tick.
				src, seen := buf, !c.copy
				hook := func(at *Sandbox) {
					if at != s {
						return
					}
					if !seen { // the copy's first chunk is in the new buffer
						if i := bytes.Index(all[src+n:src+n+4<<20], bulkMarker); i >= 0 {
							buf, seen = src+n+uint32(i)-64, true
						}
					}
					if seen && byteAt(1<<20) == c.to {
						s.Terminate()
					}
				}
				tickHook.Store(&hook)
				return Value{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			defer tickHook.Store(nil)
			_, err = s.Eval(context.Background(), c.src, "bulk.js", Script)
			if !errors.Is(err, ErrTerminated) {
				t.Fatalf("err = %v, want ErrTerminated", err)
			}
			if last := byteAt(n - 1); last != c.from {
				t.Errorf("the operation ran to its end after Terminate (last byte %d)", last)
			}
		})
	}
}

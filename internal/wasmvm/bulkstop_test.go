package wasmvm

import (
	"bytes"
	"context"
	"errors"
	"runtime"
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
// the operation has changed a byte 1 MiB into it (under way), terminates,
// and when the run has ended checks the buffer's last byte: unchanged means
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
			found := make(chan uint32, 1)
			// all: the memory as started() finds it, read while the guest
			// runs (through wazero's Memory only while it waits)
			var all []byte
			err := s.DefineFunc(context.Background(), "started", func(context.Context, []Value) (Value, error) {
				all, _ = mem.Read(0, mem.Size())
				at := bytes.Index(all, bulkMarker)
				if at < 0 || bytes.Index(all[at+1:], bulkMarker) >= 0 {
					t.Error("the marked buffer is not found once in memory")
					at = 0
				}
				found <- uint32(at - 64)
				return Value{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.Eval(context.Background(), c.src, "bulk.js", Script)
				done <- err
			}()
			var buf uint32
			select {
			case buf = <-found:
			case err := <-done:
				t.Fatalf("ended before started(): %v", err)
			}
			if t.Failed() {
				s.Terminate()
				<-done
				return
			}
			byteAt := func(off uint32) byte { return all[buf+off] }
			if c.copy {
				src := buf
				for { // under way: the copy's first chunk is in the new buffer
					after := all[src+n : src+n+4<<20]
					if at := bytes.Index(after, bulkMarker); at >= 0 {
						buf = src + n + uint32(at) - 64
						break
					}
					select {
					case err := <-done:
						t.Fatalf("ended before the copy was seen under way: %v", err)
					default:
						runtime.Gosched()
					}
				}
			} else if last := byteAt(n - 1); last != c.from {
				t.Fatalf("the buffer's last byte is %d before the operation, want %d", last, c.from)
			}
			for byteAt(1<<20) != c.to { // under way
				select {
				case err := <-done:
					t.Fatalf("ended before the operation was seen under way: %v", err)
				default:
					runtime.Gosched()
				}
			}
			s.Terminate()
			if err := <-done; !errors.Is(err, ErrTerminated) {
				t.Errorf("err = %v, want ErrTerminated", err)
			}
			if last := byteAt(n - 1); last != c.from {
				t.Errorf("the operation ran to its end after Terminate (last byte %d)", last)
			}
		})
	}
}

//go:build !airlock_anonmem

package wasmvm

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// growWasm: a module with a memory of 1 page (at most 4096) and two
// functions, grow(pages) (memory.grow) and load(addr) (i32.load).
var growWasm = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60,
	0x01, 0x7f, 0x01, 0x7f, 0x03, 0x03, 0x02, 0x00, 0x00, 0x05, 0x05, 0x01,
	0x01, 0x01, 0x80, 0x20, 0x07, 0x15, 0x03, 0x03, 0x6d, 0x65, 0x6d, 0x02,
	0x00, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x00, 0x04, 0x6c, 0x6f, 0x61,
	0x64, 0x00, 0x01, 0x0a, 0x10, 0x02, 0x06, 0x00, 0x20, 0x00, 0x40, 0x00,
	0x0b, 0x07, 0x00, 0x20, 0x00, 0x28, 0x02, 0x00, 0x0b,
}

// TestGrownMemoryMappedAheadIsNotTheGuests: once the memory has grown past
// hugeFrom, a growth maps the reservation ahead of the guest's size (to a
// huge-page boundary); the guest still reads zeros up to its size and traps
// at it, and cannot grow past the limit.
func TestGrownMemoryMappedAheadIsNotTheGuests(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	const limit = 64 << 20
	a := &allocator{limit: limit}
	mod, err := r.InstantiateWithConfig(experimental.WithMemoryAllocator(ctx, a), growWasm, wazero.NewModuleConfig())
	if err != nil {
		t.Fatal(err)
	}
	grow, load := mod.ExportedFunction("grow"), mod.ExportedFunction("load")
	size := uint64(1 << 16)
	for _, pages := range []uint64{1, 7, 100, 1, 33, 200} { // across hugeFrom (4 MiB) and 2 MiB boundaries
		if _, err := grow.Call(ctx, pages); err != nil {
			t.Fatal(err)
		}
		size += pages << 16
		if got := uint64(mod.Memory().Size()); got != size {
			t.Fatalf("size %d, want %d", got, size)
		}
		if a.mem.mapped < uintptr(size) || a.mem.committed != uintptr(size) {
			t.Fatalf("mapped %d, committed %d, size %d", a.mem.mapped, a.mem.committed, size)
		}
		if v, err := load.Call(ctx, size-4); err != nil || v[0] != 0 {
			t.Fatalf("load(size-4) = %v, %v; want 0", v, err)
		}
		// The bytes past the size are mapped and written here, where the
		// guest must not see them.
		if a.mem.mapped > uintptr(size) {
			*(*uint32)(unsafe.Add(a.mem.base, size)) = 0xdeadbeef
		}
		if _, err := load.Call(ctx, size); err == nil || !strings.Contains(err.Error(), "out of bounds") {
			t.Fatalf("load(size) = %v, want out of bounds", err)
		}
		if _, err := load.Call(ctx, size-2); err == nil {
			t.Fatal("load(size-2) read past the size")
		}
	}
	if a.mem.mapped == a.mem.committed {
		t.Error("no growth mapped ahead: the huge-page path was not taken")
	}
	if res, err := grow.Call(ctx, (limit >> 16)); err != nil || int32(res[0]) != -1 {
		t.Fatalf("grow past the limit = %v, %v; want -1", res, err)
	}
}

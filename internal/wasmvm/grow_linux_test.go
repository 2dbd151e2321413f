//go:build !airlock_anonmem

package wasmvm

import (
	"testing"
	"unsafe"
)

// TestGrownMemoryMappedAheadIsNotTheGuests: once the memory has grown past
// hugeFrom, a growth maps the reservation ahead of the guest's size (to a
// huge-page boundary); the memory the module sees (the slice its loads and
// stores index, bounds-checked) still ends at its size and reads zeros up
// to it, and it cannot grow past the limit.
func TestGrownMemoryMappedAheadIsNotTheGuests(t *testing.T) {
	const limit = 64 << 20
	a := &allocator{limit: limit}
	m := &goMemory{lm: a.Allocate(1 << 32)}
	defer m.lm.Free()
	imp := goImport{m}
	size := uint64(0)
	for _, pages := range []int64{1, 1, 7, 100, 1, 33, 200} { // across hugeFrom (4 MiB) and 2 MiB boundaries
		if old := imp.Grow(pages, 65536); old != int64(size>>16) {
			t.Fatalf("grow(%d) = %d, want %d", pages, old, size>>16)
		}
		size += uint64(pages) << 16
		buf := *imp.Slice()
		if uint64(len(buf)) != size || uint64(cap(buf)) != size {
			t.Fatalf("the module's memory: len %d cap %d, want both %d", len(buf), cap(buf), size)
		}
		if a.mem.mapped < uintptr(size) || a.mem.committed != uintptr(size) {
			t.Fatalf("mapped %d, committed %d, size %d", a.mem.mapped, a.mem.committed, size)
		}
		if v, ok := m.ReadUint32Le(uint32(size - 4)); !ok || v != 0 {
			t.Fatalf("read(size-4) = %d, %v; want 0", v, ok)
		}
		// The bytes past the size are mapped and written here, where the
		// guest must not see them.
		if a.mem.mapped > uintptr(size) {
			*(*uint32)(unsafe.Add(a.mem.base, size)) = 0xdeadbeef
		}
		if _, ok := m.ReadUint32Le(uint32(size)); ok {
			t.Fatal("read(size) succeeded")
		}
		if _, ok := m.ReadUint32Le(uint32(size - 2)); ok {
			t.Fatal("read(size-2) read past the size")
		}
	}
	if a.mem.mapped == a.mem.committed {
		t.Error("no growth mapped ahead: the huge-page path was not taken")
	}
	if r := imp.Grow(limit>>16, 65536); r != -1 {
		t.Fatalf("grow past the limit = %d, want -1", r)
	}
}

package engine

import (
	"strings"
	"sync"
	"testing"
)

// TestOwnAllocator: each VM allocates from its own allocator, found in the
// memory package this build uses; when the package changes its layout, VMs
// silently fall back to the process's shared heap, and this test says so.
func TestOwnAllocator(t *testing.T) {
	if regsOffset == 0 {
		t.Fatal("modernc.org/memory's Allocator has no regs map where expected: VMs share the process heap (see alloc.go)")
	}
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	st := v.alloc
	if st.mem == nil || st.owned == 0 {
		t.Fatalf("a new VM allocated nothing of its own: mem %v, owned %d", st.mem != nil, st.owned)
	}
	v.Close()
	if st.owned != 0 {
		t.Fatalf("%d blocks of the VM's allocator were not freed when it closed", st.owned)
	}
}

// Blocks the engine allocated before the hooks (the atom table, the shapes
// of the intrinsics) are freed and grown through them: they go back to the
// shared heap, or move to the VM's own, never to the wrong one. A run that
// makes many atoms, properties and shapes grows those tables; then every
// block of the VM's allocator is freed with it, and the memory accounting
// of the engine ends where it started.
func TestOwnAllocatorForeignBlocks(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	st := v.alloc
	base := v.HeapBytes()
	src := `
		const o = {};
		for (let i = 0; i < 20000; i++) o["p" + i] = { ["q" + i]: i };
		Object.keys(o).length`
	if got, err := v.vm.Eval(src, 0); err != nil || got != 20000 {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := v.vm.Eval(`for (const k of Object.keys(globalThis)) if (k.startsWith("p")) delete globalThis[k]; 1`, 0); err != nil {
		t.Fatal(err)
	}
	if v.HeapBytes() <= base {
		t.Fatalf("heap %d after the run, %d before", v.HeapBytes(), base)
	}
	v.Close()
	if st.owned != 0 {
		t.Fatalf("%d blocks left in the VM's allocator", st.owned)
	}
}

// VMs on many goroutines at once allocate without sharing a lock, and each
// frees all it allocated (run with -race).
func TestOwnAllocatorConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				v, err := New()
				if err != nil {
					errs <- err.Error()
					return
				}
				st := v.alloc
				if _, err := v.vm.Eval(`JSON.stringify(Array.from({length: 5000}, (_, i) => ({i, s: "x".repeat(i % 50)}))).length > 0`, 0); err != nil {
					errs <- err.Error()
				}
				v.Close()
				if st.owned != 0 {
					errs <- "blocks left after Close"
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []string
	for e := range errs {
		all = append(all, e)
	}
	if len(all) > 0 {
		t.Fatal(strings.Join(all, "; "))
	}
}

package engine

import (
	"context"
	"testing"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// TestRunWritesFewImagePages: a small program run in a fresh VM (the kernel
// and Intl in its image) writes few of the image's pages: a copy's new
// blocks land together in the headroom (RATIONALE.md, "What a run writes
// of the image"). Measured on Linux: 40 pages, 59 when the snapshot is
// captured with its allocators' holes in reach; the bound is generous.
func TestRunWritesFewImagePages(t *testing.T) {
	// A fresh instance, not a pooled one: a rewound instance keeps as its
	// own every page its earlier runs wrote. The pool holds instances of
	// linearLimit only.
	sn, err := snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sn.NewSandbox(context.Background(), &wasmvm.SandboxOptions{MemoryLimit: linearLimit + 64<<20})
	if err != nil {
		t.Fatal(err)
	}
	v := newVM(sb)
	defer v.Close()
	if o := v.Run(mainJob(v, `export default JSON.stringify({a: 1, b: [2, 3]})`)); o.Kind != OK {
		t.Fatalf("%+v", o)
	}
	n, ok := v.WrittenPages()
	if !ok {
		t.Skip("the written pages cannot be read here")
	}
	t.Logf("image pages written: %d", n)
	if n > 48 {
		t.Errorf("a small program wrote %d pages of the image, want at most 48", n)
	}
}

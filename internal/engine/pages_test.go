package engine

import (
	"context"
	"testing"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// TestRunWritesFewImagePages: a small program run in a fresh VM (the kernel
// and Intl in its image) writes few of the image's pages: a copy's new
// blocks land together in the headroom (RATIONALE.md, "What a run writes
// of the image"), the first arenas of each block size small (patch 0010).
// Measured on Linux: 30 pages (40 before patch 0010, 59 when the snapshot
// is captured with its allocators' holes in reach); the bound is generous.
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
	if n > 38 {
		t.Errorf("a small program wrote %d pages of the image, want at most 38", n)
	}
}

// TestSessionStepWritesFewImagePages: a session's first step writes few of
// its image's pages: the session's set-up (the console, final_answer) is
// in the image NewSession starts from, not written by each session
// (RATIONALE.md, "Idle executor memory"). Measured on Linux: 26 pages
// from the session's image, 32 with the set-up run in a VM of the shared
// snapshot (the hot pages a new sandbox has populated included; 29 and 41
// before patch 0010's small first arenas); the bound is between them.
func TestSessionStepWritesFewImagePages(t *testing.T) {
	step := func(v *VM) int {
		t.Helper()
		defer v.Close()
		j := &Job{Stop: make(chan struct{}), LogBytes: func(int, []byte) {}}
		if out, _ := v.Step(j, "return 1 + 2", 1e6); out.Kind != OK || out.Value != 3.0 {
			t.Fatalf("%+v", out)
		}
		n, ok := v.WrittenPages()
		if !ok {
			t.Skip("the written pages cannot be read here")
		}
		return n
	}
	// A memory limit beyond the pooled instances' gives fresh instances: a
	// rewound one keeps as its own every page its earlier runs wrote.
	const limit = linearLimit + 64<<20
	s, err := NewSession(limit)
	if err != nil {
		t.Fatal(err)
	}
	shared := step(s)
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.StartSession(limit); err != nil {
		t.Fatal(err)
	}
	if err := v.DefineTool("final_answer", FinalAnswerID, false, true); err != nil {
		t.Fatal(err)
	}
	own := step(v)
	t.Logf("image pages written by a session's first step: %d from the session's image, %d with its own set-up", shared, own)
	if shared > 30 {
		t.Errorf("a session's first step wrote %d pages of its image, want at most 30", shared)
	}
}

package wasmvm

import (
	"context"
	"testing"
)

// TestCaptureIsolation: a snapshot captured from a sandbox starts every
// sandbox with what the captured one set up, and a run's writes, prototype
// pollution and global state never reach the next sandbox from it, nor a
// rewound one; the captured image's holes are reused as the first
// image's are.
func TestCaptureIsolation(t *testing.T) {
	ctx := context.Background()
	src := newSandbox(t, nil)
	evalJSON(t, src, `globalThis.setUp = {n: 1}; globalThis.keep = []; for (let i = 0; i < 5000; i++) keep.push({i}); for (let i = 0; i < 5000; i += 2) keep[i] = null; 1`)
	sn, err := src.Capture(ctx, &CaptureOptions{Pool: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	if _, err := src.Eval(ctx, "1", "x.js", Script); err == nil {
		t.Error("the captured sandbox still runs programs")
	}
	const dirty = `
		setUp.n = 2; globalThis.leak = 'secret';
		Object.prototype.polluted = true;
		JSON.stringify = () => '"hijacked"';
		keep.length = 0;
		undefined`
	const probe = `[setUp.n, typeof leak, ({}).polluted, JSON.stringify(1), keep.length, keep.reduce((n, o) => n + (o ? 1 : 0), 0)]`
	const clean = `[1,"undefined",null,"1",5000,2500]`
	a, err := sn.NewSandbox(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, a, probe); got != clean {
		t.Fatalf("a first sandbox of the capture: %s, want %s", got, clean)
	}
	evalJSON(t, a, dirty)
	evalJSON(t, a, `globalThis.more = []; for (let i = 0; i < 20000; i++) more.push({i, s: 'w' + i}); more.length`)
	b, err := sn.NewSandbox(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if got := evalJSON(t, b, probe); got != clean {
		t.Errorf("the next sandbox of the capture: %s, want %s", got, clean)
	}
	if !a.Reset() {
		t.Fatal("Reset failed")
	}
	if got := evalJSON(t, a, probe); got != clean {
		t.Errorf("a rewound sandbox of the capture: %s, want %s", got, clean)
	}
	a.Close(ctx)
	// The first snapshot is untouched.
	c := newSandbox(t, nil)
	if got := evalJSON(t, c, "typeof setUp"); got != `"undefined"` {
		t.Errorf("the first snapshot's sandbox sees the capture's set-up: %s", got)
	}
}

// TestCaptureRefusesHostFunctions: a sandbox with functions of DefineFunc
// cannot be captured: their Go side would not be in the image.
func TestCaptureRefusesHostFunctions(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, nil)
	if err := s.DefineFunc(ctx, "f", func(context.Context, []Value) (Value, error) { return Value{}, nil }); err != nil {
		t.Fatal(err)
	}
	if sn, err := s.Capture(ctx, nil); err == nil {
		sn.Close()
		t.Fatal("captured a sandbox with a host function")
	}
}

// TestTrim: Trim gives back the pages an idle sandbox wrote that hold the
// image's bytes again, and the sandbox goes on as it was: its state kept,
// its next runs right, its rewind still the image.
func TestTrim(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, nil)
	evalJSON(t, s, `globalThis.kept = {a: [1, 2, 3]}; JSON.stringify(Object.keys(globalThis).length); 1`)
	before, ok := s.WrittenPages()
	if !ok {
		t.Skip("no /proc/self/pagemap")
	}
	n := s.Trim()
	after, _ := s.WrittenPages()
	t.Logf("pages written %d, %d given back, %d left", before, n, after)
	if n <= 0 || after > before-n {
		t.Errorf("Trim gave back %d of %d pages, %d left", n, before, after)
	}
	if got := evalJSON(t, s, `JSON.stringify(kept) + [1, 2].map(x => x * 2)`); got != `"{\"a\":[1,2,3]}2,4"` {
		t.Errorf("after Trim: %s", got)
	}
	for range 3 {
		s.Trim()
		if got := evalJSON(t, s, `kept.a.reduce((x, y) => x + y, 0)`); got != "6" {
			t.Errorf("after Trim: %s", got)
		}
	}
	if !s.Reset() {
		t.Fatal("Reset failed")
	}
	if got := evalJSON(t, s, `typeof kept`); got != `"undefined"` {
		t.Errorf("rewound after Trim: typeof kept = %s", got)
	}
	if _, err := s.Eval(ctx, "1", "x.js", Script); err != nil {
		t.Fatal(err)
	}
}

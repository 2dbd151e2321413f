package wasmvm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
)

// poolSnapshot is a snapshot of its own (the shared one's pool is used by
// every test), closed at the end of the test; Pool: -1 gives one without a
// pool, every sandbox a new wazero instance.
func poolSnapshot(t testing.TB, opts *SnapshotOptions) *Snapshot {
	t.Helper()
	ctx := context.Background()
	e, err := NewEngine(ctx, &EngineOptions{CacheDir: os.Getenv("AIRLOCK_TEST_CACHE")})
	if err != nil {
		t.Fatal(err)
	}
	sn, err := e.NewSnapshot(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sn.Close(); e.Close(ctx) })
	return sn
}

// TestPoolNoCarry: a sandbox made from a pooled instance (the same wazero
// instance, checked) carries nothing of the closed sandbox that used it:
// globals, prototype pollution, module state, host functions, the module
// loader, a pending Terminate.
func TestPoolNoCarry(t *testing.T) {
	ctx := context.Background()
	sn := poolSnapshot(t, nil)
	a, err := sn.NewSandbox(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.DefineFunc(ctx, "secretFn", func(context.Context, []Value) (Value, error) {
		return Value{Kind: String, Text: "secret"}, nil
	})
	a.SetModuleLoader(func(context.Context, string) (string, error) { return "export const s = 'secret'", nil })
	evalJSON(t, a, `globalThis.leak = 'secret'; var topLevel = 1;
		Object.prototype.polluted = true; Array.prototype.push = function () { return 'hijacked' };
		JSON.stringify = () => '"hijacked"'; Math.random = () => 4; delete globalThis.structuredClone;
		Object.freeze(Object.prototype); 1`)
	if _, err := a.Eval(ctx, "import {s} from 'x'; globalThis.m = s", "m.js", Module); err != nil {
		t.Fatal(err)
	}
	mod := a.mod
	a.Terminate() // pending: never run
	// Terminate spends nothing until a run sees it, so the instance is pooled
	// with the stop word set in its memory; the rewind must clear it.
	a.Close(ctx)
	a.Terminate() // after Close: a no-op on the pooled instance
	b, err := sn.NewSandbox(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if b.mod != mod {
		t.Fatal("the second sandbox did not reuse the pooled instance")
	}
	const probe = `[typeof leak, typeof topLevel, ({}).polluted, [].push(1), JSON.stringify(1), Math.random() === 4, typeof structuredClone, Object.isFrozen(Object.prototype), typeof m, typeof secretFn]`
	const clean = `["undefined","undefined",null,1,"1",false,"function",false,"undefined","undefined"]`
	if got := evalJSON(t, b, probe); got != clean {
		t.Errorf("pooled instance: %s, want %s", got, clean)
	}
	if _, err := b.Eval(ctx, "import {s} from 'x'", "m2.js", Module); err == nil {
		t.Error("the module loader of the closed sandbox answered the next one")
	}
	a.Terminate()
	if got := evalJSON(t, b, "1+2"); got != "3" {
		t.Errorf("a Terminate on the closed handle reached the new sandbox: %s", got)
	}
}

// TestPoolSpentNotKept: a spent sandbox (terminated, out of memory) is
// closed, not pooled; and a sandbox of another memory limit does not take
// an instance of a different limit.
func TestPoolSpentNotKept(t *testing.T) {
	ctx := context.Background()
	sn := poolSnapshot(t, nil)
	a, _ := sn.NewSandbox(ctx, nil)
	a.Terminate()
	if _, err := a.Eval(ctx, "for (;;) {}", "loop.js", Script); !errors.Is(err, ErrTerminated) {
		t.Fatalf("got %v, want ErrTerminated", err)
	}
	mod := a.mod
	a.Close(ctx)
	if len(sn.pool) != 0 {
		t.Fatal("a spent sandbox's instance was pooled")
	}
	if mod.IsClosed() == false {
		t.Error("a spent sandbox's instance was not closed")
	}
	b, _ := sn.NewSandbox(ctx, nil)
	bm := b.mod
	b.Close(ctx)
	c, _ := sn.NewSandbox(ctx, &SandboxOptions{MemoryLimit: 128 << 20})
	defer c.Close(ctx)
	if c.mod == bm {
		t.Error("a sandbox of a 128 MiB limit took an instance reserved at 64 MiB")
	}
}

// TestPoolBound: the pool keeps at most Pool instances; the rest are
// closed. Snapshot.Close closes the pooled ones. Pool < 0 keeps none.
func TestPoolBound(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ opt, want int }{{2, 2}, {-1, 0}} {
		sn := poolSnapshot(t, &SnapshotOptions{Pool: c.opt})
		sn.mu.Lock()
		for _, p := range sn.pool { // learnHot's probe
			p.mod.Close(ctx)
		}
		sn.pool = nil
		sn.mu.Unlock()
		var sbs []*Sandbox
		for range 5 {
			s, err := sn.NewSandbox(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			sbs = append(sbs, s)
		}
		var closed int
		for _, s := range sbs {
			m := s.mod
			s.Close(ctx)
			if m.IsClosed() {
				closed++
			}
		}
		if len(sn.pool) != c.want || closed != 5-c.want {
			t.Errorf("Pool %d: %d pooled, %d closed; want %d pooled", c.opt, len(sn.pool), closed, c.want)
		}
		pool := append([]pooled(nil), sn.pool...)
		sn.Close()
		for _, p := range pool {
			if !p.mod.IsClosed() {
				t.Errorf("Pool %d: Snapshot.Close left a pooled instance open", c.opt)
			}
		}
	}
}

// TestPoolConcurrent: sandboxes made and closed on four goroutines share
// the pool; each one sees a clean realm; the snapshot is closed while the
// last ones close (for -race, and for the image's lifetime against a
// rewind in progress).
func TestPoolConcurrent(t *testing.T) {
	ctx := context.Background()
	sn := poolSnapshot(t, &SnapshotOptions{Pool: 2})
	errs := make(chan error, 4)
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for r := range 40 {
				s, err := sn.NewSandbox(ctx, nil)
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				res, err := s.Eval(ctx, "const seen = typeof mark; globalThis.mark = 1; seen", "w.js", Script)
				if err != nil || res.Value.Text != `"undefined"` {
					errs <- fmt.Errorf("worker %d round %d: %v %s", w, r, err, res.Value.Text)
				}
				s.Close(ctx)
			}
		}()
	}
	<-done
	sn.Close()
	for range 3 {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

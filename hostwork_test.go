package airlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/hostwork"
)

// The host's own work inside the engine's host calls (a TypeScript
// transform, a scan of a long source, a collation, a step's erasure) used
// to run on the VM's goroutine to its end, out of reach of every stop:
// Terminate, Options.Timeout, a cancelled context and the safety cap took
// effect seconds later for inputs of tens of MB, and an executor's Timeout
// did not cover a step's erasure at all. These tests hold such work under
// way (internal/hostwork's test hook blocks it before it starts), stop the
// run, and require the run to settle while the work is still held: by the
// order of events, not by time. A run that waited for the work would wait
// for the hold's safety release, a minute later, and fail.

// workHold holds the next host work of a kind and size until released.
type workHold struct {
	started  chan struct{} // closed when the work is held
	gate     chan struct{}
	mu       sync.Mutex
	released bool
	safety   bool // released by the safety timer: the stop waited for the work
	timer    *time.Timer
	restore  func()
}

func holdWork(t *testing.T, kind string, size int) *workHold {
	t.Helper()
	h := &workHold{started: make(chan struct{}), gate: make(chan struct{})}
	var once sync.Once
	h.restore = hostwork.SetTestHook(func(k string, n int) {
		if k != kind || n != size {
			return
		}
		held := false
		once.Do(func() { held = true; close(h.started) })
		if held {
			<-h.gate
		}
	})
	h.timer = time.AfterFunc(blockerSafety, func() { h.release(true) })
	t.Cleanup(func() { h.release(false) })
	return h
}

func (h *workHold) release(safety bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.released {
		h.released, h.safety = true, safety
		h.timer.Stop()
		h.restore()
		close(h.gate)
	}
}

// wait waits until the work is held.
func (h *workHold) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.started:
	case <-time.After(blockerSafety):
		t.Fatal("the host work to hold never started")
	}
}

// engineStarted runs a program, so that the engine's start-up is done: a
// run that waits for it has its entry transformed meanwhile, not by the
// module loader (source.Pretransform).
func engineStarted(t *testing.T) {
	t.Helper()
	if !airlock.EngineStarted() {
		wantResult(t, runOpts(t, "export default 1", airlock.Options{}), 1.0)
	}
}

// settledFirst checks that the run settled while the work was held, then
// releases it and waits for the abandoned work to end.
func (h *workHold) settledFirst(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	safety := h.released && h.safety
	h.mu.Unlock()
	if safety {
		t.Fatal("the run settled only after its host work was released: the stop waited for it")
	}
	h.release(false)
	hostWorkDrained(t)
}

// hostWorkDrained waits for every host work to end, within a bound only
// work that never ends reaches.
func hostWorkDrained(t *testing.T) {
	t.Helper()
	for end := time.Now().Add(blockerSafety); ; {
		w, b, q := hostwork.InFlight()
		if w == 0 && b == 0 && q == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("host work never ended: %d works, %d bytes, %d waiting", w, b, q)
		}
		time.Sleep(time.Millisecond)
	}
}

// uniqueTS is TypeScript of n bytes or a little more that the module
// loader must transform (it reads as type arguments), different for each
// seed so that no cache holds it.
func uniqueTS(seed string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s %d\nfunction id<T>(x: T): T { return x; }\n", seed, time.Now().UnixNano())
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "const v%d: number = id<number>(%d);\n", i, i)
	}
	b.WriteString("export default v0;\n")
	return b.String()
}

// stopKinds are the four ways a run is stopped; each settles terminated
// with its own message. The timed ones fire after d, which the test raises
// when the timer fired before the run reached its host work.
var stopKinds = []struct {
	name string
	msg  string
	// opts sets up the run, rt its runtime; stop stops it once its host
	// work is held.
	opts func(o *airlock.Options, d time.Duration)
	rt   func(d time.Duration) *airlock.Runtime
	stop func(*airlock.Execution, context.CancelFunc)
}{
	{"terminate", "terminated: test", nil, nil, func(ex *airlock.Execution, _ context.CancelFunc) { ex.Terminate("test") }},
	{"timeout", "Options.Timeout", func(o *airlock.Options, d time.Duration) { o.Timeout = d }, nil, nil},
	{"context", "context canceled", nil, nil, func(_ *airlock.Execution, cancel context.CancelFunc) { cancel() }},
	{"safety cap", "safety cap", nil, func(d time.Duration) *airlock.Runtime {
		return airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: d})
	}, nil},
}

// timed runs try with d, a short time (so that the test is quick), then,
// when the time ran out before the host work started (a loaded machine),
// with four times as much, up to a bound only a broken run reaches. Before
// the next try, the work the stopped run abandoned ends: started after its
// hold was lifted, it would take the next try's hold (same kind, same size)
// and leave that try's own work unheld.
func timed(t *testing.T, try func(d time.Duration) (held bool)) {
	t.Helper()
	for d := 20 * time.Millisecond; !try(d); d *= 4 {
		if d > 20*time.Second {
			t.Fatal("the stop never found the host work under way")
		}
		for end := time.Now().Add(blockerSafety); ; time.Sleep(time.Millisecond) {
			if w, _, _ := hostwork.InFlight(); w == 0 {
				break
			}
			if time.Now().After(end) {
				t.Fatal("an abandoned host work never ended")
			}
		}
	}
}

// runHeld starts src with opts, holds its host work of kind and size, stops
// the run the way stopKinds[sk] does, and checks that it settles terminated
// while the work is held.
func runHeld(t *testing.T, src string, opts airlock.Options, kind string, size int, sk int) {
	t.Helper()
	engineStarted(t)
	k := stopKinds[sk]
	timed(t, func(d time.Duration) bool {
		rt := testRuntime()
		if k.rt != nil {
			rt = k.rt(d)
			defer rt.Close()
		}
		opts := opts
		if k.opts != nil {
			k.opts(&opts, d)
		}
		h := holdWork(t, kind, size)
		defer h.release(false)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ex, err := rt.Run(ctx, src, opts)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.started:
		case <-ex.Done():
			if k.stop != nil {
				t.Fatalf("the run settled before its host work started: %+v", ex.Wait().Error)
			}
			return false // the timer fired first: again, with more time
		case <-time.After(blockerSafety):
			t.Fatal("the host work to hold never started")
		}
		if k.stop != nil {
			k.stop(ex, cancel)
		}
		res := ex.Wait()
		h.settledFirst(t)
		wantStatus(t, res, airlock.StatusTerminated)
		if !strings.Contains(res.Error.Message, k.msg) {
			t.Fatalf("message %q, want it to name %q", res.Error.Message, k.msg)
		}
		return true
	})
}

// A run stopped while the module loader transforms its TypeScript (the
// entry, a module, the transform of TypeScript first tried as JavaScript)
// or scans a long source settles at once, every stop alike.
func TestHostWork_StopsDuringModuleLoading(t *testing.T) {
	long := "export default 1;\n" + strings.Repeat("// a long JavaScript module, scanned off the VM's goroutine\n", 2000)
	for _, c := range []struct {
		name string
		src  func() (src string, opts airlock.Options, size int)
	}{
		{"entry transform", func() (string, airlock.Options, int) {
			src := uniqueTS("entry", 4000)
			return src, airlock.Options{}, len(src)
		}},
		{"module transform", func() (string, airlock.Options, int) {
			lib := uniqueTS("module", 4000)
			return `import v from "./lib.ts"; export default v;`, airlock.Options{Modules: map[string]string{"./lib.ts": lib}}, len(lib)
		}},
		{"fallback transform", func() (string, airlock.Options, int) {
			src := fmt.Sprintf("// %d\nconst x: number = 1;\nexport default x;\n", time.Now().UnixNano())
			return src, airlock.Options{}, len(src)
		}},
		{"long source scan", func() (string, airlock.Options, int) {
			src := fmt.Sprintf("// %d\n%s", time.Now().UnixNano(), long)
			return src, airlock.Options{Language: airlock.JavaScript}, len(src)
		}},
	} {
		for sk, k := range stopKinds {
			t.Run(c.name+"/"+k.name, func(t *testing.T) {
				src, opts, size := c.src()
				runHeld(t, src, opts, "load", size, sk)
			})
		}
	}
}

// A run stopped while Intl collates two long strings in Go settles at
// once; the collation runs on, abandoned.
func TestHostWork_StopsDuringCollation(t *testing.T) {
	src := `const a = "한국어".repeat(30000); export default a.localeCompare(a + "가", "ko");`
	for sk, k := range stopKinds {
		t.Run(k.name, func(t *testing.T) {
			// The collator reads 64 KiB of each string (SECURITY.md, "Bounds").
			runHeld(t, src, airlock.Options{Language: airlock.JavaScript}, "collate", 2*64<<10, sk)
		})
	}
	// Unheld, the same comparison answers.
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, -1.0)
}

// An executor's Timeout covers the whole step: the scan of a long step,
// the erasure of its types, a collation while it runs. A step held in any
// of them fails with ERR_EXEC_TIMEOUT while the work is held; so does a
// step whose context is cancelled.
func TestHostWork_ExecutorTimeoutCoversStep(t *testing.T) {
	for _, c := range []struct {
		name, kind string
		code       func() (string, int)
	}{
		{"erasure", "erase", func() (string, int) {
			code := fmt.Sprintf("// %d\nconst x: number = 1;\nx", time.Now().UnixNano())
			return code, len(code)
		}},
		{"long step scan", "scan", func() (string, int) {
			code := fmt.Sprintf("// %d\n%s1", time.Now().UnixNano(), strings.Repeat("// a long step\n", 5000))
			return code, len(code)
		}},
		{"collation", "collate", func() (string, int) {
			return `const a = "한국어".repeat(30000); a.localeCompare(a + "가", "ko")`, 2 * 64 << 10
		}},
	} {
		for _, cause := range []string{"timeout", "context"} {
			t.Run(c.name+"/"+cause, func(t *testing.T) {
				timed(t, func(timeout time.Duration) bool {
					if cause == "context" {
						timeout = time.Hour
					}
					e, err := airlock.NewExecutor(airlock.ExecutorOptions{Timeout: timeout})
					if err != nil {
						t.Fatal(err)
					}
					defer e.Cleanup(context.Background())
					if err := e.Init(context.Background()); err != nil {
						t.Fatal(err)
					}
					code, size := c.code()
					h := holdWork(t, c.kind, size)
					defer h.release(false)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if cause == "context" {
						go func() { <-h.started; cancel() }()
					}
					_, err = e.Run(ctx, code)
					select {
					case <-h.started:
					default:
						if cause == "context" {
							t.Fatalf("the step ended before its host work started: %v", err)
						}
						return false // the time ran out first: again, with more
					}
					// The step's own goroutine has left the host call too:
					// the sandbox closes while the work is still held. (A
					// step waits at most a second for its VM before it
					// returns its stop: only this tells a VM that waits for
					// the work.)
					if cerr := e.Cleanup(context.Background()); cerr != nil {
						t.Fatal(cerr)
					}
					h.settledFirst(t)
					var xe *airlock.ExecutorError
					if !errors.As(err, &xe) || xe.Code != airlock.CodeExecTimeout {
						t.Fatalf("step: %v, want ERR_EXEC_TIMEOUT", err)
					}
					if cause == "context" && !errors.Is(err, context.Canceled) {
						t.Fatalf("step: %v, want the context's cause", err)
					}
					return true
				})
			})
		}
	}
}

// Abandoned host work does not pile up: stopped again and again while its
// host work is held, runs leave at most hostwork.Capacity bytes of work
// behind (two sources at the size bound); the runs past that wait for
// room, and settle at their stop without starting theirs.
func TestHostWork_AbandonedWorkBounded(t *testing.T) {
	engineStarted(t)
	const size = airlock.MaxSourceBytes
	gate := make(chan struct{})
	started := make(chan struct{}, 64)
	defer hostwork.SetTestHook(func(k string, n int) {
		if k == "load" && n == size {
			started <- struct{}{}
			<-gate
		}
	})()
	safety := time.AfterFunc(blockerSafety, func() { close(gate) })
	const fit = hostwork.Capacity / size
	held := 0
	for i := 0; i < 12; i++ {
		head := fmt.Sprintf("export default %d;\n", i)
		src := head + strings.Repeat("/", size-len(head))
		ex, err := testRuntime().Run(context.Background(), src, airlock.Options{Language: airlock.JavaScript})
		if err != nil {
			t.Fatal(err)
		}
		if held < fit {
			<-started // under way, holding its part of Capacity
			held++
		} else {
			for end := time.Now().Add(blockerSafety); ; time.Sleep(100 * time.Microsecond) {
				if _, _, q := hostwork.InFlight(); q > 0 {
					break // waiting for room
				}
				if time.Now().After(end) {
					t.Fatal("the run's host work neither started nor waited for room")
				}
			}
		}
		ex.Terminate("test")
		wantStatus(t, ex.Wait(), airlock.StatusTerminated)
		if w, b, q := hostwork.InFlight(); w > fit || b > hostwork.Capacity || q != 0 {
			t.Fatalf("after %d stopped runs: %d works, %d bytes, %d waiting", i+1, w, b, q)
		}
	}
	if !safety.Stop() {
		t.Fatal("a run settled only after its host work was released")
	}
	close(gate)
	hostWorkDrained(t)
	if n := len(started); n != 0 {
		t.Fatalf("%d works started after Capacity was full, from runs that had settled", n)
	}
}

// Sources have a size bound, MaxSourceBytes: a larger entry or imported
// module is a link error that names the bound, refused before anything
// reads it (nothing bounded the host's work on a source before); at the
// bound, a source runs.
func TestMaxSourceBytes(t *testing.T) {
	pad := func(head string, n int) string { return head + strings.Repeat(" ", n-len(head)) }
	res := runOpts(t, pad("export default 1;", airlock.MaxSourceBytes+1), airlock.Options{})
	wantStatus(t, res, airlock.StatusLinkError)
	if res.Error.Name != "LinkError" || !strings.Contains(res.Error.Message, "MaxSourceBytes") || !strings.Contains(res.Error.Message, "<runCode>") {
		t.Fatalf("%s: %s", res.Error.Name, res.Error.Message)
	}
	res = runOpts(t, `import v from "./big.js"; export default v;`,
		airlock.Options{Modules: map[string]string{"./big.js": pad("export default 1;", airlock.MaxSourceBytes+1)}})
	wantStatus(t, res, airlock.StatusLinkError)
	if res.Error.Specifier != "./big.js" || !strings.Contains(res.Error.Message, "MaxSourceBytes") {
		t.Fatalf("%s (%s): %s", res.Error.Name, res.Error.Specifier, res.Error.Message)
	}
	wantResult(t, runOpts(t, pad("export default 1;", airlock.MaxSourceBytes), airlock.Options{Language: airlock.JavaScript}), 1.0)
	// A module past the bound that nothing imports is not read.
	wantResult(t, runOpts(t, `export default 2;`,
		airlock.Options{Modules: map[string]string{"./big.js": pad("", airlock.MaxSourceBytes+1)}}), 2.0)
}

// A step past MaxSourceBytes is refused with ERR_VALIDATION_FAILED, rule
// code_size, before anything reads it; ValidateCode says the same.
func TestMaxSourceBytes_Step(t *testing.T) {
	code := "1" + strings.Repeat(" ", airlock.MaxSourceBytes)
	ds := airlock.ValidateCode(code, airlock.ExecutorOptions{})
	if len(ds) != 1 || ds[0].Rule != "code_size" || ds[0].Severity != airlock.DiagnosticError {
		t.Fatalf("diagnostics %+v", ds)
	}
	e, err := airlock.NewExecutor(airlock.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Cleanup(context.Background())
	if err := e.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), code)
	var xe *airlock.ExecutorError
	if !errors.As(err, &xe) || xe.Code != airlock.CodeValidationFailed || !strings.Contains(xe.Message, "MaxSourceBytes") {
		t.Fatalf("step: %v", err)
	}
	if s := e.State(); s != airlock.StateReady {
		t.Fatalf("state %s after a refused step, want READY", s)
	}
}

// ValidateCode has no context: it has the step's time instead, as an
// executor's validation does. The engine's compile of a step grows faster
// than the step (20,000 distinct globals took 2.6 s, 100,000 over a
// minute), and the erasure of its types is held here: a validation used
// to take as long as they did.
func TestHostWork_ValidateCodeHasTheStepsTime(t *testing.T) {
	code := fmt.Sprintf("// %d\nconst x: number = 1;\nx", time.Now().UnixNano())
	timed(t, func(d time.Duration) bool {
		h := holdWork(t, "erase", len(code))
		defer h.release(false)
		ds := airlock.ValidateCode(code, airlock.ExecutorOptions{Timeout: d})
		select {
		case <-h.started:
		default:
			return false // the time ran out before the erasure: again, with more
		}
		h.settledFirst(t)
		if len(ds) != 1 || ds[0].Rule != "syntax_valid" || !strings.Contains(ds[0].Message, "step's time") {
			t.Fatalf("diagnostics %+v", ds)
		}
		return true
	})
	var b strings.Builder
	b.WriteString("(() => {")
	for i := 0; i < 200000; i++ {
		fmt.Fprintf(&b, "g%d;", i)
	}
	b.WriteString("})")
	ds := airlock.ValidateCode(b.String(), airlock.ExecutorOptions{Timeout: 20 * time.Millisecond})
	if len(ds) != 1 || ds[0].Rule != "syntax_valid" || !strings.Contains(ds[0].Message, "step's time") {
		t.Fatalf("diagnostics %+v", ds)
	}
	// Unheld, with its time, the same step validates.
	if ds := airlock.ValidateCode(code, airlock.ExecutorOptions{}); len(ds) != 0 {
		t.Fatalf("diagnostics %+v", ds)
	}
}

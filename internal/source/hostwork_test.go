package source

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/hostwork"
)

// holdWork holds the host work of kind and size under way until the test
// ends or release is called; started is closed once it has started.
func holdWork(t *testing.T, kind string, size int) (started chan struct{}, release func()) {
	t.Helper()
	started, gate := make(chan struct{}), make(chan struct{})
	first := true
	restore := hostwork.SetTestHook(func(k string, n int) {
		if k == kind && n == size && first {
			first = false
			close(started)
			<-gate
		}
	})
	released := false
	release = func() {
		if !released {
			released = true
			restore()
			close(gate)
		}
	}
	t.Cleanup(release)
	return started, release
}

// genericTS is TypeScript of about n bytes that Load must transform (it
// reads as type arguments), different for each seed, so that no cache
// holds it.
func genericTS(seed string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\nfunction id<T>(x: T): T { return x; }\n", seed)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "const v%d: number = id<number>(%d);\n", i, i)
	}
	b.WriteString("export default v0;\n")
	return b.String()
}

// Load and Fallback return at once when the graph's stop closes while
// their transform is under way; the transform is abandoned, and the graph
// records nothing of it.
func TestLoadAbandonedAtStop(t *testing.T) {
	for _, name := range []string{"load", "fallback"} {
		t.Run(name, func(t *testing.T) {
			src := genericTS(t.Name()+time.Now().String(), 2000)
			if name == "fallback" {
				src = "const x: number = 1; // " + t.Name() + time.Now().String() + "\nexport default x;"
			}
			stop := make(chan struct{})
			g := New(Config{Key: "K", Filename: "main.ts", Source: src, Lang: TypeScript, Stop: stop})
			started, release := holdWork(t, "load", len(src))
			type answer struct {
				code string
				err  error
			}
			got := make(chan answer, 1)
			go func() {
				var a answer
				if name == "fallback" {
					if a.code, a.err = g.Load(g.Entry()); a.err != nil {
						got <- a
						return
					}
					a.code, a.err = g.Fallback(g.Entry())
				} else {
					a.code, a.err = g.Load(g.Entry())
				}
				got <- a
			}()
			<-started
			close(stop)
			a := <-got
			if a.err != errStopped || a.code != "" {
				t.Fatalf("stopped: %q, %v; want errStopped", a.code, a.err)
			}
			release()
			if g.entry.transformed || g.Failure != nil {
				t.Fatalf("the abandoned transform was recorded: transformed %v, failure %+v", g.entry.transformed, g.Failure)
			}
		})
	}
}

// A source past MaxBytes is refused before anything reads it: a link
// failure that names it and the bound.
func TestLoadTooLarge(t *testing.T) {
	src := "export default 1;" + strings.Repeat(" ", MaxBytes)
	g := New(Config{Key: "K", Filename: "main.ts", Source: "import x from './big.js'; export default x;", Lang: TypeScript,
		Modules: map[string]string{"./big.js": src}})
	if _, err := g.Load("/big.js"); err == nil {
		t.Fatal("a source past MaxBytes loaded")
	}
	if f := g.Failure; f == nil || f.Specifier != "./big.js" || !strings.Contains(f.Message, "MaxSourceBytes") {
		t.Fatalf("failure %+v", g.Failure)
	}
	// At the bound, it loads.
	g = New(Config{Key: "K", Filename: "main.js", Source: src[:MaxBytes], Lang: JavaScript})
	if _, err := g.Load(g.Entry()); err != nil {
		t.Fatalf("a source of MaxBytes: %v", err)
	}
	if _, _, lf := EraseStep(src); lf == nil || !strings.Contains(lf.Message, "MaxSourceBytes") {
		t.Fatalf("EraseStep of a step past MaxBytes: %+v", lf)
	}
}

// An erasure abandoned at its stop returns Stopped at once; the erasure
// runs on and caches its outcome for the same code's next step.
func TestEraseStepUntilStop(t *testing.T) {
	code := "const x: number = 1; // " + time.Now().String() + "\nx"
	started, release := holdWork(t, "erase", len(code))
	stop := make(chan struct{})
	got := make(chan *LinkFailure, 1)
	go func() { _, _, lf := EraseStepUntil(stop, code, false); got <- lf }()
	<-started
	close(stop)
	if lf := <-got; lf != Stopped {
		t.Fatalf("stopped erasure: %+v, want Stopped", lf)
	}
	release()
	for end := time.Now().Add(30 * time.Second); ; {
		if w, _, _ := hostwork.InFlight(); w == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the abandoned erasure never ended")
		}
		time.Sleep(time.Millisecond)
	}
	if !transforms.has(cacheKey("\x00step", code)) {
		t.Fatal("the abandoned erasure's outcome was not cached")
	}
}

package wasmvm

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

var (
	shared struct {
		e   *Engine
		sn  *Snapshot
		err error
	}
	sharedOnce sync.Once
)

// testSnapshot is one engine and snapshot for the package's tests.
func testSnapshot(t testing.TB) *Snapshot {
	t.Helper()
	sharedOnce.Do(func() {
		ctx := context.Background()
		shared.e, shared.err = NewEngine(ctx, &EngineOptions{CacheDir: os.Getenv("AIRLOCK_TEST_CACHE")})
		if shared.err == nil {
			shared.sn, shared.err = shared.e.NewSnapshot(ctx, nil)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.sn
}

// testEngine is the engine of testSnapshot, for tests that make
// snapshots of their own.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	testSnapshot(t)
	return shared.e
}

func newSandbox(t testing.TB, opts *SandboxOptions) *Sandbox {
	t.Helper()
	s, err := testSnapshot(t).NewSandbox(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// evalJSON evaluates a script and returns its value as JSON.
func evalJSON(t testing.TB, s *Sandbox, src string) string {
	t.Helper()
	r, err := s.Eval(context.Background(), src, "test.js", Script)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if r.Value.Kind == Undefined {
		return "undefined"
	}
	return r.Value.Text
}

func TestEvalScript(t *testing.T) {
	s := newSandbox(t, nil)
	for _, c := range []struct{ src, want string }{
		{"1+2", "3"},
		{"'a'+'b'", `"ab"`},
		{"({a:[1,{b:null}]})", `{"a":[1,{"b":null}]}`},
		{"undefined", "undefined"},
		{"var x = 40; x + 2", "42"},
		{"x", "40"}, // a script's globals stay for the next script
		{"Promise.resolve(7).then(v => v * 6)", "42"},
		{"(async () => { await null; return 'later' })()", `"later"`},
	} {
		if got := evalJSON(t, s, c.src); got != c.want {
			t.Errorf("%s = %s, want %s", c.src, got, c.want)
		}
	}
}

func TestEvalException(t *testing.T) {
	s := newSandbox(t, nil)
	for _, c := range []struct{ src, want string }{
		{"throw new TypeError('boom')", "TypeError: boom"},
		{"throw 'text'", "text"},
		{"(", "SyntaxError"},
		{"Promise.reject(new RangeError('no'))", "RangeError: no"},
	} {
		_, err := s.Eval(context.Background(), c.src, "x.js", Script)
		var ex *Exception
		if !errors.As(err, &ex) || !strings.Contains(ex.Text, c.want) {
			t.Errorf("%s: err %v, want an Exception with %q", c.src, err, c.want)
		}
	}
	// an exception does not spend the sandbox
	if got := evalJSON(t, s, "1"); got != "1" {
		t.Errorf("after exceptions: %s", got)
	}
}

func TestEvalModule(t *testing.T) {
	s := newSandbox(t, nil)
	ctx := context.Background()
	r, err := s.Eval(ctx, "export const a = 1; globalThis.seen = await Promise.resolve(import.meta !== undefined);", "m.js", Module)
	if err != nil || r.Value.Kind != Undefined || r.Pending {
		t.Fatalf("module: %+v %v", r, err)
	}
	if got := evalJSON(t, s, "seen"); got != "true" {
		t.Errorf("seen = %s", got)
	}
	_, err = s.Eval(ctx, "await null; throw new Error('in module')", "m2.js", Module)
	var ex *Exception
	if !errors.As(err, &ex) || !strings.Contains(ex.Text, "in module") {
		t.Errorf("module throw: %v", err)
	}
}

// TestPendingAndJobs: a promise that waits on the host stays pending after
// the queue ran dry; RunJobs settles what was queued later.
func TestPendingAndJobs(t *testing.T) {
	s := newSandbox(t, nil)
	ctx := context.Background()
	r, err := s.Eval(ctx, "globalThis.p = new Promise(r => { globalThis.resolve = r }); p", "p.js", Script)
	if err != nil || !r.Pending {
		t.Fatalf("pending: %+v %v", r, err)
	}
	evalJSON(t, s, "p.then(v => { globalThis.got = v }); resolve(5); undefined")
	if got := evalJSON(t, s, "got"); got != "5" {
		t.Errorf("got = %s", got)
	}
	evalJSON(t, s, "queueMicrotask(() => { globalThis.mt = 'ran' }); undefined")
	if err := s.RunJobs(ctx); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, "mt"); got != `"ran"` {
		t.Errorf("mt = %s", got)
	}
}

// TestModuleImports: static and dynamic imports are supplied by the
// ModuleLoader, relative names resolved against the importer; without a
// loader, or for a name it refuses, the import throws.
func TestModuleImports(t *testing.T) {
	s := newSandbox(t, nil)
	ctx := context.Background()
	_, err := s.Eval(ctx, "import {x} from './lib.js'", "main.js", Module)
	var ex *Exception
	if !errors.As(err, &ex) || !strings.Contains(ex.Text, "no modules can be imported") {
		t.Fatalf("without a loader: %v", err)
	}
	var asked []string
	s.SetModuleLoader(func(_ context.Context, name string) (string, error) {
		asked = append(asked, name)
		switch name {
		case "dir/lib.js":
			return "export const x = 20; export {y} from './y.js'", nil
		case "dir/y.js":
			return "export const y = 22", nil
		case "dyn":
			return "export default 'dynamic'", nil
		}
		return "", errors.New("not found")
	})
	if _, err := s.Eval(ctx, "import {x, y} from './lib.js'; globalThis.sum = x + y; globalThis.d = (await import('dyn')).default", "dir/main.js", Module); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, "[sum, d]"); got != `[42,"dynamic"]` {
		t.Errorf("got %s", got)
	}
	if strings.Join(asked, " ") != "dir/lib.js dir/y.js dyn" {
		t.Errorf("loader asked for %q", asked)
	}
	_, err = s.Eval(ctx, "await import('https://example.com/x.js')", "m2.js", Module)
	if !errors.As(err, &ex) || !strings.Contains(ex.Text, "not found") {
		t.Errorf("refused import: %v", err)
	}
}

// normalizeName follows QuickJS's js_default_module_normalize_name, also
// where a "../" meets a directory named "." or "..".
func TestNormalizeName(t *testing.T) {
	for _, c := range [][3]string{
		{"a/b.js", "./c.js", "a/c.js"},
		{"a/b/c.js", "../d.js", "a/d.js"},
		{"a/b.js", "../../d.js", "../d.js"},
		{"main.js", "./x.js", "x.js"},
		{"main.js", "lib", "lib"},
		{"/a/b.js", "../c.js", "c.js"},
		{"../a.js", "../b.js", "../../b.js"},
		{"./x/a.js", "../../c.js", "./../c.js"},
	} {
		if got := normalizeName(c[0], c[1]); got != c[2] {
			t.Errorf("normalizeName(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

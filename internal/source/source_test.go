package source

import (
	"strings"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"
)

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"./a.js": "a.js", "a/b/../c.ts": "a/c.ts", "./lib//x.js": "lib/x.js", "<runCode>": "<runCode>",
	} {
		if got, ok := Clean(in); !ok || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"../a.js", "./a/../../b.js", "", "./", "."} {
		if got, ok := Clean(in); ok {
			t.Errorf("Clean(%q) = %q, want failure", in, got)
		}
	}
}

func newGraph() *Graph {
	return New(Config{
		Key: "K", Filename: "src/main.ts", Source: "export default 1", Lang: TypeScript,
		Modules: map[string]string{"./src/util.ts": "", "./lib/a.js": "", "./lib/index.js": ""},
		Imports: map[string][]string{"fs": {"readFile"}}, Order: []string{"fs"},
	})
}

func TestResolve(t *testing.T) {
	g := newGraph()
	for _, c := range []struct{ base, spec, want string }{
		{"/src/main.ts", "./util.ts", "/src/util.ts"},
		{"/src/main.ts", "./util.js", "/src/util.ts"},
		{"/src/main.ts", "./util", "/src/util.ts"},
		{"/src/main.ts", "../lib/a.js", "/lib/a.js"},
		{"/src/main.ts", "../lib", "/lib/index.js"},
		{"/src/main.ts", "fs", "airlock:import:K:0"},
		{"<eval>", "/src/main.ts", "/src/main.ts"},
	} {
		if got, err := g.Resolve(c.base, c.spec); err != nil || got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", c.base, c.spec, got, err, c.want)
		}
	}
	for _, spec := range []string{"../../x.js", "./nope.js", "lodash", "node:fs", "https://x/y.js", "/src/main.ts", "airlock:globals:other"} {
		g := newGraph()
		if got, err := g.Resolve("/src/main.ts", spec); err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", spec, got)
		} else if g.Failure == nil || g.Failure.Specifier != spec {
			t.Errorf("Resolve(%q): failure %+v", spec, g.Failure)
		}
	}
}

func TestPrologueKeepsLines(t *testing.T) {
	g := New(Config{Key: "K", Filename: "a.js", Source: "const x = input;\nexport default x;", Lang: JavaScript, Globals: []string{"input", "helper"}})
	code, err := g.Load("/a.js")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(code, "\n") != 1 || !strings.Contains(code, "import {input,helper} from") {
		t.Fatalf("loaded:\n%s", code)
	}
	if d, l, c, ok := g.Position("/a.js", 1, len(code[:strings.Index(code, "const")])+1); !ok || d != "a.js" || l != 1 || c != 1 {
		t.Fatalf("position = %s:%d:%d %v", d, l, c, ok)
	}
}

// TestHashbangBehindPrologue: a #! line, which the grammar allows at the
// start of a module only, was left behind the prologue and refused; it is
// the // comment it means, of the same length, so that positions on line 1
// do not move.
func TestHashbangBehindPrologue(t *testing.T) {
	g := New(Config{Key: "K", Filename: "a.js", Source: "#!/usr/bin/env node\nexport default input;", Lang: JavaScript,
		Globals: []string{"input"}, Modules: map[string]string{"./b.ts": "#!x\nexport const b: number = 1;"}})
	for _, name := range []string{"/a.js", "/b.ts"} {
		code, err := g.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(code, "#!") || !strings.Contains(code, `";//`) {
			t.Errorf("%s loaded:\n%s", name, code)
		}
	}
}

// TestLoadJSON: the engine asks for a JSON module's text behind
// JSONPrefix, and gets the file's bytes: no prologue, no transform.
func TestLoadJSON(t *testing.T) {
	text := "{\"a\": [1, 2]}\n"
	g := New(Config{Key: "K", Filename: "a.js", Source: "export default 1", Lang: JavaScript, Globals: []string{"input"},
		Modules: map[string]string{"./d.json": text, "./c.ts": text}})
	for _, name := range []string{"/d.json", "/c.ts"} {
		if code, err := g.Load(JSONPrefix + name); err != nil || code != text {
			t.Errorf("Load(%q) = %q, %v; want the text as it is", JSONPrefix+name, code, err)
		}
	}
	if _, err := g.Load(JSONPrefix + "/none.json"); err == nil || g.Failure == nil {
		t.Errorf("a missing JSON module: %v, failure %v", err, g.Failure)
	}
}

// TestBareEntry: an entry whose text holds no import, no from, no \u and
// no global's name gets no prologue; any of them in it, even in a comment
// or a string, keeps the prologue.
func TestBareEntry(t *testing.T) {
	for src, want := range map[string]bool{
		`export default "hello, world"`:              true,
		"const x = 1;\nexport default x * 2;":        true,
		`export default input`:                       false,
		`export default 1 // helper`:                 false,
		`import "./a.js"; export default 1`:          false,
		`export default await import("./a.js")`:      false,
		`export * from "./a.js"`:                     false,
		`export { a } from "./a.js"`:                 false,
		`export default "imported from somewhere"`:   false,
		`export default [1, 2].map((v) => v * 2)[0]`: true,
		`export default \u0069nput`:                  false,
		`export default \u{68}elper`:                 false,
	} {
		g := New(Config{Key: "K", Filename: "a.js", Source: src, Lang: JavaScript, Globals: []string{"input", "helper"}})
		if g.Bare() != want {
			t.Errorf("Bare(%q) = %v, want %v", src, g.Bare(), want)
		}
		code, err := g.Load("/a.js")
		if err != nil {
			t.Fatal(err)
		}
		if prologue := code != src; prologue == want {
			t.Errorf("%q loaded as %q", src, code)
		}
	}
}

func TestDeclaredFunctionNotImported(t *testing.T) {
	for src, want := range map[string]bool{
		"function helper() {}":       true,
		"async function* helper(){}": true,
		"helper()":                   false,
		"function helperX() {}":      false,
	} {
		if got := declaresFunction(src, "helper"); got != want {
			t.Errorf("declaresFunction(%q) = %v", src, got)
		}
	}
}

func TestPlainJS(t *testing.T) {
	for src, want := range map[string]bool{
		"for (let i = 0; i < n; i++) {}": true,
		"a<b":                            true,
		"f<T>(x)":                        false,
		"new Map<string, number>()":      false,
		"i<n,j<m":                        false, // read as TypeScript: slower, never wrong
	} {
		if got := plainJS(src); got != want {
			t.Errorf("plainJS(%q) = %v", src, got)
		}
	}
}

func TestMapStack(t *testing.T) {
	g := New(Config{Key: "K", Filename: "a.js", Source: "x", Lang: JavaScript})
	g.Load("/a.js")
	stack := "    at f (/a.js:3:5)\n    at <anonymous> (<eval>:1:10)\n    at map (native)\n    at apply (native)\n    at <anonymous>\n    at airlock:import:K:0:1:2\n"
	got, top := g.MapStack(stack)
	if got != "    at f (a.js:3:5)\n    at map (native)" || top == nil || top.Line != 3 {
		t.Fatalf("MapStack = %q, %+v", got, top)
	}
}

func TestTransformErrorPosition(t *testing.T) {
	g := New(Config{Key: "K", Filename: "x.ts", Source: "let a: number = 1;\nlet b: = 2;", Lang: TypeScript})
	// Nothing in it reads differently as JavaScript, so it is tried as it
	// is; the engine, failing to parse it, asks for the fallback.
	if src, err := g.Load("/x.ts"); err != nil || !strings.HasSuffix(src, "let b: = 2;") {
		t.Fatalf("Load = %q, %v", src, err)
	}
	if _, err := g.Fallback("/x.ts"); err == nil {
		t.Fatal("no error")
	}
	if f := g.Failure; f == nil || f.Line != 2 || f.Display != "x.ts" {
		t.Fatalf("failure %+v", g.Failure)
	}
}

// A module whose imports the engine resolved has parsed: what failed is an
// import, and the fallback, whose transform could drop it, is not offered.
// A module with text that TypeScript reads differently is transformed at once.
func TestFallback(t *testing.T) {
	g := New(Config{Key: "K", Filename: "x.ts", Source: "import x from 'lodash'; export default 1", Lang: TypeScript})
	g.Load("/x.ts")
	g.Resolve("/x.ts", "lodash")
	if src, err := g.Fallback("/x.ts"); src != "" || err != nil {
		t.Fatalf("Fallback = %q, %v", src, err)
	}
	g = New(Config{Key: "K", Filename: "x.ts", Source: "const n: number = 1; export default n", Lang: TypeScript})
	g.Load("/x.ts")
	if src, err := g.Fallback("/x.ts"); err != nil || strings.Contains(src, "number") {
		t.Fatalf("Fallback = %q, %v", src, err)
	}
	if src, _ := g.Fallback("/x.ts"); src != "" {
		t.Fatalf("a second Fallback = %q", src)
	}
	g = New(Config{Key: "K", Filename: "x.ts", Source: "export default f<number>(1)", Lang: TypeScript})
	if src, err := g.Load("/x.ts"); err != nil || strings.Contains(src, "<number>") {
		t.Fatalf("Load = %q, %v", src, err)
	}
}

// TestTransformInvalidUTF8 is the story of a hang the fuzzer found: esbuild
// v0.28.2, asked for a source map with the source's content, loops forever
// quoting a string literal of invalid UTF-8 into it. The transform runs on the
// sandbox's goroutine, where no terminate reaches, so the run never settled.
func TestTransformInvalidUTF8(t *testing.T) {
	src := "\"\xca\xfa0\xa9\x89\x92\xea\xe5\xd10\xbf\xd60\xa3\xda0\x8e\xe2\xf4\""
	done := make(chan struct{})
	go func() {
		defer close(done)
		g := New(Config{Key: "K", Filename: "x.ts", Source: "export default " + src + " as string", Lang: TypeScript})
		if _, err := g.Load("/x.ts"); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the transform did not return")
	}
}

// Pretransform transforms the entry on a goroutine of its own; the Load of
// a run's graph then finds it done, or waits for it, and gives what it
// gives without it. A source that nests too deep for esbuild is left
// alone.
func TestPretransform(t *testing.T) {
	const name = "pre.ts"
	src := "type N<T> = T | number; const n: N<string> = 41; export default n + \"" + time.Now().Format("150405.000000000") + "\""
	key := cacheKey(name, src)
	Pretransform(name, src)
	// The flight is registered before Pretransform returns, and the cache
	// filled before the flight lands.
	if done, mine := transforms.fly(key); mine {
		transforms.land(key)
		if _, ok := transforms.get(key); !ok {
			t.Fatal("no transform under way or done after Pretransform")
		}
	} else {
		<-done
	}
	g := New(Config{Key: "K", Filename: name, Source: src, Lang: TypeScript})
	got, err := g.Load(g.Entry())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := transforms.get(key); !ok {
		t.Fatal("the transform is not in the cache")
	}
	out, _, m := esbuildTS(src, name, api.FormatESModule, false)
	if m != nil || !strings.HasSuffix(got, out) {
		t.Errorf("Load gave %q, the transform alone %q (%v)", got, out, m)
	}

	deep := "const x: number = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	Pretransform(name, deep)
	k := cacheKey(name, deep)
	if _, mine := transforms.fly(k); !mine {
		t.Error("a transform was started for a source nested too deep")
	} else {
		transforms.land(k)
	}
}

// Transforms of one source at once do it once: the others wait for it.
func TestTransformOnce(t *testing.T) {
	src := "const s: string = 'x'; export default s + " + time.Now().Format("150405.000000000")
	f := &File{Display: "once.ts", Source: src}
	key := cacheKey(f.Display, src)
	done, mine := transforms.fly(key) // a transform under way
	if !mine {
		t.Fatal("a flight already")
	}
	got := make(chan string)
	for range 4 {
		go func() { code, _, _ := transform(f); got <- code }()
	}
	select {
	case c := <-got:
		t.Fatalf("a transform returned while another was under way: %q", c)
	case <-time.After(50 * time.Millisecond):
	}
	transforms.add(key, transformed{code: "done"})
	transforms.land(key)
	<-done
	for range 4 {
		if c := <-got; c != "done" {
			t.Errorf("got %q, want the result of the transform under way", c)
		}
	}
}

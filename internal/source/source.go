// Package source turns the caller's sources into the modules the engine
// loads: it resolves specifiers within the supplied module graph only, erases
// TypeScript types (the only importer of esbuild), adds to each source module
// the one-line prologue that binds the run's globals at module scope (but to
// a bare entry, which can use none: see Graph.Bare; a #! line becomes the
// comment it is), gives a JSON module's text as it is (JSONPrefix), and
// maps engine positions back to the user's original source.
package source

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/airlockrun/airlock/internal/hostwork"
	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"
)

// Language is the language of a source module.
type Language int

const (
	TypeScript Language = iota
	JavaScript
)

// File is a source module of the graph.
type File struct {
	Name      string // module name in the engine: "/" + path from the graph root
	Display   string // the name users see: the Filename option, or the path
	Specifier string // how the caller named it: the Filename, or the modules key
	Source    string
	Lang      Language

	shift       int                 // prologue length on line 1
	smap        *sourcemap.Consumer // generated → original, for TypeScript
	transformed bool                // the engine runs the TypeScript transform's output
	parsed      bool                // the engine parsed what Load last gave
}

// Graph is the module graph of one run.
type Graph struct {
	key      string
	entry    *File
	files    map[string]*File
	imports  map[string][]string // bridged specifier → export names, in order
	order    []string            // bridged specifiers, in payload order
	index    map[string]int      // bridged specifier → index in order
	globals  []string
	yielding []string

	globalsModule, importsExport string // see Config
	glue                         map[string]string
	glueGroups                   [][]string // the names of each glue, sorted; by their first name

	stop <-chan struct{} // see Config

	// bare is set when the entry module can reach nothing the globals
	// module gives (see Bare).
	bare bool

	// Failure is set when resolving or loading a module failed: why, and
	// where, for a link error.
	Failure *LinkFailure
}

// LinkFailure describes why the module graph could not be loaded.
type LinkFailure struct {
	Specifier string
	Message   string
	Display   string // the file with the syntax error, if one
	Line, Col int
}

// Config describes a run's sources.
type Config struct {
	Key      string // the VM's secret key
	Filename string
	Source   string
	Lang     Language
	Modules  map[string]string
	Imports  map[string][]string // specifier → export names, sorted
	Order    []string            // bridged specifiers, in payload order
	Globals  []string            // global names, in payload order
	// Yielding are globals (of Globals) a module's own binding of the same
	// name replaces: the prologue leaves one out of a module that declares
	// or imports the name (found by a scan of the text, see bindsName).
	Yielding []string
	// Glue maps globals (of Globals) to JavaScript that makes them: a
	// function expression called with the global's value as the host gave
	// it, which returns an object holding the names (fetch: a host
	// function that answers with plain values, made into one that gives
	// Responses). Globals with the same glue are made together, by one
	// call with the value of the first of them (in sorted order), in a
	// module of their own that runs before the modules that use them
	// (setTimeout, clearTimeout, ... made from setTimeout's value).
	Glue map[string]string

	// GlobalsModule is the name of the engine's native module that exports
	// the globals, and ImportsExport its export of the bridged modules.
	GlobalsModule, ImportsExport string

	// Stop, when it closes, abandons the work Load and Fallback do for
	// the engine (see hostwork): they return at once, with an error.
	Stop <-chan struct{}
}

// MaxBytes bounds the size of one source: a run's entry, each of its
// modules, an executor step. 4 MiB holds any program a model writes (a
// model's longest answer, ~128k tokens, is ~0.5 MB; steps are a few KB)
// and the bundled libraries one puts in a run's modules (lodash,
// unminified, is 0.54 MB, three.js 1.2 MB, echarts 3.3 MB), and bounds
// what one source costs the host: esbuild erases TypeScript at ~2–4 MB/s
// on the machine measured and takes ~80 bytes of memory per byte
// (RATIONALE.md, "Stops land in host work"), so a transform, abandoned or
// not, ends within a few seconds and ~330 MB.
const MaxBytes = 4 << 20

// InlineBytes is the most source the module loader scans on the VM's
// goroutine, out of reach of a stop (nesting.Check, the scans for the
// prologue, the test for plain JavaScript): about 1 ms at the slowest rate
// measured (nesting.Check, ~50 MB/s). A larger source is scanned through
// hostwork, as every transform is.
const InlineBytes = 64 << 10

// TooLarge is the message of a source past MaxBytes, named name.
func TooLarge(name string, size int) string {
	return fmt.Sprintf("%s is %d bytes, past the bound of %d bytes for one source (airlock.MaxSourceBytes)", name, size, MaxBytes)
}

// errStopped is what Load and Fallback return once the run is stopped.
var errStopped = errors.New("the run was stopped")

// New builds the graph. Module keys must already be validated.
func New(c Config) *Graph {
	g := &Graph{
		key:           c.Key,
		globalsModule: c.GlobalsModule,
		importsExport: c.ImportsExport,
		files:         make(map[string]*File, 1+len(c.Modules)),
		imports:       c.Imports,
		order:         c.Order,
		index:         make(map[string]int, len(c.Order)),
		globals:       c.Globals,
		yielding:      c.Yielding,
		glue:          c.Glue,
		stop:          c.Stop,
	}
	bySource := map[string]int{} // glue → its group
	for _, name := range slices.Sorted(maps.Keys(c.Glue)) {
		if i, ok := bySource[c.Glue[name]]; ok {
			g.glueGroups[i] = append(g.glueGroups[i], name)
		} else {
			bySource[c.Glue[name]] = len(g.glueGroups)
			g.glueGroups = append(g.glueGroups, []string{name})
		}
	}
	for i, s := range c.Order {
		g.index[s] = i
	}
	g.bare = bare(c.Source, c.Globals)
	entryPath, _ := Clean(c.Filename)
	g.entry = &File{Name: "/" + entryPath, Display: c.Filename, Specifier: c.Filename, Source: c.Source, Lang: c.Lang}
	g.files[g.entry.Name] = g.entry
	for k, src := range c.Modules {
		p, _ := Clean(k)
		display, lang := p, langOf(p, c.Lang)
		if !IsRelative(k) { // a package, imported by its name
			display, lang = k, langOf(p, JavaScript)
			p = packageDir + p
		}
		f := &File{Name: "/" + p, Display: display, Specifier: k, Source: src, Lang: lang}
		if _, dup := g.files[f.Name]; !dup {
			g.files[f.Name] = f
		}
	}
	return g
}

// Bare reports whether the run's entry module is bare: its text holds no
// "import" and no "from", so that it loads no other module, statically
// (import, export … from) or dynamically (import()), no `\u`, so that no
// identifier is spelt with an escape (\u0063onsole is console), and the
// name of no global, so that none of the globals module's bindings could
// be used.
// It is a scan of the text, not a parse, and errs towards no; a source
// longer than InlineBytes is not scanned, and not bare. A bare
// module gets no prologue: it does not import the globals module, the
// run needs no globals decoded, and the engine skips the work of a
// second module. Since no other module can load, the whole graph is the
// entry alone.
func (g *Graph) Bare() bool { return g.bare }

func bare(src string, globals []string) bool {
	if len(src) > InlineBytes {
		// Not scanned: a scan for each global's name, on the VM's
		// goroutine before the run, would hold a stop for a long source
		// (Load refuses one past MaxBytes anyway).
		return false
	}
	if strings.Contains(src, "import") || strings.Contains(src, "from") || strings.Contains(src, `\u`) {
		return false
	}
	for _, name := range globals {
		if strings.Contains(src, name) {
			return false
		}
	}
	return true
}

// Entry is the entry module's name.
func (g *Graph) Entry() string { return g.entry.Name }

func langOf(p string, def Language) Language {
	switch path.Ext(p) {
	case ".ts", ".mts", ".cts", ".tsx":
		return TypeScript
	case ".js", ".mjs", ".cjs", ".jsx":
		return JavaScript
	}
	return def
}

// Clean turns a file name or a module key into a path from the graph root.
// It reports false for a path that leaves the root.
func Clean(name string) (string, bool) {
	name = strings.TrimPrefix(name, "./")
	depth := 0
	var parts []string
	for _, p := range strings.Split(name, "/") {
		switch p {
		case "", ".":
		case "..":
			if depth == 0 {
				return "", false
			}
			depth--
			parts = parts[:len(parts)-1]
		default:
			depth++
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/"), len(parts) > 0
}

// packageDir is where the graph keeps the source modules supplied under a
// package name.
const packageDir = "node_modules/"

// IsRelative reports whether a specifier is relative: ./ or ../.
func IsRelative(spec string) bool {
	return strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../")
}

func (g *Graph) globalsName() string { return g.globalsModule }

// glueName is the module that makes the glue whose first name is name
// (Config.Glue).
func (g *Graph) glueName(name string) string { return "airlock:glue:" + g.key + ":" + name }
func (g *Graph) importName(i int) string {
	return "airlock:import:" + g.key + ":" + strconv.Itoa(i)
}

// Resolve maps a specifier imported by module base to a module name.
func (g *Graph) Resolve(base, spec string) (string, error) {
	if f, ok := g.files[base]; ok {
		// The engine resolves a module's imports once it has parsed it.
		f.parsed = true
	}
	if strings.HasPrefix(spec, "airlock:") && strings.Contains(spec, g.key) {
		return spec, nil
	}
	if spec == g.entry.Name && !strings.HasPrefix(base, "/") {
		return spec, nil // the kernel's import of the entry
	}
	if IsRelative(spec) && strings.HasPrefix(base, "/") {
		dir := path.Dir(strings.TrimPrefix(base, "/"))
		joined := spec
		if dir != "." {
			joined = dir + "/" + spec
		}
		if p, ok := Clean(joined); ok {
			for _, cand := range candidates(p) {
				if _, found := g.files["/"+cand]; found {
					return "/" + cand, nil
				}
			}
		}
		return "", g.fail(spec, fmt.Sprintf("cannot find module '%s': it is not in the supplied modules", spec))
	}
	if _, ok := g.files["/"+packageDir+spec]; ok && !IsRelative(spec) {
		return "/" + packageDir + spec, nil
	}
	if i, ok := g.index[spec]; ok {
		return g.importName(i), nil
	}
	switch {
	case strings.Contains(spec, "://") || strings.HasPrefix(spec, "data:"):
		return "", g.fail(spec, fmt.Sprintf("cannot import '%s': URL imports are not allowed in the sandbox", spec))
	case strings.HasPrefix(spec, "node:"):
		return "", g.fail(spec, fmt.Sprintf("cannot import '%s': there are no host modules in the sandbox", spec))
	}
	return "", g.fail(spec, fmt.Sprintf("cannot find module '%s': only the bridged imports and supplied modules can be imported", spec))
}

// candidates lists the paths tried for a relative import: the path itself,
// then TypeScript's habit of naming a .ts file with .js, then added extensions.
func candidates(p string) []string {
	out := []string{p}
	if strings.HasSuffix(p, ".js") {
		out = append(out, strings.TrimSuffix(p, ".js")+".ts")
	}
	if path.Ext(p) == "" {
		for _, ext := range []string{".ts", ".js", ".mjs", "/index.ts", "/index.js"} {
			out = append(out, p+ext)
		}
	}
	return out
}

func (g *Graph) fail(spec, msg string) error {
	if g.Failure == nil {
		g.Failure = &LinkFailure{Specifier: spec, Message: msg}
	}
	return errors.New(msg)
}

// JSONPrefix before a module's name is how the engine asks Load for the
// text of a JSON module (an import with { type: "json" }, or of a name
// that ends in .json; internal/qjs/shim/module.c): the source as it is.
const JSONPrefix = "json:"

// Load returns the source of a module as the engine must see it.
func (g *Graph) Load(name string) (string, error) {
	if first, ok := strings.CutPrefix(name, g.glueName("")); ok {
		i := slices.IndexFunc(g.glueGroups, func(names []string) bool { return names[0] == first })
		if i < 0 {
			return "", g.fail(name, fmt.Sprintf("cannot find module '%s'", name))
		}
		names := g.glueGroups[i]
		var b strings.Builder
		fmt.Fprintf(&b, "import {%q as raw} from %q; const made = (%s)(raw);", first, g.globalsName(), g.glue[first])
		for i, n := range names {
			fmt.Fprintf(&b, " const v%d = made[%q]; export {v%d as %q};", i, n, i, n)
		}
		return b.String(), nil
	}
	switch {
	case strings.HasPrefix(name, "airlock:import:"+g.key+":"):
		i, err := strconv.Atoi(name[strings.LastIndexByte(name, ':')+1:])
		if err != nil || i < 0 || i >= len(g.order) {
			return "", g.fail(name, fmt.Sprintf("cannot find module '%s'", name))
		}
		spec := g.order[i]
		var b strings.Builder
		fmt.Fprintf(&b, "import {%q as I} from %q; const m = I[%d];", g.importsExport, g.globalsName(), i)
		names := g.imports[spec]
		for j, n := range names {
			fmt.Fprintf(&b, " const v%d = m[%s];", j, strconv.Quote(n))
		}
		if len(names) > 0 {
			b.WriteString(" export {")
			for j, n := range names {
				if j > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, " v%d as %s", j, strconv.Quote(n))
			}
			b.WriteString(" };")
		}
		return b.String(), nil
	}
	if file, ok := strings.CutPrefix(name, JSONPrefix); ok {
		// A JSON module: its text as it is, which the engine parses as
		// JSON (no prologue, no transform).
		f, ok := g.files[file]
		if !ok {
			return "", g.fail(file, fmt.Sprintf("cannot find module '%s'", file))
		}
		if len(f.Source) > MaxBytes {
			return "", g.fail(f.Specifier, TooLarge(fmt.Sprintf("the module '%s'", f.Specifier), len(f.Source)))
		}
		return f.Source, nil
	}
	f, ok := g.files[name]
	if !ok {
		return "", g.fail(name, fmt.Sprintf("cannot find module '%s'", name))
	}
	f.parsed = false
	if len(f.Source) > MaxBytes {
		return "", g.fail(f.Specifier, TooLarge(fmt.Sprintf("the module '%s'", f.Specifier), len(f.Source)))
	}
	// The scans and the transform run through hostwork when they may take
	// long, so that a stop of the run does not wait for them: a small
	// source whose transform, if it needs one, is cached is loaded here.
	if len(f.Source) <= InlineBytes {
		ts := f.Lang == TypeScript && !plainJS(f.Source)
		if !ts || transforms.has(cacheKey(f.Display, f.Source)) {
			return g.apply(f, g.load(f, ts))
		}
	}
	var l loaded
	if !hostwork.Do(g.stop, "load", len(f.Source), func() {
		l = g.load(f, f.Lang == TypeScript && !plainJS(f.Source))
	}) {
		return "", errStopped
	}
	return g.apply(f, l)
}

// loaded is what Load or Fallback gives the engine for a module, made by
// load or fallback, which may run off the VM's goroutine: they read the
// graph's settings and the file's source only, never write either, and
// apply, on the VM's goroutine, records the outcome.
type loaded struct {
	code        string // the module's text, its prologue first
	shift       int    // the prologue's length
	smap        *sourcemap.Consumer
	transformed bool // code is the TypeScript transform's
	nest        *nesting.Error
	fail        *LinkFailure
	js          bool // Fallback: the transform fails where JavaScript fails
}

// load prepares source module f; ts: its TypeScript must be transformed.
// TypeScript that may be plain JavaScript is tried as it is: if it does
// not compile, the engine asks for Fallback.
func (g *Graph) load(f *File, ts bool) loaded {
	// esbuild recurses on the Go stack: a program that nests deeper than
	// any real one is refused before it sees it (and before the engine
	// does, for the same answer in both languages).
	if e := nesting.Check(f.Source); e != nil {
		return loaded{nest: e}
	}
	if !ts {
		return g.prologued(f, f.Source, nil, false)
	}
	out, smap, lf := transform(f)
	if lf != nil {
		return loaded{fail: lf}
	}
	return g.prologued(f, out, smap, true)
}

// apply records on the graph what load or fallback made of f, and gives
// the engine its text.
func (g *Graph) apply(f *File, l loaded) (string, error) {
	switch {
	case l.nest != nil:
		if g.Failure == nil {
			g.Failure = &LinkFailure{Specifier: f.Specifier, Message: l.nest.Error(), Display: f.Display, Line: l.nest.Line, Col: l.nest.Column}
		}
		return "", l.nest
	case l.fail != nil:
		if g.Failure == nil {
			g.Failure = l.fail
		}
		return "", errors.New(l.fail.Message)
	}
	f.shift = l.shift
	if l.transformed {
		f.smap, f.transformed = l.smap, true
	}
	return l.code, nil
}

// Fallback gives the source to compile instead of what Load gave for
// module name, when that did not compile: the TypeScript transform of a
// module tried as plain JavaScript. It returns "" when there is none, and
// when the module did parse: then what failed is one of its imports, which
// the transform could drop (an import used only as a type) where plain
// JavaScript keeps it. Every source module imports the globals module in
// its prologue, so a module that parsed has had an import resolved.
//
// It also returns "" when the transform fails where JavaScript fails too
// (esbuild, reading the source as JavaScript, stops at the same place with
// the same message): the error is one of JavaScript, and the engine's own
// message for it stands, which is worded as Node's.
func (g *Graph) Fallback(name string) (string, error) {
	f, ok := g.files[name]
	if !ok || f.Lang != TypeScript || f.transformed || f.parsed {
		return "", nil
	}
	var l loaded
	if len(f.Source) <= InlineBytes && transforms.has(cacheKey(f.Display, f.Source)) {
		l = g.fallback(f)
	} else if !hostwork.Do(g.stop, "load", len(f.Source), func() { l = g.fallback(f) }) {
		return "", errStopped
	}
	if l.js {
		return "", nil
	}
	return g.apply(f, l)
}

// fallback is the transform of f for Fallback.
func (g *Graph) fallback(f *File) loaded {
	out, smap, lf := transform(f)
	if lf != nil {
		return loaded{fail: lf, js: failsAsJS(f, lf)}
	}
	return g.prologued(f, out, smap, true)
}

// failsAsJS reports whether esbuild, reading f as JavaScript, fails with
// the same message at the same place as the TypeScript transform did (lf).
func failsAsJS(f *File, lf *LinkFailure) bool {
	r := api.Transform(strings.ToValidUTF8(f.Source, "\uFFFD"), api.TransformOptions{
		Loader:   api.LoaderJS,
		Format:   api.FormatESModule,
		Target:   api.ESNext,
		LogLevel: api.LogLevelSilent,
	})
	if len(r.Errors) == 0 {
		return false
	}
	m := r.Errors[0]
	return m.Text == lf.Message && m.Location != nil &&
		m.Location.Line == lf.Line && m.Location.Column+1 == lf.Col
}

// ParsesAsJS reports whether esbuild reads code as JavaScript, a module or
// a script, without an error. esbuild stops at its first syntax error, and
// nesting.Check bounds what it reads before that; code that Check refuses
// is not JavaScript here.
func ParsesAsJS(code string) bool {
	if nesting.Check(code) != nil {
		return false
	}
	r := api.Transform(strings.ToValidUTF8(code, "\uFFFD"), api.TransformOptions{
		Loader:   api.LoaderJS,
		LogLevel: api.LogLevelSilent,
	})
	return len(r.Errors) == 0
}

// prologued is f's text code (transformed, with its source map, or not)
// with its prologue.
func (g *Graph) prologued(f *File, code string, smap *sourcemap.Consumer, transformed bool) loaded {
	l := loaded{code: code, smap: smap, transformed: transformed}
	if g.bare && f == g.entry {
		return l
	}
	prologue := g.prologue(code)
	l.code, l.shift = prologue+hashbangAsComment(code), len(prologue)
	return l
}

// hashbangAsComment turns a #! line at the start of code, which the
// prologue would no longer leave at the start (where alone the grammar
// allows one), into the // comment it means: same length, same end.
func hashbangAsComment(code string) string {
	if strings.HasPrefix(code, "#!") {
		return "//" + code[2:]
	}
	return code
}

// prologue is the text put before a module's first line: it binds the
// run's globals at module scope (import.meta is set by the engine, from
// URL). It has no newline, so
// line numbers stay those of the source; columns on line 1 shift by its length.
func (g *Graph) prologue(code string) string {
	var b strings.Builder
	for _, names := range g.glueGroups {
		n := 0
		for _, name := range names {
			if declaresFunction(code, name) {
				continue
			}
			if n == 0 {
				b.WriteString("import {")
			} else {
				b.WriteString(",")
			}
			b.WriteString(name)
			n++
		}
		if n > 0 {
			fmt.Fprintf(&b, "} from %q;", g.glueName(names[0]))
		}
	}
	b.WriteString("import {")
	n := 0
	for _, name := range g.globals {
		if _, glued := g.glue[name]; glued { // imported from its glue's module, above
			continue
		}
		// A function declaration of the same name would be shadowed by the
		// import binding (a quirk of the engine); the module's own wins.
		if declaresFunction(code, name) || slices.Contains(g.yielding, name) && bindsName(code, name) {
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		b.WriteString(name)
		n++
	}
	fmt.Fprintf(&b, "} from %q;", g.globalsName())
	return b.String()
}

// URL is the import.meta.url of a source module, "sandbox:" and the name
// users see, or "" for the generated modules and for a module whose text
// cannot read it.
func (g *Graph) URL(name string) string {
	if f, ok := g.files[name]; ok {
		if !strings.Contains(f.Source, "meta") {
			// No import.meta can be read in a text that never spells
			// "meta" (an escape is a syntax error there): the engine
			// makes no import.meta object for it.
			return ""
		}
		return "sandbox:" + f.Display
	}
	return ""
}

func declaresFunction(code, name string) bool {
	i := 0
	for {
		j := strings.Index(code[i:], name)
		if j < 0 {
			return false
		}
		j += i
		before := strings.TrimRight(code[:j], " \t\r\n*")
		if strings.HasSuffix(before, "function") {
			end := j + len(name)
			if end >= len(code) || !isIdentChar(code[end]) {
				return true
			}
		}
		i = j + len(name)
	}
}

// bindsName reports whether code seems to bind name at some scope: a
// declaration (const, let, var, class, function), an import (default,
// namespace, named or renamed), or a name in a destructuring pattern or
// parameter list. It is a scan of the text, not a parse, and errs towards
// yes: a yielding global is then left out of the module, where a wrong no
// would make the module's own binding a link error.
func bindsName(code, name string) bool {
	// The closer after an occurrence, and what follows it, are found once
	// for all the occurrences before that closer: the scan stays linear
	// (it was quadratic, seconds for a few hundred KB of ",report").
	closer, follows := -1, false
	for i := 0; ; {
		j := strings.Index(code[i:], name)
		if j < 0 {
			return false
		}
		j += i
		i = j + len(name)
		if j > 0 && (isIdentChar(code[j-1]) || code[j-1] == '.') || i < len(code) && isIdentChar(code[i]) {
			continue
		}
		before := strings.TrimRight(code[:j], " \t\r\n")
		for _, kw := range []string{"const", "let", "var", "class", "function", "function*", "import", "as"} {
			if strings.HasSuffix(before, kw) && (len(before) == len(kw) || !isIdentChar(before[len(before)-len(kw)-1])) {
				return true
			}
		}
		// In the braces of an import, or a destructuring pattern:
		// import { a, report } from, const { report } = x, [a, report] = x.
		if strings.HasSuffix(before, "{") || strings.HasSuffix(before, ",") || strings.HasSuffix(before, "[") || strings.HasSuffix(before, ":") {
			if closer < i {
				closer, follows = len(code), false
				if k := strings.IndexAny(code[i:], "}]();"); k >= 0 {
					closer = i + k
					if code[closer] == '}' || code[closer] == ']' {
						rest := strings.TrimLeft(code[closer:], "}] \t\r\n")
						follows = strings.HasPrefix(rest, "from") || strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "==") && !strings.HasPrefix(rest, "=>")
					}
				}
			}
			if follows {
				return true
			}
		}
	}
}

func isIdentChar(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// genericLike matches text that TypeScript may read as type arguments
// (f<T>(x), new C<T>(), a<b, c>), which JavaScript reads as comparisons.
var genericLike = regexp.MustCompile(`[\w$)\]]\s*<\s*[A-Za-z_$][\w$.]*\s*(?:[,<>\[]|extends\b)`)

// plainJS reports whether TypeScript source can run as it is, provided it
// also compiles as JavaScript: no text in it means one thing to TypeScript
// and another to JavaScript.
func plainJS(code string) bool {
	return !genericLike.MatchString(code)
}

func transform(f *File) (string, *sourcemap.Consumer, *LinkFailure) {
	key := cacheKey(f.Display, f.Source)
	for {
		if t, ok := transforms.get(key); ok {
			return t.code, t.smap, nil
		}
		done, mine := transforms.fly(key)
		if mine {
			break
		}
		<-done // then the cache has it, or it failed: transformed again
	}
	return transformFlight(key, f)
}

// transformFlight does the transform of f, whose flight (of key) the caller started:
// it caches the outcome if it succeeds, then lands the flight.
func transformFlight(key [32]byte, f *File) (string, *sourcemap.Consumer, *LinkFailure) {
	defer transforms.land(key)
	out, smap, m := esbuildTS(f.Source, f.Display, api.FormatESModule, false)
	if m != nil {
		lf := &LinkFailure{Specifier: f.Specifier, Message: m.Text, Display: f.Display}
		if m.Location != nil {
			lf.Line = m.Location.Line
			lf.Col = m.Location.Column + 1
		}
		return "", nil, lf
	}
	transforms.add(key, transformed{out, smap})
	return out, smap, nil
}

// Pretransform starts, on a goroutine of its own, the TypeScript transform
// of the entry module src, named filename, so that it is done or under way
// when a run's Load (or Fallback, for a source tried as plain JavaScript
// first, which most TypeScript is) asks for it: a run that waits for the
// engine's start (a process's first) has its entry transformed meanwhile
// instead of after. A source that compiles as JavaScript does not use it.
// It does nothing for a source past MaxBytes or one that nests too deep
// for esbuild (Load refuses both), nor when hostwork has no room for it
// now.
func Pretransform(filename, src string) {
	if len(src) > MaxBytes || nesting.Check(src) != nil {
		return
	}
	f := &File{Display: filename, Source: src}
	key := cacheKey(f.Display, f.Source)
	if _, mine := transforms.fly(key); mine { // neither cached nor under way
		if !hostwork.TryGo("transform", len(src), func() { transformFlight(key, f) }) {
			transforms.land(key)
		}
	}
}

// esbuildTS erases the TypeScript of src, named file, with esbuild: the
// code, its source map (nil when it does not parse), or esbuild's first
// error. verbatim is tsconfig's verbatimModuleSyntax.
func esbuildTS(src, file string, format api.Format, verbatim bool) (string, *sourcemap.Consumer, *api.Message) {
	// esbuild v0.28.2 never returns from quoting some invalid UTF-8 into a
	// source map's sourcesContent (TestTransformInvalidUTF8): the map carries
	// no content, which positions do not need, and the source is made valid
	// UTF-8 first, as the engine would read it anyway.
	r := api.Transform(strings.ToValidUTF8(src, "\uFFFD"), api.TransformOptions{
		Loader:         api.LoaderTS,
		Format:         format,
		Target:         api.ESNext,
		Sourcemap:      api.SourceMapExternal,
		SourcesContent: api.SourcesContentExclude,
		Sourcefile:     file,
		LogLevel:       api.LogLevelSilent,
		TsconfigRaw:    fmt.Sprintf(`{"compilerOptions":{"verbatimModuleSyntax":%t}}`, verbatim),
		LegalComments:  api.LegalCommentsNone,
	})
	if len(r.Errors) > 0 {
		return "", nil, &r.Errors[0]
	}
	smap, err := sourcemap.Parse("", r.Map)
	if err != nil {
		smap = nil
	}
	return string(r.Code), smap, nil
}

// Position maps a 1-based line and column in the engine's view of module
// name to the user's source. It reports false for a module that is not a
// source module of the graph.
func (g *Graph) Position(name string, line, col int) (display string, l, c int, ok bool) {
	f, found := g.files[name]
	if !found {
		return "", 0, 0, false
	}
	if line == 1 {
		col -= f.shift
		if col < 1 {
			col = 1
		}
	}
	if f.smap != nil {
		if _, _, ol, oc, ok := f.smap.Source(line, col-1); ok {
			line, col = ol, oc+1
		}
	}
	return f.Display, line, col, true
}

// File returns the source module with a name, if there is one.
func (g *Graph) File(name string) (*File, bool) {
	f, ok := g.files[name]
	return f, ok
}

// SpecifierOf returns the caller's name for a module name.
func (g *Graph) SpecifierOf(name string) string {
	if f, ok := g.files[name]; ok {
		return f.Specifier
	}
	if i, ok := strings.CutPrefix(name, "airlock:import:"+g.key+":"); ok {
		if n, err := strconv.Atoi(i); err == nil && n >= 0 && n < len(g.order) {
			return g.order[n]
		}
	}
	return name
}

var frameRE = regexp.MustCompile(`^(\s*at )(?:(.*) \()?([^()]*?):(\d+):(\d+)\)?$`)

// maxFrames bounds the frames kept in a stack trace.
const maxFrames = 50

// Frame is the first user frame of a stack trace.
type Frame struct {
	Display   string
	Line, Col int
}

// MapStack rewrites an engine stack trace for the user: frames in source
// modules get original file names and positions, frames of the sandbox's own
// machinery are dropped, and at most maxFrames are kept. It also returns the
// top user frame.
func (g *Graph) MapStack(stack string) (string, *Frame) {
	var out []string
	var top *Frame
	for _, line := range strings.Split(strings.TrimRight(stack, "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := frameRE.FindStringSubmatch(line)
		if m == nil {
			if m := strings.TrimSpace(line); strings.HasPrefix(m, "... [truncated ") {
				// The sandbox cut the frames after it, and says how much.
				out = append(out, "    "+m)
			} else if strings.TrimSpace(line) == "at host (native)" {
				// The host function every bridged function calls: the user's
				// frame below it is the call.
			} else if strings.Contains(line, "(native)") {
				out = append(out, "    "+strings.TrimSpace(line))
			} else if n := len(out); n > 0 && out[n-1] == "    at apply (native)" {
				// A frame of the sandbox's kernel, which has no position, and
				// the Reflect.apply it called a guarded builtin with.
				out = out[:n-1]
			}
			continue
		}
		l, _ := strconv.Atoi(m[4])
		c, _ := strconv.Atoi(m[5])
		display, l, c, ok := g.Position(m[3], l, c)
		if !ok {
			continue
		}
		if top == nil {
			top = &Frame{display, l, c}
		}
		if len(out) >= maxFrames {
			continue
		}
		if m[2] != "" {
			out = append(out, fmt.Sprintf("    at %s (%s:%d:%d)", m[2], display, l, c))
		} else {
			out = append(out, fmt.Sprintf("    at %s:%d:%d", display, l, c))
		}
	}
	if len(out) == 0 {
		return "", top
	}
	return strings.Join(out, "\n"), top
}

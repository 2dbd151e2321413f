package test262

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

var (
	suiteDir   = flag.String("test262", "", "the test262 folder fetch.sh made (with test/, harness/ and quickjs/); unset, the runner skips")
	onlyDirs   = flag.String("test262.dirs", "", "comma-separated folders under test/ to run (default: all of test/ but intl402, which QuickJS's configuration leaves out)")
	skipDirs   = flag.String("test262.skip", "", "comma-separated folders under test/ not to run; the report names them")
	perTest    = flag.Duration("test262.timeout", 10*time.Second, "the time one test may take")
	jobs       = flag.Int("test262.jobs", 1, "tests run at once")
	reportFile = flag.String("test262.out", "", "write the report, in Markdown, to this file")
	errorsFile = flag.String("test262.errors", "", "QuickJS's test262_errors.txt (default: <test262>/quickjs/test262_errors.txt)")
	confFile   = flag.String("test262.conf", "", "QuickJS's test262.conf (default: <test262>/quickjs/test262.conf)")
)

// meta is what a test's front matter says.
type meta struct {
	includes, flags, features []string
	negPhase, negType         string
}

func (m meta) has(flag string) bool { return slices.Contains(m.flags, flag) }

var (
	frontMatter = regexp.MustCompile(`(?s)/\*---(.*?)---\*/`)
	lineRE      = regexp.MustCompile(`\r\n|\r|\n|\x{2028}|\x{2029}`)
)

// parseMeta reads the YAML front matter of a test, as far as the runner
// needs it: includes, flags, features (inline lists or "- item" lines) and
// negative's phase and type.
func parseMeta(src string) meta {
	var m meta
	fm := frontMatter.FindStringSubmatch(src)
	if fm == nil {
		return m
	}
	key := ""
	for _, line := range lineRE.Split(fm[1], -1) {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if !indented {
			k, v, ok := strings.Cut(trimmed, ":")
			if !ok {
				key = ""
				continue
			}
			key = k
			v = strings.TrimSpace(v)
			if strings.HasPrefix(v, "[") {
				for _, item := range strings.Split(strings.Trim(v, "[]"), ",") {
					if item = strings.TrimSpace(item); item != "" {
						m.add(key, item)
					}
				}
			}
			continue
		}
		if item, ok := strings.CutPrefix(trimmed, "- "); ok {
			m.add(key, strings.TrimSpace(item))
			continue
		}
		if key == "negative" {
			k, v, _ := strings.Cut(trimmed, ":")
			switch strings.TrimSpace(k) {
			case "phase":
				m.negPhase = strings.TrimSpace(v)
			case "type":
				m.negType = strings.TrimSpace(v)
			}
		}
	}
	return m
}

func (m *meta) add(key, item string) {
	switch key {
	case "includes":
		m.includes = append(m.includes, item)
	case "flags":
		m.flags = append(m.flags, item)
	case "features":
		m.features = append(m.features, item)
	}
}

// The classes of tests that are out of scope, in the order they are tried.
const (
	exclUnimplemented = "a feature QuickJS does not implement (its test262.conf: feature=skip)"
	exclQuickJSConf   = "excluded by QuickJS's test262.conf ([exclude])"
	exclShared        = "by design: no SharedArrayBuffer, no Atomics ($262.agent, CanBlockIsTrue)"
	exclRealm         = "by design: no second realm ($262.createRealm, cross-realm)"
	exclCodeGen       = "by design: no code generation (eval, the Function constructors, $262.evalScript)"
	exclHostHook      = "a host hook a program cannot reach ($262.gc, $262.IsHTMLDDA)"
	exclImportPolicy  = "the executor's import policy: a step's import() names an authorized module by a string literal (ERR_IMPORT_NOT_ALLOWED)"
)

var exclusionOrder = []string{exclUnimplemented, exclQuickJSConf, exclShared, exclRealm, exclCodeGen, exclHostHook, exclImportPolicy}

var (
	sharedRE  = regexp.MustCompile(`\b(SharedArrayBuffer|Atomics)\b|\$262\.agent\b`)
	realmRE   = regexp.MustCompile(`\$262\.createRealm\b`)
	codeGenRE = regexp.MustCompile(`(?:^|[^.\w$])eval\b|(?:^|[^.\w$])(?:Function|GeneratorFunction|AsyncFunction|AsyncGeneratorFunction)\s*\(|\bnew\s+Function\b|\bFunction\.(?:call|apply)\s*\(|\$262\.evalScript\b|\.constructor\s*\(\s*['"` + "`" + `]`)
	hookRE    = regexp.MustCompile(`\$262\.(gc|IsHTMLDDA)\b`)
)

// quickjsConf is what QuickJS's test262.conf says the runner needs.
type quickjsConf struct {
	skipFeatures map[string]bool
	exclude      []string // paths under test/, a folder ending in "/"
}

func readConf(file string) (quickjsConf, error) {
	c := quickjsConf{skipFeatures: map[string]bool{}}
	f, err := os.Open(file)
	if err != nil {
		return c, err
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		switch section {
		case "[features]":
			if name, ok := strings.CutSuffix(line, "=skip"); ok {
				c.skipFeatures[name] = true
			}
		case "[exclude]":
			if p, ok := strings.CutPrefix(line, "test262/test/"); ok {
				c.exclude = append(c.exclude, p)
			}
		}
	}
	return c, sc.Err()
}

// readKnownErrors reads QuickJS's test262_errors.txt: the files it fails,
// by path under test/.
func readKnownErrors(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	known := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		p, ok := strings.CutPrefix(line, "test262/test/")
		if !ok {
			continue
		}
		file, msg, _ := strings.Cut(p, ":")
		known[file] = msg
	}
	return known, nil
}

// exclusion names the class that puts a test out of scope, or "".
func exclusion(rel, src string, m meta, conf quickjsConf) string {
	for _, f := range m.features {
		if conf.skipFeatures[f] {
			return exclUnimplemented
		}
	}
	for _, p := range conf.exclude {
		if p == "intl402/" {
			continue // the Intl layer is ours: run it when asked
		}
		if p == rel || (strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p)) {
			return exclQuickJSConf
		}
	}
	body := src
	if fm := frontMatter.FindStringIndex(src); fm != nil {
		body = src[:fm[0]] + src[fm[1]:] // the description may name eval
	}
	for _, f := range m.features {
		switch f {
		case "SharedArrayBuffer", "Atomics", "Atomics.waitAsync", "Atomics.pause":
			return exclShared
		case "cross-realm", "ShadowRealm":
			return exclRealm
		}
	}
	if m.has("CanBlockIsTrue") || sharedRE.MatchString(body) {
		return exclShared
	}
	if realmRE.MatchString(body) {
		return exclRealm
	}
	if codeGenRE.MatchString(body) || slices.Contains(m.includes, "wellKnownIntrinsicObjects.js") || slices.Contains(m.includes, "sm/non262-strict-shell.js") {
		return exclCodeGen
	}
	for _, f := range m.features {
		if f == "host-gc-required" || f == "IsHTMLDDA" {
			return exclHostHook
		}
	}
	if hookRE.MatchString(body) {
		return exclHostHook
	}
	return ""
}

// prelude is the host's part of the harness: print, which
// doneprintHandle.js's $DONE calls, and the $262 the public API can give.
// An ArrayBuffer is detached by transferring it; one already detached is
// left as it is, as the host's DetachArrayBuffer does.
const prelude = `var print = function (m) { console.log(String(m)); };
var $262 = { global: globalThis, detachArrayBuffer: function (b) { if (!b.detached) b.transfer(); } };
`

const (
	asyncComplete = "Test262:AsyncTestComplete"
	asyncFailure  = "Test262:AsyncTestFailure:"
)

// suite holds what is read once.
type suite struct {
	dir     string
	harness map[string]string
	mu      sync.Mutex
}

// harnessSubstitutions replace, in two harness files, a use of the
// Function constructor (which the sandbox refuses by design) with code of
// the same meaning that generates none: fnGlobalObject.js gets the global
// object as Function("return this;")() does, and resizableArrayBufferUtils.js
// makes its subclasses of the typed arrays with a class expression. A file
// whose text no longer has what is replaced is an error, not a silent
// difference. wellKnownIntrinsicObjects.js, which reaches every intrinsic
// by evaluating its source text, has no such substitute: the tests that
// include it are out of scope with code generation, and so are those that
// include sm/non262-strict-shell.js, whose testLenientAndStrict compiles
// the code it is given with Function.
var harnessSubstitutions = map[string][2]string{
	"fnGlobalObject.js":            {`Function("return this;")()`, `globalThis`},
	"resizableArrayBufferUtils.js": {`new Function('return class My' + type + ' extends ' + type + ' {}')()`, `(class extends globalThis[type] {})`},
}

func (s *suite) include(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.harness[name]; ok {
		return h, nil
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "harness", name))
	if err != nil {
		return "", err
	}
	h := string(b)
	if sub, ok := harnessSubstitutions[name]; ok {
		if !strings.Contains(h, sub[0]) {
			return "", fmt.Errorf("harness/%s no longer has %s", name, sub[0])
		}
		h = strings.Replace(h, sub[0], sub[1], 1)
	}
	s.harness[name] = h
	return h, nil
}

// program is the test with the harness in front of it (none for raw).
func (s *suite) program(src string, m meta) (string, error) {
	if m.has("raw") {
		return src, nil
	}
	var b strings.Builder
	b.WriteString(prelude)
	names := []string{"assert.js", "sta.js"}
	if m.has("async") {
		names = append(names, "doneprintHandle.js")
	}
	for _, n := range append(names, m.includes...) {
		h, err := s.include(n)
		if err != nil {
			return "", err
		}
		b.WriteString(h)
		b.WriteString("\n")
	}
	b.WriteString(src)
	return b.String(), nil
}

// got is how one run of a test ended: name is "" on success, else the
// error's name (SyntaxError, Test262Error …) or what stopped it.
type got struct {
	status        airlock.Status // a run's
	name, message string
	logs          []string
}

// verdict checks a run's end against what the test expects; "" is a pass.
func verdict(m meta, g got) string {
	if m.negType != "" {
		if g.name == m.negType {
			return ""
		}
		// A run reports an import that its module does not export, which
		// the engine throws as a SyntaxError when it resolves the module
		// graph, as a link error named LinkError: that is the resolution
		// phase's SyntaxError.
		if m.negPhase == "resolution" && m.negType == "SyntaxError" && g.status == airlock.StatusLinkError && g.name == "LinkError" {
			return ""
		}
		// A thrown value that is not an Error crosses as an Error whose
		// message is the value's JSON: a Test262Error is {"message": …}.
		if m.negType == "Test262Error" && g.name == "Error" && strings.HasPrefix(g.message, `{"message": `) {
			return ""
		}
		if g.name == "" {
			return fmt.Sprintf("expected %s (%s phase), but it ran to the end", m.negType, m.negPhase)
		}
		return fmt.Sprintf("expected %s (%s phase), got %s: %s", m.negType, m.negPhase, g.name, g.message)
	}
	if g.name != "" {
		return g.name + ": " + g.message
	}
	if m.has("async") {
		for _, l := range g.logs {
			if strings.HasPrefix(l, asyncFailure) {
				return "async: " + strings.TrimPrefix(l, asyncFailure)
			}
		}
		if !slices.Contains(g.logs, asyncComplete) {
			return "async: $DONE was not called"
		}
	}
	return ""
}

// runScript runs the program as one step of a fresh executor. The modules
// it imports dynamically are its SourceModules, by the specifiers it
// writes, and authorized.
func runScript(ctx context.Context, code string, strict bool, imports map[string]string) got {
	var names []string
	for k := range imports {
		names = append(names, k)
	}
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{
		Sloppy:            !strict,
		Timeout:           *perTest,
		MaxOperations:     1 << 40,
		AuthorizedImports: names,
		SourceModules:     imports,
	})
	if err != nil {
		return got{name: "executor", message: err.Error()}
	}
	defer ex.Cleanup(context.Background())
	if err := ex.Init(ctx); err != nil {
		return got{name: "init", message: err.Error()}
	}
	out, err := ex.Run(ctx, code)
	if err == nil {
		return got{logs: strings.Split(out.Logs, "\n")}
	}
	var ee *airlock.ExecutorError
	if !errors.As(err, &ee) {
		return got{name: "error", message: err.Error()}
	}
	g := got{logs: strings.Split(ee.Logs, "\n"), message: ee.Message}
	switch ee.Code {
	case airlock.CodeRuntimeException:
		g.name, _ = ee.Details["name"].(string)
		g.message, _ = ee.Details["message"].(string)
		if g.name == "" {
			g.name = "thrown"
			g.message = ee.Message
		}
	case airlock.CodeValidationFailed:
		g.name = "validation"
		if ds, ok := ee.Details["diagnostics"].([]airlock.Diagnostic); ok {
		diags:
			for _, d := range ds {
				if d.Severity != airlock.DiagnosticError {
					continue
				}
				switch d.Rule {
				case "syntax_valid", "static_import_in_script_mode":
					g.name = "SyntaxError"
				default:
					g.name = "validation(" + d.Rule + ")"
				}
				g.message = d.Message
				break diags
			}
		}
	default:
		g.name = string(ee.Code)
	}
	return g
}

// specifierRE finds the relative specifiers a module imports or exports
// from, statically or dynamically.
var specifierRE = regexp.MustCompile(`(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}/[^'"\n]+)['"]`)

// fixtures reads the modules that the module at rel (a path under test/)
// reaches by relative specifiers, keyed as Options.Modules wants them
// ("./" and their path under test/). The test itself is left out: a
// specifier that names it resolves to the entry.
func (s *suite) fixtures(rel, src string) (map[string]string, error) {
	mods := map[string]string{}
	var walk func(from, text string) error
	walk = func(from, text string) error {
		for _, sm := range specifierRE.FindAllStringSubmatch(text, -1) {
			p := path.Join(path.Dir(from), sm[1])
			if p == rel || mods["./"+p] != "" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(s.dir, "test", filepath.FromSlash(p)))
			if err != nil {
				continue // a module that is missing on purpose: the run says so
			}
			mods["./"+p] = string(b)
			if err := walk(p, string(b)); err != nil {
				return err
			}
		}
		return nil
	}
	return mods, walk(rel, src)
}

// scriptImports reads the modules a script imports dynamically, keyed by
// the specifier as written (the executor resolves no relative path), each
// read from where the file that writes it is.
func (s *suite) scriptImports(rel, src string) map[string]string {
	mods := map[string]string{}
	var walk func(from, text string)
	walk = func(from, text string) {
		for _, sm := range specifierRE.FindAllStringSubmatch(text, -1) {
			if _, ok := mods[sm[1]]; ok {
				continue
			}
			p := path.Join(path.Dir(from), sm[1])
			b, err := os.ReadFile(filepath.Join(s.dir, "test", filepath.FromSlash(p)))
			if err != nil {
				continue
			}
			mods[sm[1]] = string(b)
			walk(p, string(b))
		}
	}
	walk(rel, src)
	return mods
}

// runModule runs the program as a module of a run, with its fixtures, in
// Options.Modules. The entry only imports it: an entry's default export
// that is a function would be called (a test's export default class …),
// and one that cannot leave the sandbox would fail the run; the test is
// then the module its own relative specifiers name, evaluated once.
func runModule(ctx context.Context, rel, code string, fixtures map[string]string) got {
	mods := map[string]string{"./" + rel: code}
	for k, v := range fixtures {
		mods[k] = v
	}
	ex, err := airlock.Run(ctx, "import './"+rel+"';\n", airlock.Options{
		Language: airlock.JavaScript,
		Filename: "test262-entry.js",
		Modules:  mods,
		Timeout:  *perTest,
	})
	if err != nil {
		return got{name: "options", message: err.Error()}
	}
	res := ex.Wait()
	g := got{}
	for _, l := range res.Logs {
		parts := make([]string, len(l.Args))
		for i, a := range l.Args {
			parts[i] = fmt.Sprint(a)
		}
		g.logs = append(g.logs, strings.Join(parts, " "))
	}
	if res.Status != airlock.StatusSuccess {
		g.status = res.Status
		g.name = string(res.Status)
		if res.Error != nil {
			if res.Error.Name != "" {
				g.name = res.Error.Name
			}
			g.message = res.Error.Message
		}
	}
	return g
}

// outcome is a file's result.
type outcome struct {
	rel, excluded, failure, mode string
	known                        bool // on QuickJS's own list
}

func (s *suite) runFile(rel string, known map[string]string, conf quickjsConf) (o outcome) {
	o.rel = rel
	_, o.known = known[rel]
	b, err := os.ReadFile(filepath.Join(s.dir, "test", filepath.FromSlash(rel)))
	if err != nil {
		o.failure = "read: " + err.Error()
		return o
	}
	src := string(b)
	m := parseMeta(src)
	o.excluded = exclusion(rel, src, m, conf)
	code, err := s.program(src, m)
	if err != nil {
		o.failure = "harness: " + err.Error()
		return o
	}
	run := func(mode string, f func(ctx context.Context) got) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3**perTest)
		defer cancel()
		if v := verdict(m, f(ctx)); v != "" {
			o.failure, o.mode = v, mode
			return false
		}
		return true
	}
	imports := s.scriptImports(rel, src)
	defer func() {
		// A test that reached code generation, which the sandbox refuses by
		// design, is out of scope with the tests that name it.
		if o.excluded == "" && (strings.Contains(o.failure, "code generation from strings is not allowed") || strings.Contains(o.failure, "ReferenceError: eval is not defined") || strings.Contains(o.failure, "but got a EvalError")) {
			o.excluded = exclCodeGen
		}
		// A step whose import() the executor refuses before it runs (not a
		// string literal, or not an authorized name) meets the executor's
		// documented policy, not the language.
		if o.excluded == "" && strings.HasPrefix(o.failure, string(airlock.CodeImportNotAllowed)) {
			o.excluded = exclImportPolicy
		}
	}()
	switch {
	case m.has("module"):
		mods, err := s.fixtures(rel, src)
		if err != nil {
			o.failure = "fixtures: " + err.Error()
			return o
		}
		run("module", func(ctx context.Context) got { return runModule(ctx, rel, code, mods) })
	case m.has("raw") || m.has("noStrict"):
		run("sloppy", func(ctx context.Context) got { return runScript(ctx, code, false, imports) })
	case m.has("onlyStrict"):
		run("strict", func(ctx context.Context) got { return runScript(ctx, code, true, imports) })
	default:
		if run("strict", func(ctx context.Context) got { return runScript(ctx, code, true, imports) }) {
			run("sloppy", func(ctx context.Context) got { return runScript(ctx, code, false, imports) })
		}
	}
	return o
}

// folderOf is the folder a file is counted under: its first two levels
// (built-ins/Array, language/statements).
func folderOf(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) < 3 {
		return path.Dir(rel)
	}
	return parts[0] + "/" + parts[1]
}

// TestTest262 runs test262 through the public API; see the package
// documentation for how. It fails when a failure of our own is left.
func TestTest262(t *testing.T) {
	if *suiteDir == "" {
		t.Skip("test262 is not run without -test262 DIR: fetch the suite with ./internal/test262/fetch.sh DIR, then nice go test ./internal/test262 -timeout 0 -test262 DIR [-test262.dirs built-ins/Array,...] [-test262.out FILE] (CONFORMANCE.md)")
	}
	dir := *suiteDir
	ef, cf := *errorsFile, *confFile
	if ef == "" {
		ef = filepath.Join(dir, "quickjs", "test262_errors.txt")
	}
	if cf == "" {
		cf = filepath.Join(dir, "quickjs", "test262.conf")
	}
	known, err := readKnownErrors(ef)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := readConf(cf)
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{}
	if *onlyDirs != "" {
		for _, d := range strings.Split(*onlyDirs, ",") {
			roots = append(roots, strings.Trim(strings.TrimSpace(d), "/"))
		}
	} else {
		entries, err := os.ReadDir(filepath.Join(dir, "test"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && e.Name() != "intl402" {
				roots = append(roots, e.Name())
			}
		}
	}
	var skipped []string
	if *skipDirs != "" {
		for _, d := range strings.Split(*skipDirs, ",") {
			skipped = append(skipped, strings.Trim(strings.TrimSpace(d), "/"))
		}
	}
	var files []string
	for _, r := range roots {
		base := filepath.Join(dir, "test")
		err := filepath.WalkDir(filepath.Join(base, filepath.FromSlash(r)), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			rel, _ := filepath.Rel(base, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() && slices.Contains(skipped, rel) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(name, ".js") || strings.Contains(name, "_FIXTURE") {
				return nil
			}
			files = append(files, rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(files)
	s := &suite{dir: dir, harness: map[string]string{}}
	start := time.Now()
	results := make([]outcome, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	n := max(*jobs, 1)
	n = min(n, runtime.NumCPU())
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = s.runFile(files[i], known, conf)
			}
		}()
	}
	for i := range files {
		if i > 0 && i%2000 == 0 {
			t.Logf("%d of %d files, %s", i, len(files), time.Since(start).Round(time.Second))
		}
		next <- i
	}
	close(next)
	wg.Wait()
	commit, _ := os.ReadFile(filepath.Join(dir, "COMMIT"))
	rep := report(results, strings.TrimSpace(string(commit)), roots, skipped, time.Since(start))
	if *reportFile != "" {
		if err := os.WriteFile(*reportFile, []byte(rep.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Log("\n" + rep.summary)
	if rep.ours > 0 {
		t.Errorf("%d files fail because of our layer (the report lists them)", rep.ours)
	}
}

type folderCount struct {
	files, excluded, inScope, passed, quickjs, ours int
}

type reportText struct {
	text, summary string
	ours          int
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(a)/float64(b))
}

// report writes the figures: the pass rate by folder, the exclusions by
// class, QuickJS's own failures, and ours, one line each.
func report(results []outcome, commit string, roots, skipped []string, took time.Duration) reportText {
	folders := map[string]*folderCount{}
	var total folderCount
	excl := map[string][2]int{} // class: files, of which pass anyway
	var ours, quickjsOwn, knownPassed []outcome
	for _, o := range results {
		fc := folders[folderOf(o.rel)]
		if fc == nil {
			fc = &folderCount{}
			folders[folderOf(o.rel)] = fc
		}
		for _, c := range []*folderCount{fc, &total} {
			c.files++
			switch {
			case o.excluded != "":
				c.excluded++
			default:
				c.inScope++
				switch {
				case o.failure == "":
					c.passed++
				case o.known:
					c.quickjs++
				default:
					c.ours++
				}
			}
		}
		if o.excluded != "" {
			e := excl[o.excluded]
			e[0]++
			if o.failure == "" {
				e[1]++
			}
			excl[o.excluded] = e
			continue
		}
		switch {
		case o.failure != "" && o.known:
			quickjsOwn = append(quickjsOwn, o)
		case o.failure != "":
			ours = append(ours, o)
		case o.known:
			knownPassed = append(knownPassed, o)
		}
	}
	var b, sum strings.Builder
	fmt.Fprintf(&b, "test262 %s, folders: %s; %d files in %s.\n", commit, strings.Join(roots, ", "), total.files, took.Round(time.Second))
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "Not run: %s.\n", strings.Join(skipped, ", "))
	}
	b.WriteString("\n")
	fmt.Fprintf(&sum, "%d files: %d out of scope, %d in scope, %d pass (%s), %d QuickJS's own failures, %d ours\n",
		total.files, total.excluded, total.inScope, total.passed, pct(total.passed, total.inScope), total.quickjs, total.ours)
	b.WriteString("| folder | files | out of scope | in scope | pass | pass rate | QuickJS's own failures | our failures |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	names := make([]string, 0, len(folders))
	for k := range folders {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range append(names, "total") {
		c := folders[k]
		if k == "total" {
			c = &total
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %s | %d | %d |\n", k, c.files, c.excluded, c.inScope, c.passed, pct(c.passed, c.inScope), c.quickjs, c.ours)
	}
	b.WriteString("\nOut of scope, by class (files; of which pass all the same):\n\n")
	for _, c := range exclusionOrder {
		if e, ok := excl[c]; ok {
			fmt.Fprintf(&b, "- %s: %d (%d pass)\n", c, e[0], e[1])
		}
	}
	fmt.Fprintf(&b, "\nQuickJS's own failures (its test262_errors.txt) that fail here too: %d.\n", len(quickjsOwn))
	if len(knownPassed) > 0 {
		fmt.Fprintf(&b, "On QuickJS's list but passing here: %d.\n\n", len(knownPassed))
		for _, o := range knownPassed {
			fmt.Fprintf(&b, "- %s\n", o.rel)
		}
	}
	fmt.Fprintf(&b, "\nOur failures: %d.\n\n", len(ours))
	for _, o := range ours {
		f := strings.ReplaceAll(o.failure, "\n", " ")
		if len(f) > 200 {
			f = f[:200] + "…"
		}
		fmt.Fprintf(&b, "- %s [%s]: %s\n", o.rel, o.mode, f)
	}
	return reportText{text: b.String(), summary: sum.String(), ours: len(ours)}
}

package airlock_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/childtest"
	"github.com/airlockrun/airlock/internal/nesting/nestingtest"
)

// deepN is how deeply the hostile programs nest: hundreds of thousands of
// levels, a few hundred KB, as the attack that took the host down.
const deepN = 200_000

// wantNestingLinkError checks that a deeply nested program ends as a
// link_error: the nesting bound's syntax error for what opens deeper than
// the bound, the parser's syntax error for what only closes.
func wantNestingLinkError(t *testing.T, name string, res *airlock.Result) {
	t.Helper()
	if res.Status != airlock.StatusLinkError || res.Error == nil {
		t.Errorf("%s: status %s (%v), want link_error", name, res.Status, res.Error)
		return
	}
	if strings.Contains(name, "-close") {
		return
	}
	if res.Error.Name != "SyntaxError" || !strings.Contains(res.Error.Message, "nests too deeply") || res.Error.Line < 1 || res.Error.Column < 1 {
		t.Errorf("%s: %+v, want the nesting bound's SyntaxError with its position", name, res.Error)
	}
}

// Every bracket and nesting operator, 200,000 deep, through airlock.Run in
// both languages, as the entry module and as a supplied module: the host
// survives (the test runs in a child process) and answers link_error.
func TestNestingRun(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	ctx := context.Background()
	for _, c := range nestingtest.Deep(deepN) {
		for _, lang := range []airlock.Language{airlock.TypeScript, airlock.JavaScript} {
			run, err := airlock.Run(ctx, c.Module, airlock.Options{Language: lang})
			if err != nil {
				t.Fatal(err)
			}
			wantNestingLinkError(t, c.Name, run.Wait())
		}
		run, err := airlock.Run(ctx, `import v from './deep.ts'; export default v`,
			airlock.Options{Modules: map[string]string{"./deep.ts": c.Module}})
		if err != nil {
			t.Fatal(err)
		}
		res := run.Wait()
		wantNestingLinkError(t, c.Name+" (module)", res)
		if res.Error != nil && !strings.Contains(c.Name, "-close") && (res.Error.Filename != "deep.ts" || res.Error.Specifier != "./deep.ts") {
			t.Errorf("%s (module): error in %q (%q), want deep.ts", c.Name, res.Error.Filename, res.Error.Specifier)
		}
	}
	// A million levels, a MB of source.
	run, _ := airlock.Run(ctx, "export default "+strings.Repeat("[", 1_000_000), airlock.Options{})
	wantNestingLinkError(t, "array-1e6", run.Wait())
}

// In worker mode, the same answers come back from the worker, for the
// nests hidden behind a slash too.
func TestNestingRunWorkers(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1})
	defer rt.Close()
	for _, c := range append(nestingtest.Deep(deepN), nestingtest.Hidden(hiddenN)...) {
		run, err := rt.Run(context.Background(), c.Module, airlock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wantNestingLinkError(t, c.Name+" (worker)", run.Wait())
	}
	wantResult(t, func() *airlock.Result {
		run, _ := rt.Run(context.Background(), "export default 6 * 7", airlock.Options{})
		return run.Wait()
	}(), 42.0)
}

// The error is at the bracket that went past the bound, in the user's
// source.
func TestNestingRunPosition(t *testing.T) {
	src := "// deep\nconst x = 1;\nexport default " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000)
	for _, lang := range []airlock.Language{airlock.TypeScript, airlock.JavaScript} {
		res := runOpts(t, src, airlock.Options{Language: lang, Filename: "agent.ts"})
		wantStatus(t, res, airlock.StatusLinkError)
		e := res.Error
		// 1000 levels are allowed: the 1001st parenthesis is refused.
		if e.Name != "SyntaxError" || e.Filename != "agent.ts" || e.Line != 3 || e.Column != len("export default ")+1001 {
			t.Errorf("%v: %+v, want agent.ts:3:%d", lang, e, len("export default ")+1001)
		}
	}
}

// Programs that nest as real ones do, 50 to 300 levels of each shape,
// with brackets in strings, comments, templates and regular expressions,
// still run, in both languages.
func TestNestingHonestRun(t *testing.T) {
	cases := append(nestingtest.Honest(), nestingtest.HonestTS()...)
	for _, c := range cases {
		langs := []airlock.Language{airlock.TypeScript, airlock.JavaScript}
		if strings.HasPrefix(c.Name, "ts-") {
			langs = langs[:1]
		}
		for _, lang := range langs {
			res := runOpts(t, c.Module, airlock.Options{Language: lang})
			if res.Status != airlock.StatusSuccess {
				t.Errorf("%s (%v): %s %+v", c.Name, lang, res.Status, res.Error)
				continue
			}
			if got, _ := json.Marshal(res.Result); string(got) != c.Want {
				t.Errorf("%s (%v): %s, want %s", c.Name, lang, got, c.Want)
			}
		}
	}
}

// The executor's parser is never reached by a deep step: Run and
// ValidateCode answer ERR_VALIDATION_FAILED with the nesting_depth
// diagnostic; a step that only closes fails syntax_valid.
func TestNestingExecutor(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	ctx := context.Background()
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for _, c := range nestingtest.Deep(deepN) {
		want := "nesting_depth"
		if strings.HasSuffix(c.Name, "-close") {
			want = "syntax_valid"
		}
		ds := airlock.ValidateCode(c.Step, airlock.ExecutorOptions{})
		if want == "syntax_valid" && len(ds) > 0 && ds[0].Rule == "nesting_depth" {
			want = ds[0].Rule // a malformed step may also count deep
		}
		if len(ds) == 0 || ds[0].Rule != want || ds[0].Severity != airlock.DiagnosticError {
			t.Errorf("%s: ValidateCode gave %+v, want %s", c.Name, ds, want)
		} else if want == "nesting_depth" && (ds[0].Location == nil || ds[0].Location.Line < 1) {
			t.Errorf("%s: diagnostic without a place: %+v", c.Name, ds[0])
		}
		_, err := ex.Run(ctx, c.Step)
		var ee *airlock.ExecutorError
		if !errors.Is(err, airlock.ErrValidationFailed) || !errors.As(err, &ee) {
			t.Errorf("%s: Run gave %v, want ERR_VALIDATION_FAILED", c.Name, err)
			continue
		}
		if want == "nesting_depth" && !strings.Contains(ee.Message, "nests too deeply") {
			t.Errorf("%s: %v", c.Name, ee.Message)
		}
	}
	// The executor is still usable.
	out := mustRun(t, ex, "return 6 * 7")
	if got, _ := json.Marshal(out.Output); string(got) != "42" {
		t.Fatalf("after the deep steps: %s", got)
	}
}

// The diagnostic's place is the bracket that went past the bound.
func TestNestingExecutorPosition(t *testing.T) {
	code := "const a = 1\nreturn " + strings.Repeat("[", 3000) + strings.Repeat("]", 3000)
	ds := airlock.ValidateCode(code, airlock.ExecutorOptions{})
	if len(ds) != 1 || ds[0].Rule != "nesting_depth" || ds[0].Location == nil ||
		ds[0].Location.Line != 2 || ds[0].Location.Column != len("return ")+1001 || ds[0].Fix == "" {
		t.Fatalf("%+v", ds)
	}
}

// Honest steps run in the executor.
func TestNestingHonestExecutor(t *testing.T) {
	ctx := context.Background()
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for _, c := range nestingtest.Honest() {
		out, err := ex.Run(ctx, c.Step)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if got, _ := json.Marshal(out.Output); string(got) != c.Want {
			t.Errorf("%s: %s, want %s", c.Name, got, c.Want)
		}
	}
}

// hiddenN is how deeply the programs that hide their nesting behind a
// slash nest: 400,000 levels, 400 KB, past the 300,000 at which esbuild
// and sobek overflow the Go stack.
const hiddenN = 400_000

// A slash that a scanner without a parser reads the wrong way hid a nest
// from the bound: after a closing brace that ends an expression
// (`x = {} / '/ ; ' (((`), the scanner read a regular expression where the
// parser divides, and the string that followed hid the parentheses; after
// a word that may be an identifier (async, as, of, keyof…), the same;
// after a type annotation or a declaration at the end of a line
// (`let x: string[]` then `/'/ (((`), after break, debugger, a comparison's
// `>` or a `!` on a new line, it divided where the parser reads a
// regular expression; and esbuild reads `<!--` and a line's `-->` as
// comments where the scanner read code. esbuild recursed through the nest
// of each of these (as TypeScript, as JavaScript or both), and 400 KB deep
// the child process of this test died of a fatal stack overflow; now every
// one is the nesting bound's link_error, in both languages, and the
// process survives.
func TestNestingHiddenRun(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	ctx := context.Background()
	for _, c := range nestingtest.Hidden(hiddenN) {
		for _, lang := range []airlock.Language{airlock.TypeScript, airlock.JavaScript} {
			run, err := airlock.Run(ctx, c.Module, airlock.Options{Language: lang})
			if err != nil {
				t.Fatal(err)
			}
			wantNestingLinkError(t, c.Name+" ("+lang.String()+")", run.Wait())
		}
	}
	wantResult(t, runOpts(t, "export default 6 * 7", airlock.Options{}), 42.0)
}

// The same programs as executor steps: ValidateCode and Run answer the
// nesting_depth diagnostic (a step the engine cannot compile was read as
// TypeScript by esbuild, which the hidden nest took down), and the
// executor still runs steps afterwards.
func TestNestingHiddenExecutor(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for _, c := range nestingtest.Hidden(hiddenN) {
		ds := airlock.ValidateCode(c.Step, airlock.ExecutorOptions{})
		if len(ds) == 0 || ds[0].Rule != "nesting_depth" {
			t.Errorf("%s: ValidateCode gave %+v, want nesting_depth", c.Name, ds)
		}
		_, err := ex.Run(context.Background(), c.Step)
		var ee *airlock.ExecutorError
		if !errors.Is(err, airlock.ErrValidationFailed) || !errors.As(err, &ee) || !strings.Contains(ee.Message, "nests too deeply") {
			t.Errorf("%s: Run gave %v, want ERR_VALIDATION_FAILED (nesting_depth)", c.Name, err)
		}
	}
	out := mustRun(t, ex, "return 6 * 7")
	if got, _ := json.Marshal(out.Output); string(got) != "42" {
		t.Fatalf("after the hidden steps: %s", got)
	}
}

// A source that keeps more readings of its slashes apart than the scan
// follows at once (nesting.MaxReadings, 16) is refused as a too-deep one
// is, in both languages: the scan cannot count it, and a refusal is safe.
// Each `{} / ( / x /` line leaves one more reading, with one more open
// parenthesis.
func TestNestingReadingsRefused(t *testing.T) {
	src := strings.Repeat("{} / ( / x /\n", 12) + "export default 1"
	for _, lang := range []airlock.Language{airlock.TypeScript, airlock.JavaScript} {
		res := runOpts(t, src, airlock.Options{Language: lang})
		wantStatus(t, res, airlock.StatusLinkError)
		if res.Error.Name != "SyntaxError" || !strings.Contains(res.Error.Message, "cannot be checked for nesting") || res.Error.Line < 1 {
			t.Errorf("%v: %+v", lang, res.Error)
		}
	}
	if ds := airlock.ValidateCode(strings.Repeat("{} / ( / x /\n", 12)+"return 1", airlock.ExecutorOptions{}); len(ds) == 0 || ds[0].Rule != "nesting_depth" || strings.Contains(ds[0].Fix, "levels") {
		t.Errorf("ValidateCode: %+v", ds)
	}
}

package airlock

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/hostwork"
	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/airlockrun/airlock/internal/session"
	"github.com/airlockrun/airlock/internal/source"
)

// DiagnosticSeverity says whether a diagnostic blocks a run.
type DiagnosticSeverity string

const (
	DiagnosticError   DiagnosticSeverity = "ERROR"   // blocks the run
	DiagnosticWarning DiagnosticSeverity = "WARNING" // reported, does not block
	DiagnosticInfo    DiagnosticSeverity = "INFO"    // reported, does not block
)

// Diagnostic is a finding of a validation rule.
//
// The rules: code_non_empty, syntax_valid, max_operations_valid,
// timeout_valid, import_allowed, static_import_in_script_mode and
// reserved_identifier (identifiers that start with __smol_ belong to the
// executor), code_size (the code is longer than MaxSourceBytes, refused
// before anything reads it), nesting_depth (the code nests deeper than 1000 levels of
// brackets or nested expressions, refused before it is parsed; the location
// is the token that went too deep) and options_valid are errors;
// forbidden_global_access (a global such as process, require, fetch or
// setTimeout that the sandbox does not have, named by the step or one of
// its functions and not declared by it: reported once, where first used)
// is a warning; log_budget_too_small (MaxLogBytes below the default) is
// information.
//
// The engine that runs the step answers the rules: it compiles the step
// without running it and reports what it declares and refers to. A step it
// cannot compile is read as TypeScript: its types are erased and the rules
// apply to what remains, with locations in the code as written; a syntax
// error is then esbuild's. Only the first static import of a step is
// reported.
type Diagnostic struct {
	Rule     string             `json:"rule"`
	Severity DiagnosticSeverity `json:"severity"`
	Message  string             `json:"message"`
	// Location is the 1-based line and column in the code, nil when the
	// finding has no place.
	Location *Location `json:"location,omitempty"`
	Fix      string    `json:"fix,omitempty"`
}

// Location is a place in a step's code; both numbers are 1-based, the
// column counts characters.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// PreparedProgram is a step after validation.
type PreparedProgram struct {
	OriginalCode string
	// TransformedCode is the script the executor evaluates: the step as it
	// was written, or, when it is TypeScript, with its types erased. Empty
	// when a diagnostic is an error. The engine counts the loops and keeps
	// the declarations; nothing else is added.
	TransformedCode string
	Diagnostics     []Diagnostic

	smap *source.StepMap // TypeScript erased: positions in the step
}

// HasErrors reports whether a diagnostic blocks the run.
func (p *PreparedProgram) HasErrors() bool {
	for _, d := range p.Diagnostics {
		if d.Severity == DiagnosticError {
			return true
		}
	}
	return false
}

// ValidateCode runs the validation rules over a step's code and the
// options, without running anything. It takes at most about the step's
// Timeout (opts.Timeout, default 10 s): a step the engine or the erasure
// of its types cannot finish in that time gets a syntax_valid error; a
// step past MaxSourceBytes is refused unread (code_size).
func ValidateCode(code string, opts ExecutorOptions) []Diagnostic {
	return PrepareProgram(code, opts).Diagnostics
}

// PrepareProgram validates a step and, when no diagnostic is an error,
// gives the script the executor evaluates. Its time is bounded as
// ValidateCode's.
func PrepareProgram(code string, opts ExecutorOptions) *PreparedProgram {
	return prepare(code, opts)
}

func prepare(code string, opts ExecutorOptions) *PreparedProgram {
	// A validation has the step's time (Timeout, default 10 s), as an
	// executor's does: the engine's compile of a step can take long (it
	// grows faster than the step), and the host's erasure of its types is
	// abandoned at the end of it.
	d := opts.Timeout
	if d < time.Millisecond {
		d = defaultStepTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return prepareWith(code, opts, ctx.Done(), func(js string, sloppy bool) (*engine.Inspection, error) {
		return engine.InspectStepContext(ctx, js, sloppy)
	})
}

// prepareWith prepares a step with the engine's inspection (a pooled VM's,
// or a session's, which keeps the compiled step for its run). When stop
// closes, the host's work for it (its scan, its erasure) is abandoned and
// the step gets an error diagnostic; the caller reports the stop instead.
func prepareWith(code string, opts ExecutorOptions, stop <-chan struct{}, inspect func(js string, sloppy bool) (*engine.Inspection, error)) *PreparedProgram {
	p := &PreparedProgram{OriginalCode: code, Diagnostics: optionDiagnostics(opts)}
	js := code
	sloppyOK := func(js string) bool {
		if opts.Sloppy { // its error is one of sloppy code already
			return false
		}
		in, err := inspect(js, true)
		return err == nil && in.Err == ""
	}
	ds, erased, smap := stepDiagnostics(code, !opts.Sloppy, opts.AuthorizedImports, stop, func(js string) (*engine.Inspection, error) { return inspect(js, opts.Sloppy) }, sloppyOK)
	if erased != "" {
		js, p.smap = erased, smap
	}
	for _, d := range ds {
		nd := Diagnostic{Rule: d.rule, Severity: d.severity, Message: d.message, Fix: d.fix}
		if d.line > 0 {
			l, c := d.line, d.col
			if d.mapped {
				l, c = p.position(l, c)
			}
			nd.Location = &Location{Line: l, Column: c}
		}
		p.Diagnostics = append(p.Diagnostics, nd)
	}
	if p.HasErrors() {
		return p
	}
	p.TransformedCode = js
	return p
}

// reservedPrefix starts the executor's own identifiers; a step may not
// use one.
const reservedPrefix = session.ReservedPrefix

// forbiddenGlobals are the names of host capabilities the sandbox does not
// have: a step that names one as a global gets a warning, since it will
// fail.
var forbiddenGlobals = map[string]bool{
	"process": true, "require": true, "module": true, "exports": true, "global": true, "fetch": true,
	"window": true, "document": true, "Deno": true, "Bun": true, "XMLHttpRequest": true, "WebSocket": true,
	"importScripts": true, "__dirname": true, "__filename": true, "setTimeout": true, "setInterval": true,
	"setImmediate": true, "clearTimeout": true, "clearInterval": true, "eval": true,
}

// finding is a diagnostic of the code rules; mapped: its position is in
// the erased code, to be mapped to the step.
type finding struct {
	rule, message, fix string
	severity           DiagnosticSeverity
	line, col          int
	mapped             bool
}

// stepDiagnostics applies the rules on a step's code. The engine that runs
// the step compiles it without running it and says what it declares and
// refers to (engine.InspectStep): no second parser reads it. A step the
// engine cannot compile is read as TypeScript: erased reports the code
// that runs instead, whose positions smap maps back; but not a strict step
// that compiles as sloppy code (sloppyOK), which is JavaScript with an
// error of strict mode, not TypeScript (TypeScript's syntax is an error in
// both): the engine's error stands; and a strict step's TypeScript is
// erased as strict code, so that what strict mode forbids in it is an
// error, not code esbuild prints otherwise. The host's own work on a long step
// (its scan, its erasure) is abandoned when stop closes.
func stepDiagnostics(code string, strict bool, allowed []string, stop <-chan struct{}, inspect func(string) (*engine.Inspection, error), sloppyOK func(string) bool) (ds []finding, erased string, smap *source.StepMap) {
	// Bounded first: nothing below reads more than MaxSourceBytes.
	if len(code) > MaxSourceBytes {
		return []finding{{rule: "code_size", severity: DiagnosticError,
			message: fmt.Sprintf("the code is %d bytes, past the bound of %d bytes for one step (MaxSourceBytes)", len(code), MaxSourceBytes),
			fix:     "write a shorter step: split the work into several steps"}}, "", nil
	}
	if strings.TrimSpace(code) == "" {
		return []finding{{rule: "code_non_empty", severity: DiagnosticError, message: "the code is empty",
			fix: "write the code to run"}}, "", nil
	}
	stopped := []finding{{rule: "syntax_valid", severity: DiagnosticError,
		message: "the code could not be validated in the step's time", fix: "make the code smaller"}}
	// No real step nests this deep; esbuild recurses on the Go stack. A
	// long step is scanned through hostwork, out of the stop's way.
	var e *nesting.Error
	if len(code) <= source.InlineBytes {
		e = nesting.Check(code)
	} else if !hostwork.Do(stop, "scan", len(code), func() { e = nesting.Check(code) }) {
		return stopped, "", nil
	}
	if e != nil {
		fix := fmt.Sprintf("nest at most %d levels: split deep expressions into named steps", nesting.Max)
		if e.Ambiguous {
			fix = "put regular expressions and divisions after a semicolon or in parentheses, or split the code into smaller steps"
		}
		return []finding{{rule: "nesting_depth", severity: DiagnosticError, message: e.Error(), line: e.Line, col: e.Column,
			fix: fix}}, "", nil
	}
	// The engine failed to inspect the step: an error of the sandbox, not a
	// syntax error of the code.
	uncompiled := func(err error) []finding {
		select {
		case <-stop: // the compile was stopped with the validation
			return stopped
		default:
		}
		return []finding{{rule: "syntax_valid", severity: DiagnosticError,
			message: fmt.Sprintf("the code could not be compiled: %v", err), fix: "make the code smaller"}}
	}
	in, err := inspect(code)
	if err != nil {
		return uncompiled(err), "", nil
	}
	mapped := false
	src := code
	if in.Err != "" && !in.Import && !sloppyOK(code) {
		// Not JavaScript: TypeScript, erased as airlock.Run erases it, is
		// validated and run in its place, with positions in the step.
		js, m, lf := source.EraseStepUntil(stop, code, strict)
		if lf == source.Stopped {
			return stopped, "", nil
		}
		if lf != nil {
			return []finding{{rule: "syntax_valid", severity: DiagnosticError, message: lf.Message,
				line: lf.Line, col: lf.Col, fix: "fix the syntax error"}}, "", nil
		}
		if in, err = inspect(js); err != nil {
			return uncompiled(err), "", nil
		}
		src, erased, smap, mapped = js, js, m, true
	}
	switch {
	case in.Import:
		fix := "remove the import"
		if slices.Contains(allowed, in.ImportModule) {
			fix = fmt.Sprintf("use a dynamic import instead: const m = await import(%q)", in.ImportModule)
		}
		return []finding{{rule: "static_import_in_script_mode", severity: DiagnosticError,
			message: fmt.Sprintf("static import of %q: code runs as a script, where static imports are not allowed", in.ImportModule),
			line:    in.Line, col: in.Column, mapped: mapped, fix: fix}}, erased, smap
	case in.Err != "":
		return []finding{{rule: "syntax_valid", severity: DiagnosticError, message: in.Err,
			line: in.Line, col: in.Column, mapped: mapped, fix: "fix the syntax error"}}, erased, smap
	}
	reserved := map[string]bool{}
	// Declarations of reserved names, to be placed where first written.
	type unplaced struct {
		at   int // in ds
		name string
	}
	var decls []unplaced
	for _, it := range in.Items {
		at := func(f finding) finding {
			f.line, f.col, f.mapped = it.Line, it.Column, mapped
			return f
		}
		switch {
		case it.Kind == engine.ImportCall && !it.Literal:
			ds = append(ds, at(finding{rule: "import_allowed", severity: DiagnosticError,
				message: "a dynamic import must name its module with a string literal", fix: allowedFix(allowed)}))
		case it.Kind == engine.ImportCall && !slices.Contains(allowed, it.Name):
			ds = append(ds, at(finding{rule: "import_allowed", severity: DiagnosticError,
				message: fmt.Sprintf("import of %q is not allowed", it.Name), fix: allowedFix(allowed)}))
		case it.Kind == engine.ImportCall:
		case strings.HasPrefix(it.Name, reservedPrefix) && !reserved[it.Name]:
			reserved[it.Name] = true
			f := finding{rule: "reserved_identifier", severity: DiagnosticError,
				message: fmt.Sprintf("identifiers that start with %s are reserved: %s", reservedPrefix, it.Name),
				fix:     "rename the identifier"}
			if it.Kind == engine.GlobalRef {
				f = at(f)
			} else {
				// The engine keeps no place for a declaration: the first
				// place the name is written (below).
				f.mapped = mapped
				decls = append(decls, unplaced{len(ds), it.Name})
			}
			ds = append(ds, f)
		case it.Kind == engine.GlobalRef && forbiddenGlobals[it.Name]:
			ds = append(ds, at(finding{rule: "forbidden_global_access", severity: DiagnosticWarning,
				message: fmt.Sprintf("%s is not available in the sandbox", it.Name), fix: fixFor(it.Name)}))
		}
	}
	if len(decls) > 0 {
		names := make(map[string]bool, len(decls))
		for _, d := range decls {
			names[d.name] = true
		}
		first := firstWords(src, names)
		for _, d := range decls {
			ds[d.at].line, ds[d.at].col = first[d.name][0], first[d.name][1]
		}
	}
	// In the order of the code; those without a place last.
	slices.SortStableFunc(ds, func(a, b finding) int {
		if (a.line == 0) != (b.line == 0) {
			return cmp.Compare(b.line, a.line)
		}
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	return ds, erased, smap
}

// firstWords gives, for each of names, the 1-based line and column (in
// characters) of its first occurrence in src as a word of its own; a name
// that does not occur is absent (0, 0). It reads src once: a place found
// for each name by a search of its own (firstWord, as it was) made a step
// that declares tens of thousands of reserved names take minutes of the
// host's time, out of reach of the step's.
func firstWords(src string, names map[string]bool) map[string][2]int {
	isIdent := func(c byte) bool {
		return c == '_' || c == '$' || c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	out := make(map[string][2]int, len(names))
	line := 1
	col, colAt := 1, 0 // the column of byte colAt, on the current line
	for i := 0; i < len(src) && len(out) < len(names); {
		switch c := src[i]; {
		case c == '\n':
			line, col, colAt = line+1, 1, i+1
			i++
		case !isIdent(c):
			i++
		default:
			j := i + 1
			for j < len(src) && isIdent(src[j]) {
				j++
			}
			if w := src[i:j]; names[w] {
				if _, seen := out[w]; !seen {
					col += utf8.RuneCountInString(src[colAt:i])
					colAt = i
					out[w] = [2]int{line, col}
				}
			}
			i = j
		}
	}
	return out
}

func fixFor(name string) string {
	switch name {
	case "setTimeout", "setInterval", "setImmediate", "clearTimeout", "clearInterval":
		return "wait through a tool the host provides"
	case "require":
		return "use a dynamic import of an authorized module"
	case "eval":
		return "write the code directly"
	}
	return "use the tools and variables the host provides"
}

func allowedFix(allowed []string) string {
	if len(allowed) == 0 {
		return "no module may be imported; do without the import"
	}
	return "import only one of: " + strings.Join(allowed, ", ")
}

// position maps a line and column of the evaluated script to the step.
func (p *PreparedProgram) position(line, col int) (int, int) {
	return p.smap.Position(line, col)
}

// optionDiagnostics are the rules on the options.
func optionDiagnostics(o ExecutorOptions) []Diagnostic {
	var ds []Diagnostic
	bad := func(rule, format string, args ...any) {
		ds = append(ds, Diagnostic{Rule: rule, Severity: DiagnosticError, Message: fmt.Sprintf(format, args...),
			Fix: "correct the executor options"})
	}
	if o.MaxOperations < 0 {
		bad("max_operations_valid", "MaxOperations must be at least 1 (0 for the default), got %d", o.MaxOperations)
	}
	if o.Timeout < 0 || (o.Timeout > 0 && o.Timeout < time.Millisecond) {
		bad("timeout_valid", "Timeout must be at least 1ms (0 for the default), got %s", o.Timeout)
	}
	switch o.RunConcurrency {
	case "", RunReject, RunQueue:
	default:
		bad("options_valid", "RunConcurrency must be %q or %q, got %q", RunReject, RunQueue, o.RunConcurrency)
	}
	if o.MaxQueuedRuns < 0 {
		bad("options_valid", "MaxQueuedRuns must be at least 0, got %d", o.MaxQueuedRuns)
	}
	for _, s := range o.AuthorizedImports {
		if s == "" {
			bad("options_valid", "AuthorizedImports must not hold an empty name")
		}
	}
	if o.MaxLogBytes < 0 || (o.MaxLogBytes > 0 && o.MaxLogBytes < 1024) {
		bad("options_valid", "MaxLogBytes must be at least 1024 (0 for the default), got %d", o.MaxLogBytes)
	}
	for _, l := range o.CollectConsoleLevels {
		switch l {
		case LevelLog, LevelInfo, LevelWarn, LevelError:
		default:
			bad("options_valid", "CollectConsoleLevels may hold log, info, warn and error, got %q", l)
		}
	}
	if o.MemoryLimitBytes < 0 {
		bad("options_valid", "MemoryLimitBytes must be positive (0 for the default), got %d", o.MemoryLimitBytes)
	}
	if o.MaxLogBytes > 0 && o.MaxLogBytes < defaultMaxLogBytes && len(ds) == 0 {
		ds = append(ds, Diagnostic{Rule: "log_budget_too_small", Severity: DiagnosticInfo,
			Message: fmt.Sprintf("MaxLogBytes of %d is below the recommended %d: long output will be truncated", o.MaxLogBytes, defaultMaxLogBytes),
			Fix:     "raise MaxLogBytes"})
	}
	return ds
}

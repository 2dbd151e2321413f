package airlock

import (
	"fmt"
	"time"

	"github.com/airlockrun/airlock/internal/instrument"
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
// executor), nesting_depth (the code nests deeper than 1000 levels of
// brackets or nested expressions, refused before it is parsed; the location
// is the token that went too deep) and options_valid are errors;
// forbidden_global_access (a name such as process, require, fetch or
// setTimeout that the sandbox does not have) is a warning;
// log_budget_too_small (MaxLogBytes below the default) is information.
//
// A step that is not JavaScript is read as TypeScript: its types are
// erased and the rules apply to what remains, with locations in the code
// as written; a syntax error is then esbuild's.
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
// options, without running anything.
func ValidateCode(code string, opts ExecutorOptions) []Diagnostic {
	return PrepareProgram(code, opts).Diagnostics
}

// PrepareProgram validates a step and, when no diagnostic is an error,
// gives the script the executor evaluates.
func PrepareProgram(code string, opts ExecutorOptions) *PreparedProgram {
	return prepare(code, opts)
}

func prepare(code string, opts ExecutorOptions) *PreparedProgram {
	p := &PreparedProgram{OriginalCode: code, Diagnostics: optionDiagnostics(opts)}
	iopts := instrument.Options{AuthorizedImports: opts.AuthorizedImports}
	prog := instrument.Prepare(code, iopts)
	js := code
	if syntaxOnly(prog.Diagnostics) {
		// Not JavaScript: TypeScript, erased as airlock.Run erases it, is
		// validated and run in its place, with positions in the step.
		erased, smap, lf := source.EraseStep(code)
		if lf != nil {
			for i, d := range prog.Diagnostics {
				if d.Rule == "syntax_valid" {
					prog.Diagnostics[i].Message, prog.Diagnostics[i].Line, prog.Diagnostics[i].Column = lf.Message, lf.Line, lf.Col
				}
			}
		} else {
			prog, js, p.smap = instrument.Prepare(erased, iopts), erased, smap
		}
	}
	for _, d := range prog.Diagnostics {
		nd := Diagnostic{Rule: d.Rule, Severity: DiagnosticSeverity(d.Severity), Message: d.Message, Fix: d.Fix}
		if d.Line > 0 {
			l, c := p.position(d.Line, d.Column)
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

// syntaxOnly reports whether the one error of the rules is a syntax error.
func syntaxOnly(ds []instrument.Diagnostic) bool {
	syntax := false
	for _, d := range ds {
		if d.Severity == instrument.Error {
			if d.Rule != "syntax_valid" {
				return false
			}
			syntax = true
		}
	}
	return syntax
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

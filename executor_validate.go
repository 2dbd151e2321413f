package airlock

import (
	"fmt"
	"time"

	"github.com/airlockrun/airlock/internal/instrument"
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
// instrumentation), nesting_depth (the code nests deeper than 1000 levels of
// brackets or nested expressions, refused before it is parsed; the location
// is the token that went too deep), transform_valid and options_valid are
// errors;
// forbidden_global_access (a name such as process, require, fetch or
// setTimeout that the sandbox does not have) is a warning;
// log_budget_too_small (MaxLogBytes below the default) is information.
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

// PreparedProgram is a step after validation and instrumentation.
type PreparedProgram struct {
	OriginalCode string
	// TransformedCode is the script the executor evaluates: the step,
	// with its loop guards and its top-level declarations made global,
	// inside the async function that runs it. Empty when a diagnostic is an
	// error.
	TransformedCode string
	Diagnostics     []Diagnostic

	prog   *instrument.Program
	prefix int // length of the script before the step's first line
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
// instruments it.
func PrepareProgram(code string, opts ExecutorOptions) *PreparedProgram {
	return prepare(code, opts)
}

func prepare(code string, opts ExecutorOptions) *PreparedProgram {
	p := &PreparedProgram{OriginalCode: code, Diagnostics: optionDiagnostics(opts)}
	prog := instrument.Prepare(code, instrument.Options{AuthorizedImports: opts.AuthorizedImports})
	for _, d := range prog.Diagnostics {
		nd := Diagnostic{Rule: d.Rule, Severity: DiagnosticSeverity(d.Severity), Message: d.Message, Fix: d.Fix}
		if d.Line > 0 {
			nd.Location = &Location{Line: d.Line, Column: d.Column}
		}
		p.Diagnostics = append(p.Diagnostics, nd)
	}
	p.prog = prog
	if p.HasErrors() || prog.Body == "" {
		return p
	}
	p.TransformedCode = code
	return p
}

// position maps a line and column of the evaluated script to the step.
func (p *PreparedProgram) position(line, col int) (int, int) {
	return line, col
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

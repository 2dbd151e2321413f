// Package instrument reads the code of the agent's code mode with the
// sobek parser, once: whether it parses (Parse), which calls of
// asynchronous functions a step makes (AsyncCalls), where it throws
// (Throws), its last expression (Completion) and whether it is a module
// (ModuleSyntax). The executor's validation rules are the engine's now
// (engine.InspectStep): nothing here validates or rewrites a step.
package instrument

import (
	"reflect"
	"regexp"
	"strings"

	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/airlockrun/airlock/internal/source"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/parser"
)

// Program is code parsed once for the readers of this package (AsyncCalls,
// Throws, Completion, ModuleSyntax); nil is code that does not parse, of
// which each reader finds nothing.
type Program struct {
	code string
	prog *ast.Program
}

// Parse parses code as a JavaScript module (top-level await allowed); nil
// when it does not parse, nests too deeply to be parsed safely, is longer
// than nesting.MaxRecovering (64 KiB), or, longer than 4 KiB, is not
// JavaScript to esbuild (parseModule says why).
func Parse(code string) *Program {
	prog := parseModule(code)
	if prog == nil {
		return nil
	}
	return &Program{code: code, prog: prog}
}

// parseModule parses code as an ES module (top-level await allowed), its
// for-await loops read as for-of; nil when the code does not parse, nests
// too deeply to be parsed safely (the run's own check reports it), is
// longer than nesting.MaxRecovering, or, past checkedFrom bytes, is not
// JavaScript to esbuild.
//
// The parser goes on after a syntax error, and its recovery reads what no
// scan of the grammar bounds (the package doc of internal/nesting): so it
// reads the code with the text of every literal and comment blanked
// (nesting.BlankLiterals), at most MaxRecovering bytes of it, and past
// checkedFrom only code that esbuild, which stops at its first error,
// reads as JavaScript. The readers here use positions and names, never a
// literal's text. The parser panics on some malformed input
// (`let[...A(`); that is a syntax error.
func parseModule(code string) (prog *ast.Program) {
	if len(code) > nesting.MaxRecovering {
		return nil
	}
	blank, ok := nesting.BlankLiterals(code)
	if !ok || len(code) > checkedFrom && !source.ParsesAsJS(code) {
		return nil
	}
	defer func() {
		if recover() != nil {
			prog = nil
		}
	}()
	prog, err := parser.ParseFile(nil, "", forAwait(blank), parser.IgnoreRegExpErrors, parser.WithDisableSourceMaps, parser.IsModule)
	if err != nil {
		return nil
	}
	return prog
}

var forAwaitRE = regexp.MustCompile(`\bfor(\s+)await(\s*)\(`)

// checkedFrom is the length from which esbuild checks code before sobek
// reads it (an esbuild transform costs about 0.4 ms, as much as the rest
// of an execution). Shorter code sobek reads blanked whatever its errors:
// its recovery then nests at most a few hundred levels past what the scan
// allows, its stack under 10 MB; its worst known work is an error per pair
// of nested duplicate labels, which the scan bounds at 500 levels
// (`a:{a:{…`, 125,000 errors, 80 ms and 16 MB at 1.5 KB), and esbuild
// refuses past 4 KiB.
const checkedFrom = 4 << 10

// forAwait blanks the await of for-await loops, which the parser does not
// know, keeping every offset: the loop is then a for-of, as far as the
// readers here care. (A match inside a string or comment only changes
// what the parser sees of it.)
func forAwait(code string) string {
	return forAwaitRE.ReplaceAllStringFunc(code, func(m string) string {
		return strings.Replace(m, "await", "     ", 1)
	})
}

var nodeType = reflect.TypeFor[ast.Node]()

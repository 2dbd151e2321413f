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
// than nesting.MaxRecovering (64 KiB), or is not JavaScript to esbuild
// (parseModule says why).
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
// longer than nesting.MaxRecovering, or is not JavaScript to esbuild.
//
// The parser goes on after a syntax error, and its recovery reads what no
// scan of the grammar bounds (the package doc of internal/nesting): so it
// reads only code that esbuild, which stops at its first error, reads as
// JavaScript, with the text of every literal and comment blanked
// (nesting.BlankLiterals), and at most MaxRecovering bytes of it. The
// readers here use positions and names, never a literal's text. The parser
// panics on some malformed input (`let[...A(`); that is a syntax error.
func parseModule(code string) (prog *ast.Program) {
	if len(code) > nesting.MaxRecovering {
		return nil
	}
	blank, ok := nesting.BlankLiterals(code)
	if !ok || !source.ParsesAsJS(code) {
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

// Package instrument reads the code of the agent's code mode with the
// sobek parser: which calls of asynchronous functions a step makes
// (AsyncCalls), where it throws (Throws), its last expression
// (Completion), and whether it parses (Parses). The executor's validation
// rules are the engine's now (engine.InspectStep): nothing here validates
// or rewrites a step.
package instrument

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/parser"
)

// parseFile parses a script, or a module. The parser panics on some
// malformed input (`let[...A(`); that is a syntax error.
func parseFile(src string, module bool) (prog *ast.Program, err error) {
	defer func() {
		if p := recover(); p != nil {
			prog, err = nil, fmt.Errorf("the code does not parse (%v)", p)
		}
	}()
	opts := []parser.Option{parser.WithDisableSourceMaps}
	if module {
		opts = append(opts, parser.IsModule)
	}
	return parser.ParseFile(nil, "", src, parser.IgnoreRegExpErrors, opts...)
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

package instrument

import (
	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/grafana/sobek/ast"
)

// Completion finds the expression whose value a module's code would have as
// a script's completion value: the expression of its last top-level
// statement, when that statement is an expression statement. It reports
// the expression's byte offsets in code, and false when there is none, when
// the module already has a default export, or when the code does not parse
// (then the engine reports the error), or nests too deeply to be parsed
// safely (then the run's own check reports it).
func Completion(code string) (start, end int, ok bool) {
	if nesting.Check(code) != nil {
		return 0, 0, false
	}
	prog, err := parseFile(forAwait(code), true)
	if err != nil || prog == nil || len(prog.Body) == 0 {
		return 0, 0, false
	}
	for _, s := range prog.Body {
		if e, isExport := s.(*ast.ExportDeclaration); isExport && e.IsDefault {
			return 0, 0, false
		}
		if e, isExport := s.(*ast.ExportDeclaration); isExport && e.NamedExports != nil {
			for _, x := range e.NamedExports.ExportsList {
				if x.Alias == "default" {
					return 0, 0, false
				}
			}
		}
	}
	last, isExpr := prog.Body[len(prog.Body)-1].(*ast.ExpressionStatement)
	if !isExpr {
		return 0, 0, false
	}
	start, end = int(last.Idx0())-1, int(last.Idx1())-1
	if start < 0 || end > len(code) || start >= end {
		return 0, 0, false
	}
	return start, end, true
}

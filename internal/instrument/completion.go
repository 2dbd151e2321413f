package instrument

import (
	"strings"

	"github.com/grafana/sobek/ast"
)

// Completion finds the expression whose value a module's code would have as
// a script's completion value: the expression of its last top-level
// statement, when that statement is an expression statement. It reports
// the expression's byte offsets in code, and false when there is none, when
// the module already has a default export, or when the code does not parse
// (then the engine reports the error), or nests too deeply to be parsed
// safely (then the run's own check reports it).
func (p *Program) Completion() (start, end int, ok bool) {
	if p == nil || len(p.prog.Body) == 0 {
		return 0, 0, false
	}
	code, prog := p.code, p.prog
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
	// The parser leaves the parentheses around a statement's leading
	// expression out of the statement: ({a, b}) starts at the brace,
	// (async () => 5)() at async. Between the statement before and the
	// expression there is nothing but space, comments, semicolons and
	// those parentheses; the statement starts at the first of them, and
	// as many closing ones as the expression lacks follow its end.
	prev := 0
	if n := len(prog.Body); n > 1 {
		prev = int(prog.Body[n-2].Idx1()) - 1
	}
	opens, first := 0, -1
	for i := skipBlank(code, prev, start); i < start; i = skipBlank(code, i+1, start) {
		switch code[i] {
		case '(':
			if first < 0 {
				first = i
			}
			opens++
		case ';':
		default:
			return start, end, true // not what the parser can have skipped
		}
	}
	if first < 0 {
		return start, end, true
	}
	start = first
	for depth := parenBalance(code[start:end]); depth > 0 && end < len(code); depth-- {
		i := skipBlank(code, end, len(code))
		if i >= len(code) || code[i] != ')' {
			break
		}
		end = i + 1
	}
	return start, end, true
}

// skipBlank returns the first offset at or after i, before limit, that is
// not space or a comment.
func skipBlank(code string, i, limit int) int {
	for i < limit {
		switch {
		case code[i] == ' ' || code[i] == '\t' || code[i] == '\n' || code[i] == '\r':
			i++
		case strings.HasPrefix(code[i:], "//"):
			j := strings.IndexByte(code[i:], '\n')
			if j < 0 {
				return limit
			}
			i += j + 1
		case strings.HasPrefix(code[i:], "/*"):
			j := strings.Index(code[i+2:], "*/")
			if j < 0 {
				return limit
			}
			i += j + 4
		default:
			return i
		}
	}
	return limit
}

// parenBalance is how many more '(' than ')' s has, outside strings,
// templates and comments (a rough count: regular expressions are not
// told apart).
func parenBalance(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(':
			n++
		case ')':
			n--
		case '"', '\'', '`':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '/':
			if j := skipBlank(s, i, len(s)); j != i {
				i = j - 1
			}
		}
	}
	return n
}

// ModuleSyntax reports whether code, which parses, has an import or an
// export declaration at its top level: then it is a module, as Node's
// module detection decides; else a script. Code that does not parse is
// not a module.
func (p *Program) ModuleSyntax() bool {
	if p == nil {
		return false
	}
	for _, s := range p.prog.Body {
		switch s.(type) {
		case *ast.ImportDeclaration, *ast.ExportDeclaration:
			return true
		}
	}
	return false
}

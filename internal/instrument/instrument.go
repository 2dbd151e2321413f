// Package instrument validates a code step of the executor: it parses the
// step and reports what the executor's validation rules find (syntax,
// static and dynamic imports, names of host capabilities the sandbox does
// not have, reserved identifiers). The engine itself counts a step's loops
// and keeps its declarations: nothing is rewritten.
//
// A step is the body of an async function (top-level await and return are
// allowed). Identifiers that start with Reserved belong to the executor; a
// step that uses one is refused.
//
// The package also serves the agent's code mode (AsyncCalls, Throws,
// Completion, Parses) and the REPL's input reader.
package instrument

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/file"
	"github.com/grafana/sobek/parser"
)

// Reserved is the prefix of the executor's own identifiers.
const Reserved = "__smol_"

// Severity of a diagnostic.
type Severity string

const (
	Error   Severity = "ERROR"
	Warning Severity = "WARNING"
	Info    Severity = "INFO"
)

// Diagnostic is one finding of a validation rule. Line and Column are
// 1-based (the column counts characters); zero when the finding has no
// place.
type Diagnostic struct {
	Rule     string
	Severity Severity
	Message  string
	Line     int
	Column   int
	Fix      string
}

// Program is a validated step.
type Program struct {
	Source      string // the user's code
	Diagnostics []Diagnostic
}

// Options configure the rules.
type Options struct {
	// AuthorizedImports are the specifiers a dynamic import may name.
	AuthorizedImports []string
}

// HasErrors reports whether a diagnostic is an error.
func (p *Program) HasErrors() bool {
	for _, d := range p.Diagnostics {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// The wrapper the parser sees: the step is the body of an async function,
// on the wrapper's first line.
const (
	wrapOpen  = "(async function(){"
	wrapClose = "\n})"
)

// Forbidden are the identifiers of host capabilities the sandbox does not
// have; a step that names one gets a warning, since it will fail.
var Forbidden = []string{
	"process", "require", "module", "exports", "global", "fetch", "window", "document",
	"Deno", "Bun", "XMLHttpRequest", "WebSocket", "importScripts", "__dirname", "__filename",
	"setTimeout", "setInterval", "setImmediate", "clearTimeout", "clearInterval", "eval",
}

// Prepare validates a step.
func Prepare(code string, opts Options) *Program {
	p := &Program{Source: code}
	if strings.TrimSpace(code) == "" {
		p.add(Diagnostic{Rule: "code_non_empty", Severity: Error, Message: "the code is empty",
			Fix: "write the code to run"})
		return p
	}
	// The parser and the walk below recurse on the Go stack: a step that
	// nests deeper than any real one never reaches them.
	if e := nesting.Check(code); e != nil {
		p.add(Diagnostic{Rule: "nesting_depth", Severity: Error, Message: e.Error(), Line: e.Line, Column: e.Column,
			Fix: fmt.Sprintf("nest at most %d levels: split deep expressions into named steps", nesting.Max)})
		return p
	}
	fn, err := parse(code)
	if err != nil {
		p.syntaxError(code, err, opts)
		return p
	}
	w := &walker{p: p, opts: opts, forbidden: map[string]bool{}}
	for _, n := range Forbidden {
		w.forbidden[n] = true
	}
	for _, st := range fn.Body.List {
		w.node(st)
	}
	return p
}

// parse parses a step as the body of the wrapper function, and returns the
// function. Code that closes the wrapper early (`}) + ({`) is a syntax
// error: it would run outside the function the executor runs it in.
func parse(code string) (*ast.FunctionLiteral, error) {
	src := wrapOpen + forAwait(code) + wrapClose
	prog, err := parseFile(src, false)
	if err != nil {
		return nil, err
	}
	if len(prog.Body) == 1 {
		if st, ok := prog.Body[0].(*ast.ExpressionStatement); ok {
			if fn, ok := st.Expression.(*ast.FunctionLiteral); ok && int(fn.Body.RightBrace) == len(src)-1 {
				return fn, nil
			}
		}
	}
	return nil, errUnbalanced
}

var errUnbalanced = errors.New("unbalanced braces: the code closes the function it runs in")

// parseFile parses a script, or a module. The parser panics on some
// malformed input (FuzzPrepare found `let[...A(`); that is a syntax error.
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
// know, keeping every offset: the loop is then a for-of, as far as the rules
// and the rewrite care. (A match inside a string or comment only changes
// what the parser sees of it.)
func forAwait(code string) string {
	return forAwaitRE.ReplaceAllStringFunc(code, func(m string) string {
		return strings.Replace(m, "await", "     ", 1)
	})
}

func (p *Program) add(d Diagnostic) { p.Diagnostics = append(p.Diagnostics, d) }

// message is a parse error without the parser's file and position prefix.
func message(err error) string {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return list[0].Message
	}
	return err.Error()
}

// syntaxError reports a step that does not parse. A static import is the
// likeliest cause in a script, so that is told apart.
func (p *Program) syntaxError(code string, err error, opts Options) {
	if mod, merr := parseFile(code, true); merr == nil && len(mod.ImportEntries) > 0 {
		for _, imp := range mod.ImportEntries {
			spec := string(imp.ModuleSpecifier)
			if imp.FromClause != nil {
				spec = string(imp.FromClause.ModuleSpecifier)
			}
			line, col := lineCol(code, int(imp.Idx)-1)
			fix := "remove the import"
			if slices.Contains(opts.AuthorizedImports, spec) {
				fix = fmt.Sprintf("use a dynamic import instead: const m = await import(%q)", spec)
			}
			p.add(Diagnostic{Rule: "static_import_in_script_mode", Severity: Error,
				Message: fmt.Sprintf("static import of %q: code runs as a script, where static imports are not allowed", spec),
				Line:    line, Column: col, Fix: fix})
		}
		return
	}
	d := Diagnostic{Rule: "syntax_valid", Severity: Error, Message: message(err), Fix: "fix the syntax error"}
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		d.Line, d.Column = list[0].Position.Line, list[0].Position.Column
		if d.Line == 1 {
			d.Column -= len(wrapOpen)
		}
		if last := strings.Count(code, "\n") + 1; d.Line > last { // the wrapper's closing line
			d.Line = last
			d.Column = utf8.RuneCountInString(code[strings.LastIndexByte(code, '\n')+1:]) + 1
		}
		d.Column = max(d.Column, 1)
	}
	p.add(d)
}

// lineCol is the 1-based line and column of a byte offset in s.
func lineCol(s string, off int) (line, col int) {
	off = min(max(off, 0), len(s))
	start := strings.LastIndexByte(s[:off], '\n') + 1
	return strings.Count(s[:off], "\n") + 1, utf8.RuneCountInString(s[start:off]) + 1
}

// walker finds what the rules need.
type walker struct {
	p         *Program
	opts      Options
	forbidden map[string]bool
	depth     int // nesting of functions inside the step
}

func (w *walker) offset(idx file.Idx) int { return int(idx) - 1 - len(wrapOpen) }

func (w *walker) at(idx file.Idx) (int, int) { return lineCol(w.p.Source, w.offset(idx)) }

// pattern walks a binding target: its names, defaults and computed keys.
func (w *walker) pattern(t ast.Expression) {
	switch t := t.(type) {
	case *ast.Identifier:
		w.ident(t.Name, t.Idx)
	default:
		w.node(t)
	}
}

// ident applies the identifier rules to a name in the step.
func (w *walker) ident(name any, idx file.Idx) {
	n := fmt.Sprint(name)
	if strings.HasPrefix(n, Reserved) {
		line, col := w.at(idx)
		w.p.add(Diagnostic{Rule: "reserved_identifier", Severity: Error,
			Message: fmt.Sprintf("identifiers that start with %s are reserved: %s", Reserved, n),
			Line:    line, Column: col, Fix: "rename the identifier"})
	}
}

// reference applies the rules for a name read as a variable.
func (w *walker) reference(id *ast.Identifier) {
	w.ident(id.Name, id.Idx)
	if n := string(id.Name); w.forbidden[n] {
		line, col := w.at(id.Idx)
		w.p.add(Diagnostic{Rule: "forbidden_global_access", Severity: Warning,
			Message: fmt.Sprintf("%s is not available in the sandbox", n),
			Line:    line, Column: col, Fix: fixFor(n)})
	}
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

// dynamicImport applies the import rules to import(arg).
func (w *walker) dynamicImport(c *ast.CallExpression) {
	line, col := w.at(c.Callee.Idx0())
	if len(c.ArgumentList) > 0 {
		if s, ok := c.ArgumentList[0].(*ast.StringLiteral); ok {
			spec := string(s.Value)
			if !slices.Contains(w.opts.AuthorizedImports, spec) {
				w.p.add(Diagnostic{Rule: "import_allowed", Severity: Error,
					Message: fmt.Sprintf("import of %q is not allowed", spec), Line: line, Column: col,
					Fix: allowedFix(w.opts.AuthorizedImports)})
			}
			return
		}
	}
	w.p.add(Diagnostic{Rule: "import_allowed", Severity: Error,
		Message: "a dynamic import must name its module with a string literal", Line: line, Column: col,
		Fix: allowedFix(w.opts.AuthorizedImports)})
}

func allowedFix(allowed []string) string {
	if len(allowed) == 0 {
		return "no module may be imported; do without the import"
	}
	return "import only one of: " + strings.Join(allowed, ", ")
}

// node walks any node.
func (w *walker) node(n ast.Node) {
	switch n := n.(type) {
	case nil:
	case *ast.Identifier:
		if n != nil {
			w.reference(n)
		}
	case *ast.VariableStatement:
		w.declared(n.List)
	case *ast.LexicalDeclaration:
		w.declared(n.List)
	case *ast.ForStatement:
		if v, ok := n.Initializer.(*ast.ForLoopInitializerVarDeclList); ok {
			w.declared(v.List)
		} else {
			w.node(n.Initializer)
		}
		w.node(n.Test)
		w.node(n.Update)
		w.node(n.Body)
	case *ast.ForInStatement:
		w.forEach(n.Into, n.Source, n.Body)
	case *ast.ForOfStatement:
		w.forEach(n.Into, n.Source, n.Body)
	case *ast.WhileStatement:
		w.node(n.Test)
		w.node(n.Body)
	case *ast.DoWhileStatement:
		w.node(n.Body)
		w.node(n.Test)
	case *ast.CallExpression:
		if _, ok := n.Callee.(*ast.DynamicImportExpression); ok {
			w.dynamicImport(n)
		} else {
			w.node(n.Callee)
		}
		for _, a := range n.ArgumentList {
			w.node(a)
		}
	case *ast.DotExpression:
		w.node(n.Left)
	case *ast.PrivateDotExpression:
		w.node(n.Left)
	case *ast.PropertyKeyed:
		if n.Computed {
			w.node(n.Key)
		}
		w.node(n.Value)
	case *ast.PropertyShort:
		w.reference(&n.Name)
		w.node(n.Initializer)
	case *ast.MethodDefinition:
		if n.Computed {
			w.node(n.Key)
		}
		w.node(n.Body)
	case *ast.FieldDefinition:
		if n.Computed {
			w.node(n.Key)
		}
		w.depth++
		w.node(n.Initializer)
		w.depth--
	case *ast.MetaProperty, *ast.BranchStatement:
	case *ast.LabelledStatement:
		w.node(n.Statement)
	case *ast.FunctionLiteral:
		if n.Name != nil {
			w.ident(n.Name.Name, n.Name.Idx)
		}
		w.depth++
		w.params(n.ParameterList)
		w.node(n.Body)
		w.depth--
	case *ast.ArrowFunctionLiteral:
		w.depth++
		w.params(n.ParameterList)
		w.node(n.Body)
		w.depth--
	case *ast.ClassLiteral:
		if n.Name != nil {
			w.ident(n.Name.Name, n.Name.Idx)
		}
		w.node(n.SuperClass)
		for _, e := range n.Body {
			w.node(e)
		}
	case *ast.ClassStaticBlock:
		w.depth++
		w.node(n.Block)
		w.depth--
	case *ast.CatchStatement:
		w.node(n.Parameter)
		w.node(n.Body)
	default:
		w.children(n)
	}
}

func (w *walker) params(l *ast.ParameterList) {
	if l == nil {
		return
	}
	w.bindings(l.List)
	w.node(l.Rest)
}

func (w *walker) bindings(list []*ast.Binding) {
	for _, b := range list {
		w.node(b.Target)
		w.node(b.Initializer)
	}
}

// declared walks the bindings of a declaration.
func (w *walker) declared(list []*ast.Binding) {
	for _, b := range list {
		w.node(b.Initializer)
		w.pattern(b.Target)
	}
}

// forEach walks a for-in or for-of loop.
func (w *walker) forEach(into ast.ForInto, source ast.Expression, body ast.Statement) {
	w.forInto(into)
	w.node(source)
	w.node(body)
}

// forInto walks the head of a for-in or for-of loop.
func (w *walker) forInto(into ast.ForInto) {
	switch v := into.(type) {
	case *ast.ForIntoVar:
		w.pattern(v.Binding.Target)
	case *ast.ForDeclaration:
		w.pattern(v.Target)
	case *ast.ForIntoExpression:
		w.node(v.Expression)
	}
}

var nodeType = reflect.TypeFor[ast.Node]()

// children walks the nodes in the fields of n, for the node types that need
// nothing of their own.
func (w *walker) children(n ast.Node) {
	v := reflect.ValueOf(n)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	w.fields(v.Elem())
}

func (w *walker) fields(v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		w.value(v.Field(i))
	}
}

func (w *walker) value(f reflect.Value) {
	switch f.Kind() {
	case reflect.Interface, reflect.Pointer:
		if f.IsNil() {
			return
		}
		if n, ok := f.Interface().(ast.Node); ok {
			w.node(n)
		}
	case reflect.Slice:
		for j := 0; j < f.Len(); j++ {
			w.value(f.Index(j))
		}
	case reflect.Struct:
		if f.CanAddr() && f.Addr().Type().Implements(nodeType) {
			w.node(f.Addr().Interface().(ast.Node))
		} else if f.CanAddr() {
			w.fields(f)
		}
	}
}

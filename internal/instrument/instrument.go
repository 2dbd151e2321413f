// Package instrument prepares a code step of the executor: it parses the
// step, reports what the executor's validation rules find, and rewrites the
// source so that every loop counts its iterations and every top-level
// declaration outlives the step.
//
// A step is the body of an async function (top-level await and return are
// allowed). The rewrite edits the source text at node positions and never
// adds or removes a line break, so the lines of errors in the rewritten code
// are the user's lines; [Program.Position] maps a column back as well.
//
// The rewrite:
//
//   - Each loop body (for, for-in, for-of, for-await, while, do-while) starts
//     with a guard that decrements the run's budget of operations and calls
//     the host once it is spent.
//   - A top-level const, let or class, a var anywhere outside nested
//     functions, becomes an assignment to a global binding of the same name
//     ([Program.Globals] lists them; the executor declares them with var
//     before the step). Functions the next step defines see the same binding,
//     and so do closures made in this step.
//   - A top-level function declaration stays where it is and is also copied
//     to the global of its name when the step starts ([Program.Functions]).
//
// Identifiers that start with Reserved belong to the rewrite; a step that
// uses one is refused.
package instrument

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/file"
	"github.com/grafana/sobek/parser"
	"github.com/grafana/sobek/token"
)

// Reserved is the prefix of the identifiers the rewrite introduces.
const Reserved = "__smol_"

// The identifiers the guard uses: a global lexical counter the host resets
// before each step, and the function that reports the budget spent.
const (
	Counter = Reserved + "ops"
	Fail    = Reserved + "fail"
	// Global is the parameter of the step's function that holds the global
	// object, for copying top-level functions.
	Global = Reserved + "g"
)

// guard is inserted at the start of every loop body.
const guard = "if(--" + Counter + "<0)" + Fail + "();"

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

// Program is a prepared step.
type Program struct {
	Source string // the user's code
	// Body is the rewritten code; empty when a diagnostic is an error.
	Body string
	// Globals are the names the step assigns as globals, sorted.
	Globals []string
	// Functions are the top-level function declarations, copied to the
	// globals of their names when the step starts, in source order.
	Functions   []string
	Diagnostics []Diagnostic

	edits []edit
}

// Options configure the rules.
type Options struct {
	// AuthorizedImports are the specifiers a dynamic import may name.
	AuthorizedImports []string
	// Guards inserts the loop guards; off only to measure their cost.
	Guards bool
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

// edit replaces Source[from:to] with text.
type edit struct {
	from, to int
	text     string
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

// Prepare validates and rewrites a step.
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
	w.topLevel(fn.Body.List)
	if p.HasErrors() {
		return p
	}
	if !p.editsValid() {
		p.add(Diagnostic{Rule: "transform_valid", Severity: Error,
			Message: "the code could not be instrumented", Fix: "simplify the code"})
		return p
	}
	p.Body = p.apply()
	sort.Strings(p.Globals)
	p.Globals = slices.Compact(p.Globals)
	if _, err := parse(p.Body); err != nil {
		p.add(Diagnostic{Rule: "transform_valid", Severity: Error,
			Message: "the code could not be instrumented: " + message(err),
			Fix:     "simplify the statement around the loop or declaration"})
		p.Body = ""
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

// editsValid reports whether the edits are in the source and apart.
func (p *Program) editsValid() bool {
	sort.SliceStable(p.edits, func(i, j int) bool { return p.edits[i].from < p.edits[j].from })
	last := 0
	for _, e := range p.edits {
		if e.from < last || e.to < e.from || e.to > len(p.Source) {
			return false
		}
		last = e.to
	}
	return true
}

// apply returns the source with the edits made.
func (p *Program) apply() string {
	var b strings.Builder
	last := 0
	for _, e := range p.edits {
		b.WriteString(p.Source[last:e.from])
		b.WriteString(e.text)
		last = e.to
	}
	b.WriteString(p.Source[last:])
	return b.String()
}

// Position maps a 1-based line and column of Body, on the line Body's
// first line starts at column offset+1, back to the user's source.
func (p *Program) Position(line, col, offset int) (int, int) {
	if line == 1 {
		col -= offset
	}
	if line < 1 || col < 1 || p.Body == "" {
		return line, max(col, 1)
	}
	// The offset in Body of the position, then back through the edits.
	off := lineStart(p.Body, line)
	if off < 0 {
		return line, col
	}
	for i := 1; i < col && off < len(p.Body); i++ {
		_, n := utf8.DecodeRuneInString(p.Body[off:])
		off += n
	}
	orig, shift := off, 0
	for _, e := range p.edits {
		from := e.from + shift
		if from > off {
			break
		}
		if off < from+len(e.text) {
			orig = e.from
			shift = 0
			break
		}
		shift += len(e.text) - (e.to - e.from)
		orig = off - shift
	}
	return lineCol(p.Source, orig)
}

func lineStart(s string, line int) int {
	off := 0
	for i := 1; i < line; i++ {
		j := strings.IndexByte(s[off:], '\n')
		if j < 0 {
			return -1
		}
		off += j + 1
	}
	return off
}

// walker finds what the rules and the rewrite need.
type walker struct {
	p         *Program
	opts      Options
	forbidden map[string]bool
	depth     int // nesting of functions inside the step
}

func (w *walker) offset(idx file.Idx) int { return int(idx) - 1 - len(wrapOpen) }

func (w *walker) at(idx file.Idx) (int, int) { return lineCol(w.p.Source, w.offset(idx)) }

func (w *walker) insert(idx file.Idx, text string) {
	off := w.offset(idx)
	w.p.edits = append(w.p.edits, edit{off, off, text})
}

func (w *walker) replace(from, to file.Idx, text string) {
	w.p.edits = append(w.p.edits, edit{w.offset(from), w.offset(to), text})
}

// topLevel walks the step's statements, rewriting its declarations.
func (w *walker) topLevel(list []ast.Statement) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.LexicalDeclaration:
			w.declaration(s.Idx, s.Token, s.List)
			continue
		case *ast.ClassDeclaration:
			c := s.Class
			if c.Name != nil {
				name := string(c.Name.Name)
				w.p.Globals = append(w.p.Globals, name)
				w.insert(c.Class, name+"=")
				w.insert(c.Idx1(), ";")
			}
		case *ast.FunctionDeclaration:
			if f := s.Function; f.Name != nil {
				name := string(f.Name.Name)
				w.p.Globals = append(w.p.Globals, name)
				w.p.Functions = append(w.p.Functions, name)
			}
		}
		w.node(s)
	}
}

// declaration turns a var, let or const declaration into assignments to
// the globals it declares. start is the position of the keyword.
func (w *walker) declaration(start file.Idx, tok token.Token, list []*ast.Binding) {
	kw := len(tok.String())
	if start == 0 && len(list) > 0 { // the parser leaves a for head's var unplaced
		w.varKeyword(list[0].Target.Idx0())
		kw = 0
	}
	first := true
	for _, b := range list {
		w.bindingNames(b.Target)
		_, pattern := b.Target.(ast.Pattern)
		if b.Initializer == nil {
			if !pattern && tok != token.VAR {
				w.insert(b.Target.Idx1(), "=void 0") // let x; starts as undefined
			}
		} else if pattern {
			prefix := "("
			if first {
				// A statement must not start with ( or [: the line before
				// could take it as a call or an index.
				prefix = "void 0,("
			}
			w.insert(b.Target.Idx0(), prefix)
			w.insert(b.Initializer.Idx1(), ")")
		}
		first = false
		w.node(b.Initializer)
		w.pattern(b.Target)
	}
	if kw > 0 {
		w.replace(start, start+file.Idx(kw), strings.Repeat(" ", kw))
	}
}

// bindingNames records the names a binding target declares.
func (w *walker) bindingNames(t ast.Expression) {
	switch t := t.(type) {
	case *ast.Identifier:
		w.p.Globals = append(w.p.Globals, string(t.Name))
	case *ast.ArrayPattern:
		for _, e := range t.Elements {
			if e != nil {
				w.bindingNames(e)
			}
		}
		if t.Rest != nil {
			w.bindingNames(t.Rest)
		}
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				w.p.Globals = append(w.p.Globals, string(p.Name.Name))
			case *ast.PropertyKeyed:
				w.bindingNames(p.Value)
			case *ast.SpreadElement:
				w.bindingNames(p.Expression)
			}
		}
		if t.Rest != nil {
			w.bindingNames(t.Rest)
		}
	case *ast.AssignExpression: // a default value
		w.bindingNames(t.Left)
	}
}

// pattern walks the defaults and computed keys of a binding target.
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

// loop inserts the guard at the start of a loop body.
func (w *walker) loop(body ast.Statement) {
	if !w.opts.Guards {
		return
	}
	if b, ok := body.(*ast.BlockStatement); ok {
		w.insert(b.LeftBrace+1, guard)
		return
	}
	start := w.start(body)
	w.p.edits = append(w.p.edits, edit{start, start, "{" + guard})
	end := w.offset(body.Idx1())
	// A statement that ends with a semicolon the node does not include
	// (x++; in `while (c) x++;`) takes it into the block: `do x++; while`
	// must become `do {…x++;} while`.
	src := w.p.Source
	i := skipBlank(src, end, len(src))
	if i < len(src) && src[i] == ';' {
		end = i + 1
	}
	w.p.edits = append(w.p.edits, edit{end, end, "}"})
}

// start is the offset where a statement starts. The parser leaves the
// position of an if statement's keyword unset; it is found before the test.
func (w *walker) start(s ast.Statement) int {
	switch s := s.(type) {
	case *ast.IfStatement:
		if s.If == 0 {
			src := w.p.Source
			i := w.offset(s.Test.Idx0())
			for i > 0 && (src[i-1] == '(' || src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '\n' || src[i-1] == '\r') {
				i--
			}
			if i >= 2 && src[i-2:i] == "if" {
				return i - 2
			}
			return i
		}
	case *ast.LabelledStatement:
		return w.offset(s.Label.Idx)
	}
	return w.offset(s.Idx0())
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
		if w.depth == 0 {
			w.declaration(n.Var, token.VAR, n.List)
			return
		}
		w.bindings(n.List)
	case *ast.ForStatement:
		if v, ok := n.Initializer.(*ast.ForLoopInitializerVarDeclList); ok && w.depth == 0 {
			w.declaration(v.Var, token.VAR, v.List)
		} else {
			w.node(n.Initializer)
		}
		w.node(n.Test)
		w.node(n.Update)
		w.loop(n.Body)
		w.node(n.Body)
	case *ast.ForInStatement:
		w.forEach(n.Into, n.Source, n.Body)
	case *ast.ForOfStatement:
		w.forEach(n.Into, n.Source, n.Body)
	case *ast.WhileStatement:
		w.node(n.Test)
		w.loop(n.Body)
		w.node(n.Body)
	case *ast.DoWhileStatement:
		w.loop(n.Body)
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

// forEach walks a for-in or for-of loop.
func (w *walker) forEach(into ast.ForInto, source ast.Expression, body ast.Statement) {
	w.forInto(into)
	w.node(source)
	w.loop(body)
	w.node(body)
}

// forInto walks the head of a for-in or for-of loop; a var there, outside
// functions, becomes an assignment to the global.
func (w *walker) forInto(into ast.ForInto) {
	switch v := into.(type) {
	case *ast.ForIntoVar:
		if w.depth == 0 {
			w.bindingNames(v.Binding.Target)
			// The keyword precedes the target: "var " is replaced by spaces.
			w.varKeyword(v.Binding.Target.Idx0())
		}
		w.pattern(v.Binding.Target)
	case *ast.ForDeclaration:
		w.pattern(v.Target)
	case *ast.ForIntoExpression:
		w.node(v.Expression)
	}
}

// varKeyword blanks the var keyword before position idx.
func (w *walker) varKeyword(idx file.Idx) {
	off := w.offset(idx)
	src := w.p.Source
	i := strings.LastIndex(src[:off], "var")
	if i < 0 {
		return
	}
	w.p.edits = append(w.p.edits, edit{i, i + 3, "   "})
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

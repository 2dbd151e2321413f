package instrument

import (
	"reflect"
	"sort"

	"github.com/grafana/sobek/ast"
)

// AsyncCalls finds the calls of the named functions whose promise the code
// uses: the operand of an await, an element of what Promise.all,
// Promise.allSettled, Promise.race or Promise.any is given (directly, or in
// a function inside it, as in xs.map(x => f(x))), and the object of a
// .then, .catch or .finally. The host gives those calls a function that
// returns a promise, so that they run concurrently; every other call keeps
// the function that returns its value. A call whose value is read at once
// (f(x).field) is not one of them. The code is an ES module (top-level
// await allowed); AsyncCalls reports the byte offsets in code of the
// callees' identifiers, sorted, and nothing when the code does not parse.
func (p *Program) AsyncCalls(named func(name string) bool) []int {
	if p == nil {
		return nil
	}
	code, prog := p.code, p.prog
	a := &asyncFinder{named: named, direct: map[*ast.CallExpression]bool{}, found: map[int]bool{}}
	a.walk(reflect.ValueOf(prog), 0)
	out := make([]int, 0, len(a.found))
	for off := range a.found {
		if off >= 0 && off < len(code) {
			out = append(out, off)
		}
	}
	sort.Ints(out)
	return out
}

type asyncFinder struct {
	named func(string) bool
	// direct are the calls whose value is read at once: the object of a
	// member access or the callee of a call.
	direct map[*ast.CallExpression]bool
	found  map[int]bool
}

var promiseCombinators = map[string]bool{"all": true, "allSettled": true, "race": true, "any": true}

// callOf is the call of a named function that e is, if it is one.
func (a *asyncFinder) callOf(e ast.Expression) *ast.CallExpression {
	c, ok := e.(*ast.CallExpression)
	if !ok {
		return nil
	}
	id, ok := c.Callee.(*ast.Identifier)
	if !ok || !a.named(id.Name.String()) {
		return nil
	}
	return c
}

func (a *asyncFinder) mark(c *ast.CallExpression) {
	id := c.Callee.(*ast.Identifier)
	a.found[int(id.Idx)-1] = true
}

// walk visits the nodes under v; inCombinator counts the Promise
// combinator calls around them.
func (a *asyncFinder) walk(v reflect.Value, inCombinator int) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if n, ok := v.Interface().(ast.Node); ok {
			a.node(n, inCombinator)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			a.walk(v.Index(i), inCombinator)
		}
	case reflect.Struct:
		if v.CanAddr() && v.Addr().Type().Implements(nodeType) {
			a.node(v.Addr().Interface().(ast.Node), inCombinator)
			return
		}
		for i := 0; i < v.NumField(); i++ {
			a.walk(v.Field(i), inCombinator)
		}
	}
}

func (a *asyncFinder) node(n ast.Node, inCombinator int) {
	switch n := n.(type) {
	case *ast.AwaitExpression:
		if c := a.callOf(n.Argument); c != nil {
			a.mark(c)
		}
	case *ast.DotExpression:
		if c := a.callOf(n.Left); c != nil {
			switch n.Identifier.Name.String() {
			case "then", "catch", "finally":
				a.mark(c)
			default:
				a.direct[c] = true
			}
		}
	case *ast.BracketExpression:
		if c := a.callOf(n.Left); c != nil {
			a.direct[c] = true
		}
	case *ast.CallExpression:
		if c := a.callOf(n.Callee); c != nil {
			a.direct[c] = true
		}
		if d, ok := n.Callee.(*ast.DotExpression); ok {
			if id, ok := d.Left.(*ast.Identifier); ok && id.Name.String() == "Promise" && promiseCombinators[d.Identifier.Name.String()] {
				a.walk(reflect.ValueOf(n.Callee), inCombinator)
				for _, arg := range n.ArgumentList {
					a.walk(reflect.ValueOf(&arg).Elem(), inCombinator+1)
				}
				return
			}
		}
		if inCombinator > 0 && a.callOf(n) != nil && !a.direct[n] {
			a.mark(n)
		}
	}
	v := reflect.ValueOf(n)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		e := v.Elem()
		for i := 0; i < e.NumField(); i++ {
			a.walk(e.Field(i), inCombinator)
		}
	}
}

// Throws finds the throw statements of a module's code: the byte offsets
// of each one's argument, start and end, in source order; nothing when the
// code does not parse. The host marks where a throw happened with them, as
// a thrown value that is not an Error (throw "text") carries no position.
func (p *Program) Throws() [][2]int {
	if p == nil {
		return nil
	}
	code, prog := p.code, p.prog
	var out [][2]int
	var walk func(v reflect.Value)
	visit := func(n ast.Node) {
		if t, ok := n.(*ast.ThrowStatement); ok && t.Argument != nil {
			s, e := int(t.Argument.Idx0())-1, int(t.Argument.Idx1())-1
			if s >= 0 && e <= len(code) && s < e {
				out = append(out, [2]int{s, e})
			}
		}
		v := reflect.ValueOf(n)
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			e := v.Elem()
			for i := 0; i < e.NumField(); i++ {
				walk(e.Field(i))
			}
		}
	}
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				if n, ok := v.Interface().(ast.Node); ok {
					visit(n)
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Struct:
			if v.CanAddr() && v.Addr().Type().Implements(nodeType) {
				visit(v.Addr().Interface().(ast.Node))
				return
			}
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(prog))
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

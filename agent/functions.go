package agent

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/airlockrun/airlock"
)

// Document gives a registered function (or one registered later under
// h.Name) the documentation the prompts show for it: Interpreter.Prompt,
// RunCodeTool's description and FunctionDocs. h.Signature is TypeScript
// without "function", as in Helpers: "slugify(text: string): string".
// Documenting a name again replaces its documentation.
func (it *Interpreter) Document(h Helper) error {
	if !strings.HasPrefix(h.Signature, h.Name+"(") {
		return fmt.Errorf("agent: Document: the signature %q does not start with %q", h.Signature, h.Name+"(")
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	it.docs[h.Name] = h
	return nil
}

// FunctionDocs returns the documentation of the registered functions,
// sorted by name: what Document gave them, or else a signature derived
// from the Go function's type (context.Context and a last error left out,
// parameters named arg1, arg2, …, their types as the schemas inferred from
// the Go types make them), or, for a function whose type says nothing (an
// airlock.JSONFunc or airlock.Async), "name(...args: unknown[]): unknown".
func (it *Interpreter) FunctionDocs() []Helper {
	it.mu.RLock()
	defer it.mu.RUnlock()
	docs := make([]Helper, 0, len(it.functions))
	for name, fn := range it.functions {
		if h, ok := it.docs[name]; ok {
			docs = append(docs, h)
			continue
		}
		if _, ok := fn.(*airlock.Fetcher); ok {
			docs = append(docs, fetchDoc(name))
			continue
		}
		docs = append(docs, Helper{Name: name, Signature: goSignature(name, fn)})
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].Name < docs[j].Name })
	return docs
}

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
)

// goSignature is the TypeScript signature of a bridged Go function.
func goSignature(name string, fn any) string {
	t := reflect.TypeOf(fn)
	if t == nil || t.Kind() != reflect.Func {
		return name + "(...args: unknown[]): unknown"
	}
	var params []string
	first := 0
	if t.NumIn() > 0 && t.In(0) == contextType {
		first = 1
	}
	for i := first; i < t.NumIn(); i++ {
		n := fmt.Sprintf("arg%d", i-first+1)
		if t.IsVariadic() && i == t.NumIn()-1 {
			params = append(params, "..."+n+": "+paren(goTSType(t.In(i).Elem()))+"[]")
			continue
		}
		params = append(params, n+": "+goTSType(t.In(i)))
	}
	outs := t.NumOut()
	if outs > 0 && t.Out(outs-1) == errorType {
		outs--
	}
	ret := "void"
	switch outs {
	case 0:
	case 1:
		ret = goTSType(t.Out(0))
	default:
		ret = "unknown"
	}
	return name + "(" + strings.Join(params, ", ") + "): " + ret
}

// goTSType is the TypeScript type of a Go type, through the JSON Schema
// jsonschema infers for it; unknown if it infers none.
func goTSType(t reflect.Type) string {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil {
		return "unknown"
	}
	return tsType(s, "")
}

// fetchDoc documents a Fetcher (airlock.Fetch) registered as name.
func fetchDoc(name string) Helper {
	return Helper{Name: name, Signature: name + "(input: string | URL | Request, init?: RequestInit): Promise<Response>",
		Description: "The web's fetch, to the hosts the operator allows only (another host is a TypeError that names it). " +
			"Credentials the hosts need are added outside the sandbox: send none.",
		Example: "const r = await " + name + "(\"https://api.example.com/items?q=1\");\nconst items = await r.json();"}
}

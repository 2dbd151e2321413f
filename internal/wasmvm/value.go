package wasmvm

import "context"

// Kind is the kind of a Value.
type Kind uint8

const (
	Undefined Kind = iota
	Null
	Bool
	Number
	String // UTF-8 text; from JavaScript, a lone surrogate as WTF-8 (its three bytes)
	JSON   // JSON text, in Text: a script's value (Result); the guest parses it as JSON

	// Bytes is a value in the shim's binary format (internal/qjs/shim/codec.c),
	// in Bytes, both ways: the guest encodes the values it passes a host
	// function that are not primitives, and decodes those it is sent so.
	Bytes

	// Async answers a host call with the id of an asynchronous call, in
	// Number: the guest makes a promise for it, which an entry of the
	// shim's settles later (Call). Host to guest only.
	Async

	// Error is an Error of the message in Text, thrown where the guest
	// takes the value (an entry's argument, an answer: a HostFunc may
	// return a Go error instead). Host to guest only.
	Error
)

// Value is a value crossing between Go and JavaScript: a primitive, text
// (String, JSON) or bytes of the shim's binary format (Bytes).
type Value struct {
	Kind   Kind
	Bool   bool    // Kind == Bool
	Number float64 // Kind == Number, Async
	Text   string  // Kind == String, JSON or Error
	// Bytes is the encoding of Kind == Bytes. An argument's is a view of
	// the guest's memory, valid only during the call: copy what is kept.
	Bytes []byte
}

// MaxHostArgs is the most arguments a HostFunc receives; a call with more
// throws a RangeError in JavaScript.
const MaxHostArgs = 16

// MaxSpecifier bounds a module specifier the module hooks see, in bytes:
// a longer one is refused, unread, and the import fails with a TypeError
// that says so. A specifier is the program's text (an import() of any
// string); the hooks' work and error texts grow with it.
const MaxSpecifier = 4096

// HostFunc is a Go function callable from JavaScript. args is valid only
// during the call. It answers with a Value (Async only if its caller
// takes one: the shim's own calls, SetHostFunc) or an error, which is
// thrown in JavaScript as an Error with its text as the message; a panic
// is recovered and spends the sandbox (HostPanicError). ctx is the context
// of the Eval, RunJobs or Call in progress.
type HostFunc func(ctx context.Context, args []Value) (Value, error)

// Result is the outcome of an Eval that did not throw.
type Result struct {
	// Value is a script's completion value as JSON (Kind JSON), or
	// Undefined (a module, or a value JSON cannot represent).
	Value Value
	// Pending: the value is a promise (or module evaluation) still pending
	// after the job queue ran dry; it settles in a later RunJobs.
	Pending bool
}

// ModuleLoader returns the source of the ES module name, for an import
// (static or dynamic) in a module the sandbox runs. name is the specifier
// as QuickJS normalized it: a relative specifier ("./x.js") is resolved
// against the importing module's name, others are passed as written. An
// error is thrown at the import as a ReferenceError with its text.
type ModuleLoader func(ctx context.Context, name string) (string, error)

// ModuleHooks are the functions that supply the modules a program imports
// (see Sandbox.SetModuleHooks). Only Load is needed.
type ModuleHooks struct {
	// Normalize returns the name of the module that specifier name refers
	// to when module base imports it. nil: QuickJS's rule, a specifier
	// starting with "." is resolved against base's directory.
	Normalize func(base, name string) (string, error)
	// Load returns the source of module name; nil makes every import fail.
	Load ModuleLoader
	// Fallback, if set, returns the source to compile instead when what
	// Load gave does not compile, or "" for none.
	Fallback func(name string) (string, error)
	// URL, if set, returns the import.meta.url of module name, or "".
	URL func(name string) string
	// Globals, if set, returns the export names of the shim's native
	// globals module when name is that module, else nil: the module whose
	// exports the shim sets itself (internal/qjs/shim/module.c).
	Globals func(name string) []string
}

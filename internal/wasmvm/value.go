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
	JSON   // any other value, as JSON text (objects, arrays, BigInt throws)

	// The kernel's replies (see Sandbox.SetKernel), answers of its host
	// function only: the list [0, Text], [1, Text], [2, Number].
	KernelWire  // wire text of a value the kernel decodes
	KernelError // the message of an Error to throw
	KernelAsync // the id of a pending asynchronous call: a promise

	// Bytes is an ArrayBuffer's bytes, in Text (JavaScript to Go only):
	// the kernel's encoded values (internal/qjs/shim/codec.c).
	Bytes
)

// Value is a value crossing between Go and JavaScript: a primitive, or
// JSON text for the rest. It is the minimal form the value codec builds on.
type Value struct {
	Kind   Kind
	Bool   bool    // Kind == Bool
	Number float64 // Kind == Number
	Text   string  // Kind == String or JSON
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
// during the call. A returned error is thrown in JavaScript as an Error
// with its text as the message; a panic is recovered and spends the
// sandbox (HostPanicError). ctx is the context of the Eval or RunJobs in
// progress.
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
	// Globals, if set, returns the export names of the kernel's native
	// globals module when name is that module, else nil. Its exports are
	// the kernel's handOver(): [globals, imports], one export for each
	// global, the last export for the imports.
	Globals func(name string) []string
}

// Package airlock runs untrusted, model-written JavaScript and TypeScript in
// a fresh, hardened QuickJS sandbox. Nothing of the host is reachable from
// the sandbox except what the caller bridges in (functions, data, modules),
// within hard limits on memory and time, and the outcome comes back as a
// structured [Result].
//
//	ex, err := airlock.Run(ctx, `
//		import { lookup } from 'crm';
//		for (const r of input) if (r.flagged) report(await lookup(r.id));
//		export default input.length;
//	`, airlock.Options{
//		Globals: map[string]any{"input": rows},
//		Imports: map[string]airlock.Module{"crm": {"lookup": airlock.Async(lookup)}},
//		Report:  func(v any) { log.Println("flagged", v) },
//		MemoryLimitBytes: 32 << 20,
//	})
//	if err != nil { ... }                      // invalid options only
//	budget := time.AfterFunc(2*time.Second, func() { ex.Terminate("2s budget") })
//	res := ex.Wait()                           // res.Status, res.Result, res.Logs, res.Error
//	budget.Stop()
//
// The source is an ES module. The selected export ([Execute], by default the
// default export) is called with the arguments if it is a function, awaited
// until it is not a thenable, and becomes [Result].Result. Values can also
// be streamed out with the built-in report function, kept in
// [Result].Reports and given to [Options].Report as they come; console lines
// are kept in [Result].Logs and given to [Options].Log as they are written.
// [Options].Timeout bounds a run's wall time.
//
// # Security model
//
// Each run gets its own VM, used for that run only and then discarded: no
// state, no prototype change, no module cache survives from one run to the
// next. Before any user code runs the engine's shim (C, in the image) has
// removed eval, SharedArrayBuffer and Atomics, made the Function,
// AsyncFunction, GeneratorFunction and AsyncGeneratorFunction constructors
// throw (their shapes stay the standard ones), and it runs no JavaScript
// on a call's path, so no intrinsic a program replaces is reached; no
// Proxy crosses the boundary (the codec, in the engine's C, tells one by
// its class before any trap runs). globalThis holds ECMAScript intrinsics,
// structuredClone and queueMicrotask only; there are no timers, no I/O, no
// host modules. Globals are bound at module scope, never on globalThis.
// Imports resolve only to the bridged modules ([Options].Imports) and the
// supplied source modules ([Options].Modules); nothing is read from the host's
// file system, and URL and node: specifiers fail.
//
// Values cross by deep copy in both directions, under the rules of the HTML
// structured clone: a Proxy is refused before any of its traps runs, a
// getter is read once (an object's in key order), toJSON is never called,
// cycles and shared references are kept. Everything that crosses between the
// sandbox and the host in one run counts against [RuntimeConfig].MaxValueBytes
// (64 MiB unless set): the result, the arguments of synchronous and
// asynchronous calls (plain strings and a JSONFunc's argument text
// included), host functions' replies, logs and reports, by their bytes and
// an allowance per value for what it costs decoded, and the texts of a
// failure (an error's name, message and stack, a thrown value's text, a
// rejection's reason). Past it a call throws, a log or report ends the
// run, a result is an error, and a failure's texts are cut to what is
// left, not host memory exhaustion. A failure's texts are cut in the
// sandbox, before they cross, to [MaxErrorText] (20,000) characters each,
// head and tail kept around "... [truncated N characters] ..."; a module
// specifier longer than 4,096 bytes is refused unread.
//
// # Host memory per run
//
// One run costs the host at most about: its memory limit
// ([Options].MemoryLimitBytes, 256 MiB unless set) plus 8 MiB, plus three
// times MaxValueBytes for what crosses (decoded Go values at their peak),
// plus about 150 bytes for each pending asynchronous call (at most
// 65,536), plus a goroutine for each of at most
// [RuntimeConfig].MaxAsyncCalls (64) asynchronous calls running at once.
// The limit caps the engine's heap (its live blocks) and the sandbox's
// whole memory at the limit plus the engine's image (5.75 MiB) and 2 MiB
// for the C allocator's free blocks, however fragmented: past either, the
// status is memory. TestHostMemory_Bounded and
// TestHostMemory_Fragmentation measure it. What bridged functions do with
// their arguments is theirs to bound.
//
// A source module that nests deeper than 1000 levels (brackets, braces,
// parentheses, template substitutions, and the operators and statements
// that nest without a bracket, such as !!!x, a = b = c, a ? b : c ? d : e,
// a.b.c, else if chains) is refused before any parser sees it: the run
// settles link_error with a SyntaxError at the token that went too deep,
// in the user's source. The TypeScript transform and the executor's parser
// recurse on the host's Go stack, where a few hundred thousand levels are a
// fatal stack overflow that no recover catches; real programs nest well
// under 100 levels. The bound is fixed (not an option). An executor step
// that nests as deeply fails validation with the nesting_depth diagnostic.
// A source holds at most [MaxSourceBytes] (4 MiB): a larger entry or
// imported module settles link_error, a larger step fails validation with
// the code_size diagnostic, before anything reads them.
//
// The host decides how a run ends, and the sandbox cannot change it:
// [Execution.Terminate], the context, and the safety cap
// ([RuntimeConfig].MaxDuration) stop the VM and keep interrupting it until it
// has stopped, whatever the program catches; the status is memory when the
// engine refused an allocation for the limit, whatever error text the
// program throws, and even when the program caught the out-of-memory error
// and finished. Every loop of the engine, the native code of builtins
// included (walks, sorts, string searches, BigInt arithmetic, regular
// expressions, JSON), checks for a stop, so a stop lands where the program
// is, with no limits on lengths. The host's own work for the run (the
// TypeScript transform, the scans of a long source, Intl's collation) does
// not hold a stop back either: it is abandoned, left to end on a goroutine
// of its own, its result dropped; its input is bounded, and all such work
// at once holds at most 8 MiB of input. An executor step's Timeout covers
// its validation and the erasure of its types as well as its run.
// A host function that panics ends the run with an error that reveals nothing
// of the panic. Errors carry the sandbox's frames only, with
// positions in the user's original source.
//
// SECURITY.md in the repository describes the threats and what answers each.
//
// # Values
//
// Values cross by deep copy in both directions. Sandbox values arrive in Go
// as Go's own types where it has them (nil, bool, float64, string, *big.Int,
// time.Time, []any, map[string]any, []byte) and as the types of package
// [github.com/airlockrun/airlock/js] where it has none ([js.Undefined],
// [js.Map], [js.Set], the typed arrays, [js.Boxed], [js.RegExp],
// [js.ErrorValue] …); Go values reach the sandbox by the same table, read
// the other way. The table, and what cannot cross, are in that package's
// documentation. A Go value that cannot cross among a run's options makes
// [Runtime.Run] return a [*js.CloneError]. A sandbox value that cannot
// cross (a function, a symbol, a WeakMap …) as a run's result or in it
// settles [StatusError] with a DataCloneError whose message says where it
// was ("result.items[2]: a function cannot leave the sandbox"); as a host
// function's argument, report's included, it throws that error at the
// call.
//
// # Showing values
//
// [Inspect] formats a value for a person or a model as Node's console.log
// does, on one line ('quoted' strings inside containers, NaN, -0, 123n,
// Map(2) { 'a' => 1, 'b' => 2 }, Uint8Array(3) [ 1, 2, 3 ], a cycle as
// <ref *1> { self: [Circular *1] }), bounded in depth, items, string length
// and bytes ([InspectOptions]); [Result.Text] and [Log.Message] use it.
// [js.JSONValue] makes any value encodable as JSON (NaN → null, cycles cut).
// What goes back to a model is bounded by the agent layer (agent.ClipText
// cuts a text to agent.DefaultMaxOutput characters around a marker that
// says how much was cut), which the MCP server uses too.
//
// # Host functions
//
// A Go function anywhere in Globals, Imports or Execute.Args becomes a
// function in the sandbox. Its arguments are converted to its parameter
// types: numbers to integer kinds only when integral and in range, missing
// arguments and null to zero values, a typed array to a slice of its
// element type ([]float64, a named type of the user's) as it is, structs,
// other typed slices and maps as encoding/json converts them (names, tags
// and types by its rules), read straight from the sandbox's encoding where
// they are plain data. A wrong argument throws an Error that names it
// ("argument 2: cannot convert a string to int"). A first
// context.Context parameter receives the run's context, which is cancelled
// when the run ends or is stopped. It may return nothing, a value, an
// error, or a value and an error; a non-nil error is thrown in the sandbox
// as an Error with the error's message only. A function wrapped with
// [Async] returns a Promise and runs on its own goroutine, at most
// [RuntimeConfig].MaxAsyncCalls of a run at once; the calls beyond wait,
// without a goroutine, for one of them to return.
//
// A function type's converters are built once, when the first function of
// the type is bridged, and kept for the process, as encoding/json keeps its
// encoders. The functions of numbers, strings and booleans are called with
// no reflection, no boxing and no allocation: a function of one parameter
// of type int, int64, uint, float64, string or bool, or of two of int,
// float64, string and bool, returning nothing, an error, one of those types
// or one and an error, with a first context.Context parameter or not (of
// two parameters, when it returns an error): func(int) int,
// func(string) string, func(float64, int) bool,
// func(context.Context, int) (int, error). Other functions are called
// through reflection, their arguments converted by their types' converters.
//
// A stop (Terminate, the context, the safety cap) does not wait for host
// functions: a run stopped while a synchronous call blocks settles at once,
// and so do runs with asynchronous calls in flight. The run's context is
// cancelled; a function that ignores it is abandoned, left to finish on its
// own goroutine, and what it returns is discarded; the VM it held is closed
// when it returns and never runs again. A function that never returns
// keeps its goroutine (and, for a synchronous call, the VM's) for good:
// honour the context.
//
// # Concurrency
//
// A [Runtime] is safe for concurrent use; so are [Run] and the methods of
// [Execution]. Each run's VM lives on one goroutine, which runs its event
// loop; asynchronous host calls run on goroutines of their own and hand
// their results back to that loop through a queue. A run settles without
// waiting for host functions still running (see above); every other
// goroutine it started has returned. Synchronous host functions run on the run's
// goroutine, one at a time per run; different runs call them concurrently.
//
// # Traces
//
// When the program installs an OpenTelemetry tracer provider
// (otel.SetTracerProvider), a run is a span, "airlock.run", child of the
// span of the context given to [Runtime.Run], ended as the run settles with
// its status; each host call is a span, "airlock.call", under it (or under
// the caller's span, for an [Executor]'s step), and the function's context
// carries it. The library never installs a provider: with none, a run and a
// host call cost what they did. Spans hold names, statuses and error names,
// never code, values or messages (README, "Traces").
//
// # Errors
//
// [Runtime.Run] returns an error only for invalid [Options] (a wrapped
// description, or a [*js.CloneError] for a value that cannot cross) and
// [ErrClosed]. Everything that happens in the sandbox is in the [Result]:
// its [Status], and for any status but success a [*ScriptError] with the
// name, message, stack, specifier and position, each text at most
// [MaxErrorText] characters.
//
// The engine's messages are worded as Node's (V8's), since the code it runs
// was learned from Node and is fixed from what it prints: "Cannot read
// properties of undefined (reading 'length')", "obj.method is not a
// function", "x is not defined", "Unexpected token ')'", JSON.parse errors
// with their position. Error.captureStackTrace and Error.stackTraceLimit
// work as in Node.
//
// # The executor
//
// [Executor] keeps one sandbox alive across the steps of a code agent. A
// step is JavaScript or TypeScript (its types erased as [Run] erases a
// module's), validated ([ValidateCode], [PrepareProgram]) and then
// evaluated as it was written, as strict global code of the executor's one
// realm (sloppy with [ExecutorOptions].Sloppy, as Node's REPL runs code:
// `x = 5` then makes a global), with top-level await and return. The engine keeps what a step
// declares: top-level let, const and class stay in the realm's global
// scope, var and function declarations on the global object, for every
// later step. const stays constant and the temporal dead zone holds.
// Declaring a let, const or class again in a later step is a SyntaxError
// ("Identifier 'x' has already been declared"), as in Node's REPL, and
// nothing of that step runs; var and function may be declared again. A
// binding whose step failed before its declaration ran stays in its
// temporal dead zone, as in Node's REPL: pick another name. A step's value
// is what it returns, or without a return its completion value, the value
// of its last expression statement (`a + 1`, `(x)`); a promise is awaited.
//
// The engine counts a step's operations against
// [ExecutorOptions].MaxOperations: one for every entry into a loop body
// (for, for-in, for-of, for await, while, do-while, a labelled continue
// included) and one for every entry into a function the steps defined: a
// call, whether the code makes it or the engine does (callbacks of
// forEach, map, reduce, sort comparators, promise reactions,
// queueMicrotask, getters, Function.prototype.call and bound functions), a
// constructor's (and a class's field initializer's), and the start and
// every resumption of an async function (after each await) or a generator
// (at each next()). The step's own top-level code costs nothing. So
// recursion is bounded as loops are: fib(30) spends 2.7 million. A step
// with a budget of n spends n and passes; n+1 fails with
// ERR_MAX_OPS_EXCEEDED, wherever it is spent (a promise reaction nothing
// awaits included), which no try, catch, finally or promise handler sees,
// and after which no tool runs. Tools ([Executor.SendTools]) are
// read-only global functions, variables
// ([Executor.SendVariables]) global copies of Go values, and final_answer(v)
// ends a step with its answer. The host decides how a step ends, as for
// Run. Errors are *[ExecutorError] with the contract's ERR_* codes; an
// exception's name and message, cut to [MaxErrorText] characters and paid
// from the step's 64 MiB budget for values that cross, are held once:
// Details' "name" and "message" are the text of Message. An
// executor idle for a second gives back the memory its sandbox can make
// again (the C allocator's free blocks included), keeping what its steps
// declared; its next step pays for making it (BENCHMARKS.md, "Idle
// executor memory"). The agent's system prompt
// is in the agent package
// ([github.com/airlockrun/airlock/agent.RenderCodeAgentPrompt]).
package airlock

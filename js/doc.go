// Package js holds the JavaScript values of the sandbox on the Go side: the
// types a value arrives in Go as when Go has none of its own ([Undefined],
// [Map], [Set], the typed arrays, [Boxed], [RegExp], [ErrorValue] …), the
// [CloneError] of a value that cannot cross, and [JSONValue], which makes any
// of them encodable as JSON. The airlock package and its internals use them;
// a program passes them to the sandbox and finds them in results, reports,
// logs and the arguments of its host functions.
//
// Values cross between the sandbox and Go by deep copy in both directions,
// under the rules of the HTML structured clone: a Proxy is refused before
// any of its traps runs, a getter is read once (an object's in key order),
// toJSON is never called, cycles and shared references are kept.
//
// # From the sandbox to Go
//
// Sandbox values arrive in Go as:
//
//	JavaScript                 Go
//	undefined                  Undefined{}
//	null                       nil
//	boolean                    bool
//	number (NaN, ±Inf, -0 too) float64
//	bigint                     *big.Int
//	string                     string (a lone surrogate as WTF-8, see below)
//	Array                      []any (a hole is Undefined{})
//	Array with named properties *Array (arr.total = 3)
//	plain object, class instance map[string]any (own enumerable string keys)
//	Map                        *Map (entries in order)
//	Set                        *Set (values in order)
//	Date                       time.Time, UTC, ms precision, all of ±8.64e15 ms
//	                           (invalid: the zero Time)
//	Uint8Array                 []byte
//	other typed arrays         the type of the same name: Int8Array ([]int8),
//	                           Uint8ClampedArray ([]byte), Int16Array,
//	                           Uint16Array, Float16Array ([]uint16, the
//	                           half-precision bits), Int32Array, Uint32Array,
//	                           Float32Array, Float64Array ([]float64),
//	                           BigInt64Array ([]int64), BigUint64Array
//	ArrayBuffer                ArrayBuffer
//	DataView                   DataView (the bytes it views)
//	new Number(1), new String("s"), new Boolean(b), Object(1n)
//	                           *Boxed (Value: float64, string, bool, *big.Int)
//	RegExp                     *RegExp (Source, Flags; lastIndex is not kept)
//	Error (as a value)         *ErrorValue (Name, Message; a TypeError,
//	                           RangeError, SyntaxError, ReferenceError,
//	                           EvalError or URIError comes back as one, any
//	                           other name as an Error with that name)
//	function, symbol           not transferable: a DataCloneError that says
//	                           where it was (see below); in a value only
//	                           shown (a console argument, an executor
//	                           step's value): dropped as JSON.stringify
//	                           drops it
//	Proxy, WeakMap, WeakSet, WeakRef, FinalizationRegistry, Promise,
//	a Symbol object            not transferable: a DataCloneError that says
//	                           where it was
//
// Every value in the table comes back as it was when it returns from Go: a
// Float64Array handed to a host function taking any and returned is a
// Float64Array again (a parameter of type []float64 receives its elements,
// but a []float64 returned is an Array), an invalid Date is invalid again,
// an *Array keeps its names. What Go cannot hold is lost: a class of the
// program's own (an Error subclass included, which keeps its name), holes
// (undefined when they come back), and the order of object and named array
// keys (Go maps keep none). A string with a lone surrogate (half of a
// UTF-16 pair, which UTF-8 cannot encode) arrives as WTF-8: each lone
// surrogate as the three bytes of its code point in UTF-8's scheme (U+D800
// is "\xed\xa0\x80"), and those bytes in a Go string become the lone
// surrogate again in the sandbox; any other byte that is not UTF-8 becomes
// U+FFFD.
//
// A value that cannot cross, as a run's result or in it, fails the run
// with a DataCloneError whose message names its kind and where it was:
// "result.items[2]: a function cannot leave the sandbox". The path has one
// form: the root ("result"; "argument N" for a host function's argument,
// report's and final_answer's included, where the error is thrown at the
// call and may be caught), then ".name" for a key that is an identifier,
// ["odd key"] for any other key, [index] for an array's element,
// <Map key N> and <Map value N> for the Nth entry of a Map, <Set member N>;
// it is cut to 512 bytes, its head and tail kept around "…". A Proxy, even
// of a function, is refused before any trap.
//
// A function or symbol in a value that is only shown (a console argument,
// an executor step's value) is left out instead, as JSON.stringify leaves
// it out: an object property holding one is left out, and so are a Map
// entry keyed by one and a Set member; an array element or a Map value
// becomes Undefined{}, and so does the value itself at the top. A console
// argument that is a function or symbol is logged as the string Node
// prints for it ("[Function: f]", "[class A]", "Symbol(x)").
// structuredClone keeps the platform's texts ("function f could not be
// cloned").
//
// # From Go to the sandbox
//
// Go values reach the sandbox as: nil → null; Undefined{} → undefined; bool,
// strings and all numeric kinds → boolean, string, number (NaN, ±Inf and -0
// kept); *big.Int → bigint; time.Time → Date (the zero Time → an invalid
// Date); []byte and byte arrays → Uint8Array; the typed array types
// (Float64Array, BigInt64Array …), ArrayBuffer, DataView, *Boxed, *RegExp,
// *Array → what arrives as them; other slices and arrays → Array, numeric
// ones included ([]float64, []int64, a named type such as
// type Scores []float64), their elements numbers, as encoding/json writes
// them and as an int64 alone arrives; maps
// with string keys → plain objects; other maps and *Map → Map; *Set → Set;
// structs → plain objects of their exported fields, named and omitted as
// encoding/json does; json.Marshaler values → what their JSON decodes to;
// error values → Error; pointers → what they point to, with identity kept;
// functions → callable functions. Channels, complex numbers and structs with
// no exported fields cannot cross: a [*CloneError].
// Identity is kept within a value (a cycle stays a cycle); each global is a
// value of its own, so two globals that share a Go object get two copies.
//
// # Concurrency
//
// The types are plain data, with no locks: a value may be read from many
// goroutines at once, and written by one while no other reads it.
// [JSONValue] reads its argument and never modifies it.
package js

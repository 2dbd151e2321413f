package airlock

import "github.com/airlockrun/airlock/internal/inspect"

// Defaults of [InspectOptions].
const (
	// DefaultInspectDepth is how many levels of nesting Inspect shows below
	// the top: deeper than Node's console.log (2), so that a model sees the
	// data it asked for, and bounded, so that no value is shown without end.
	DefaultInspectDepth = inspect.DefaultDepth
	// DefaultInspectArrayLength is how many items of an array, typed array,
	// Map or Set Inspect shows, as util.inspect's maxArrayLength.
	DefaultInspectArrayLength = inspect.DefaultArrayLength
	// DefaultInspectStringLength is how many characters of a string inside
	// a container Inspect shows, as util.inspect's maxStringLength.
	DefaultInspectStringLength = inspect.DefaultStringLength
	// DefaultInspectBytes bounds the text Inspect returns.
	DefaultInspectBytes = inspect.DefaultBytes
	// MaxInspectDepth caps InspectOptions.Depth, so that formatting never
	// goes deeper into the stack than this many levels.
	MaxInspectDepth = inspect.MaxDepth
)

// InspectOptions bound what [InspectOptions.Inspect] shows. The zero value
// means the defaults; a negative field means 0.
type InspectOptions struct {
	// Depth is how many levels of nesting are shown below the top, as
	// util.inspect's depth: a container deeper than that is shown as
	// [Object], [Array], [Map], [Set] or [Uint8Array] (and so on). 0 means
	// DefaultInspectDepth; it is capped at MaxInspectDepth.
	Depth int
	// MaxArrayLength is how many items of an array, typed array, Map or Set
	// (and bytes of an ArrayBuffer) are shown; the rest are counted, as in
	// "... 900 more items". 0 means DefaultInspectArrayLength.
	MaxArrayLength int
	// MaxStringLength is how many characters of a string inside a
	// container are shown; the rest are counted, as in
	// "'aaa'... 9 more characters". A string at the top is shown whole (up
	// to MaxBytes). 0 means DefaultInspectStringLength.
	MaxStringLength int
	// MaxBytes bounds the text: past it, formatting stops and the text
	// ends with "... [truncated: more than N bytes]". 0 means
	// DefaultInspectBytes.
	MaxBytes int
	// QuoteString quotes a string at the top as well, as util.inspect and
	// Node's REPL do; by default it is shown as it is, as console.log
	// shows it.
	QuoteString bool
}

// Inspect formats a value for a person or a model to read, as Node's
// console.log formats its arguments (util.inspect, on one line), with
// [InspectOptions]'s defaults. It is the form every part of Airlock uses to
// show a value: results, reports, console lines, observations, answers.
//
//	string at the top        as it is: hello
//	string inside            quoted and escaped: 'hello', "it's"
//	number                   1.5, -0, NaN, Infinity, 1e+21
//	bigint (*big.Int)        123n
//	undefined, null          undefined, null
//	array ([]any)            [ 1, 'a', [Array] ]
//	object (map[string]any)  { a: 1, 'b-c': 2 } (keys sorted: Go maps keep no order)
//	*js.Map, *js.Set         Map(1) { 'a' => 1 }, Set(2) { 1, 2 }
//	Date (time.Time)         2024-01-02T03:04:05.000Z; the zero Time: Invalid Date
//	typed arrays             Uint8Array(3) [ 1, 2, 3 ], BigInt64Array(1) [ 1n ]
//	js.ArrayBuffer           ArrayBuffer { [Uint8Contents]: <01 02>, byteLength: 2 }
//	js.DataView              DataView { byteLength: 2, byteOffset: 0, buffer: ArrayBuffer { ... } }
//	RegExp (*js.RegExp)      /a+b/gi
//	boxed (*js.Boxed)        [Number: 1.5], [String: 's'], [Boolean: false], [BigInt: 1n]
//	array with names (*js.Array) [ 1, 2, total: 3 ]
//	Error (*js.ErrorValue)   [TypeError: boom]
//	a cycle                  <ref *1> { self: [Circular *1] }
//
// Other Go values are shown by kind: structs as objects of their exported
// fields (named as encoding/json names them), other maps and slices as
// objects and arrays, pointers as what they point to, error values as
// errors. Inspect never fails, never panics on a value that crossed from the
// sandbox, and never recurses deeper than the depth bound.
func Inspect(v any) string { return InspectOptions{}.Inspect(v) }

// Inspect formats v as the package function [Inspect] does, within o's
// bounds.
// bounds.
func (o InspectOptions) Inspect(v any) string {
	return inspect.Format(v, inspect.Options{
		Depth:           o.Depth,
		MaxArrayLength:  o.MaxArrayLength,
		MaxStringLength: o.MaxStringLength,
		MaxBytes:        o.MaxBytes,
		QuoteString:     o.QuoteString,
		Named:           scriptErrorText,
	})
}

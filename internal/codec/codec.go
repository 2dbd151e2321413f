// Package codec is the Go half of the value codec (internal/qjs/shim/codec.c
// is the other): it carries values between Go and the sandbox in one binary
// format, both ways, and converts them to the Go types a host function
// takes.
//
// The sandbox encodes in C what it sends to the host (results, host
// function arguments, console arguments, reports); this package decodes it
// ([DecodeBinary], into the types of package js where Go has none of its
// own) and converts an argument straight to a parameter's type
// ([Params.ArgsOf]). What Go sends into the sandbox it encodes here
// ([AppendBinary]), with an encoder built once per Go type and cached, and
// the shim decodes it in C.
//
// The format (little-endian) is codec.c's:
//
//	header   0xB1, u32 values, u32 objects (counts, for the host's budget)
//	value    a tag byte, then:
//	  0 undefined, 1 null, 2 false, 3 true
//	  4 f64                    number
//	  5 i32                    number that is an int32
//	  6 str                    string (u32 length, WTF-8 bytes: a lone
//	                           surrogate as its three bytes)
//	  7 str                    bigint, decimal
//	  8 u32                    the object with that id, again
//	  9 u32 n, n (str, value)  plain object
//	 10 u32 n, n values        dense array
//	 11 u32 length, u8 named, u32 n, n (key, value), key: 0 u32 index |
//	                           1 str name: a sparse array, or one with named
//	                           properties (named 1: it has some)
//	 12 u32 n, n (key, value)  Map
//	 13 u32 n, n values        Set
//	 14 f64                    Date (NaN: invalid)
//	 15 u8 kind, u32 n, bytes  typed array (kind: QuickJS's JSTypedArrayEnum)
//	 16 u32 n, bytes           ArrayBuffer
//	 17 u32 n, bytes           DataView
//	 18 str name, str message  Error
//	 19 str source, str flags  RegExp
//	 20 value                  boxed primitive
//	 21 u32 id, str name, u8 mode   a host function (Go to sandbox only)
//
// Every object (tags 9-20) takes the next id, in the order written, so
// that both sides number them alike without writing the ids down.
//
// The engine carries the bytes of the format both ways, as they are: no
// text is made of a value on the way. What leaves the sandbox costs the
// run's budget what [BinaryCost] counts, before it is decoded.
//
// A JavaScript string is a list of UTF-16 code units and may hold a lone
// surrogate (half of a pair), which UTF-8 cannot encode. Such a string
// arrives in Go as WTF-8: UTF-8 with each lone surrogate written as the
// three bytes UTF-8's scheme gives its code point (U+D800 is ED A0 80),
// which Go's UTF-8 functions see as invalid bytes. A Go string goes back
// the same way: those three bytes become the lone surrogate again, and any
// other byte that is not UTF-8 becomes U+FFFD.
//
// Encoders and decoders are built once per Go type and kept for the life
// of the process; everything here is safe for concurrent use.
package codec

import (
	"errors"
	"fmt"
	"reflect"
)

// MaxDepth bounds the nesting of a value crossing the boundary, both ways
// (codec.c's MAX_DEPTH).
const MaxDepth = 10000

// ErrMalformed is the error of text that is not a value of the format.
var ErrMalformed = errors.New("airlock: malformed value from the sandbox")

// ErrTooLarge is the error of a value whose expansion on the host would
// pass the budget it is decoded under.
var ErrTooLarge = errors.New("airlock: value too large to cross the sandbox boundary")

// errDepth is the error of a value nested deeper than MaxDepth.
var errDepth = fmt.Errorf("airlock: value nested deeper than %d levels", MaxDepth)

// A Registrar gives a Go function an id the sandbox can call: the encoder
// calls it for each function in a value going into the sandbox. A nil
// Registrar makes a function a *js.CloneError.
type Registrar func(fn reflect.Value) (int, error)

// FuncMode says how the sandbox calls a host function: the third byte of
// tag 21.
type FuncMode byte

const (
	// FuncPlain functions take their arguments through the codec.
	FuncPlain FuncMode = 0
	// FuncJSON functions take the JSON text of their argument list, made
	// by the sandbox's JSON.stringify.
	FuncJSON FuncMode = 1
	// FuncShown functions take values to show or store, not to compute
	// with (the built-in report, final_answer): the sandbox encodes their
	// arguments as any function's (a function or symbol among them throws
	// a DataCloneError naming its path), and the host keeps the value as
	// decoded instead of converting it to a parameter's type.
	FuncShown FuncMode = 2
)

// A Bridged value crosses into the sandbox as a host function of its mode:
// the wrappers of internal/hostcall (an asynchronous function, a JSON
// function, the built-in report) are Bridged. The encoder registers it
// whole, with the Registrar.
type Bridged interface {
	BridgedMode() FuncMode
}

var typeBridged = reflect.TypeFor[Bridged]()

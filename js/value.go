package js

import "fmt"

// Undefined is the JavaScript value undefined on the Go side. It is what a
// result, argument or element that is undefined in the sandbox becomes, and
// passing Undefined{} to the sandbox gives it undefined.
type Undefined struct{}

// String returns "undefined".
func (Undefined) String() string { return "undefined" }

// MarshalJSON encodes undefined as null, as JSON.stringify does in arrays.
func (Undefined) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// Map is a JavaScript Map on the Go side: its entries in insertion order.
// Keys may be any value that crosses, objects included. A *Map passed to the
// sandbox becomes a Map.
type Map struct {
	Entries []MapEntry
}

// MapEntry is one key and value of a [Map].
type MapEntry struct {
	Key, Value any
}

// Get returns the value for a key that is a string, number, boolean, nil or
// Undefined (compared with ==), and whether it was found.
func (m *Map) Get(key any) (any, bool) {
	for _, e := range m.Entries {
		if isKey(e.Key) && isKey(key) && e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// MarshalJSON encodes a Map as an array of [key, value] pairs.
func (m *Map) MarshalJSON() ([]byte, error) {
	pairs := make([][2]any, len(m.Entries))
	for i, e := range m.Entries {
		pairs[i] = [2]any{e.Key, e.Value}
	}
	return marshalJSONValue(pairs)
}

// Set is a JavaScript Set on the Go side: its values in insertion order.
// A *Set passed to the sandbox becomes a Set.
type Set struct {
	Values []any
}

// MarshalJSON encodes a Set as an array of its values.
func (s *Set) MarshalJSON() ([]byte, error) { return marshalJSONValue(s.Values) }

// ArrayBuffer is a JavaScript ArrayBuffer on the Go side: a copy of its bytes.
// An ArrayBuffer passed to the sandbox becomes an ArrayBuffer; a plain []byte
// becomes a Uint8Array.
type ArrayBuffer []byte

// Uint8ClampedArray is a JavaScript Uint8ClampedArray on the Go side.
type Uint8ClampedArray []byte

// The typed arrays other than Uint8Array arrive in Go as these types, one
// per kind, and each goes back into the sandbox as the typed array it
// stands for. A plain slice of the same element type ([]float64, []int64)
// is an Array of numbers in the sandbox, as encoding/json writes it; a
// host function's parameter of the plain slice type receives the typed
// array's elements.
type (
	Int8Array      []int8    // a JavaScript Int8Array
	Int16Array     []int16   // a JavaScript Int16Array
	Uint16Array    []uint16  // a JavaScript Uint16Array
	Int32Array     []int32   // a JavaScript Int32Array
	Uint32Array    []uint32  // a JavaScript Uint32Array
	Float32Array   []float32 // a JavaScript Float32Array
	Float64Array   []float64 // a JavaScript Float64Array
	BigInt64Array  []int64   // a JavaScript BigInt64Array
	BigUint64Array []uint64  // a JavaScript BigUint64Array
)

// Float16Array is a JavaScript Float16Array on the Go side: the IEEE 754
// half-precision bits of each element.
type Float16Array []uint16

// DataView is a JavaScript DataView on the Go side: a copy of the bytes it
// views. A DataView passed to the sandbox becomes a DataView over an
// ArrayBuffer of its own.
type DataView []byte

// Boxed is a boxed primitive on the Go side: new Number(1), new
// String("s"), new Boolean(false), Object(1n). Value is the primitive as it
// arrives alone: float64, string, bool or *big.Int. A *Boxed passed to the
// sandbox becomes the boxed primitive; a Value of another type cannot
// cross.
type Boxed struct {
	Value any
}

// RegExp is a JavaScript RegExp on the Go side: its source and flags, as
// structured clone keeps them (lastIndex is not kept). A *RegExp passed to
// the sandbox becomes a RegExp; one whose source or flags the sandbox's
// RegExp refuses throws a SyntaxError there.
type RegExp struct {
	Source string `json:"source"`
	Flags  string `json:"flags"`
}

// Array is a JavaScript Array with named properties beside its elements
// (arr.total = 3): Elements are its elements as an []any would hold them
// (a hole is Undefined{}), Props its own enumerable properties that are
// not indices. An array without any arrives as []any. An *Array passed to
// the sandbox becomes an Array with those properties.
type Array struct {
	Elements []any
	Props    map[string]any
}

// MarshalJSON encodes an Array as JSON.stringify does: its elements only.
func (a *Array) MarshalJSON() ([]byte, error) { return marshalJSONValue(a.Elements) }

// ErrorValue is a JavaScript Error object that crossed as a value (returned
// or passed, not thrown): its name and message. A *ErrorValue, or any Go
// error value, passed to the sandbox becomes an Error.
type ErrorValue struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// Error returns "Name: Message".
func (e *ErrorValue) Error() string { return e.Name + ": " + e.Message }

// isKey reports whether a Map key can be compared with ==.
func isKey(v any) bool {
	switch v.(type) {
	case nil, string, float64, bool, Undefined:
		return true
	}
	return false
}

// CloneError is the error for a Go value that cannot cross into the
// sandbox: a channel, a complex number, a struct with no exported fields, a
// function where none may cross. airlock's Runtime.Run returns it for such
// a value among a run's options, and a host function's answer that holds
// one throws its message in the sandbox.
type CloneError struct {
	// What names the value that could not cross, e.g. "function f" or "chan int".
	What string
}

// Error returns the message, which names the value.
func (e *CloneError) Error() string {
	return fmt.Sprintf("airlock: %s could not be cloned across the sandbox boundary", e.What)
}

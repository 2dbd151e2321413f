package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	"github.com/airlockrun/airlock/js"
)

// A ConvertError is the error of a value a parameter's type cannot take.
// Its text names what the value is and the type: "cannot convert a string
// to float64", "expected an integer (int), got 1.5", "1e+20 overflows
// int64".
type ConvertError struct{ Text string }

func (e *ConvertError) Error() string { return e.Text }

// CannotConvert is the error of a value described by what (JSType's text)
// that type to cannot take.
func CannotConvert(what string, to reflect.Type) error {
	return &ConvertError{"cannot convert " + what + " to " + to.String()}
}

// JSType describes a decoded value for an error's text: "a string", "a
// number", "a boolean", "an array", "an object", or its Go type.
func JSType(a any) string {
	switch a.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a value of Go type %T", a)
}

var typeAny = reflect.TypeFor[any]()

// Convert converts a decoded value (DecodeBinary's) to type t, as a host
// function's parameter of that type receives it: undefined and null (and
// a missing argument) as the zero value; a value of a type assignable to t
// as it is; a number to an integer type only when integral and in range; a
// bool, string or number to a type of the same kind; a typed array to a
// slice of its element type; anything else (structs, other slices and
// maps) through encoding/json, with its rules for names and types (NaN
// and the infinities, which JSON has no number for, to no type but a
// number's).
func Convert(a any, t reflect.Type) (reflect.Value, error) {
	nv := reflect.New(t).Elem()
	return nv, ConvertInto(a, nv)
}

// ConvertInto is Convert into dst, a settable zero value of its type.
func ConvertInto(a any, dst reflect.Value) error {
	t := dst.Type()
	if t == typeAny {
		if a != nil {
			dst.Set(reflect.ValueOf(&a).Elem())
		}
		return nil
	}
	switch a.(type) {
	case nil, js.Undefined:
		return nil
	}
	v := reflect.ValueOf(a)
	if v.Type().AssignableTo(t) {
		dst.Set(v)
		return nil
	}
	if f, ok := a.(float64); ok {
		if numeric, err := SetNumber(f, dst); numeric {
			return err
		}
		// NaN and the infinities are numbers: JSON's null for them would
		// make any other type's zero value.
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return CannotConvert(JSType(a), t)
		}
	}
	if v.Kind() == t.Kind() && isScalar(t.Kind()) && v.Type().ConvertibleTo(t) {
		dst.Set(v.Convert(t))
		return nil
	}
	// A typed array (Float64Array, BigInt64Array …) to a slice of its
	// element type: []float64, []int64, a named slice type of the user's.
	if t.Kind() == reflect.Slice && v.Kind() == reflect.Slice && t.Elem() == v.Type().Elem() && TypedName(v.Type()) != "" {
		dst.Set(v.Convert(t))
		return nil
	}
	return viaJSON(a, dst)
}

// viaJSON converts a value through encoding/json: structs, typed slices
// and maps, with its rules for field names and types.
func viaJSON(a any, dst reflect.Value) error {
	b, err := json.Marshal(js.JSONValue(a))
	if err != nil {
		return CannotConvert(JSType(a), dst.Type())
	}
	if err := json.Unmarshal(b, dst.Addr().Interface()); err != nil {
		return CannotConvert(JSType(a), dst.Type())
	}
	return nil
}

func isScalar(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// SetNumber sets dst to the number f as Convert converts it, if dst is of
// a numeric kind, and reports whether it is: an integer kind takes f only
// when it is integral and in range (IntOf, UintOf).
func SetNumber(f float64, dst reflect.Value) (numeric bool, err error) {
	switch dst.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := IntOf(f, dst.Type())
		if err == nil {
			dst.SetInt(n)
		}
		return true, err
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := UintOf(f, dst.Type())
		if err == nil {
			dst.SetUint(n)
		}
		return true, err
	case reflect.Float32, reflect.Float64:
		dst.SetFloat(f)
		return true, nil
	}
	return false, nil
}

// IntOf is a number as a value of the signed integer type t: integral and
// in range, or an error that says which it is not.
func IntOf(f float64, t reflect.Type) (int64, error) {
	if f != math.Trunc(f) || math.IsInf(f, 0) {
		return 0, &ConvertError{fmt.Sprintf("expected an integer (%s), got %v", t, f)}
	}
	n := int64(f)
	if bits := t.Bits(); bits < 64 {
		n = n << (64 - bits) >> (64 - bits) // what SetInt keeps
	}
	if float64(n) != f {
		return 0, &ConvertError{fmt.Sprintf("%v overflows %s", f, t)}
	}
	return n, nil
}

// UintOf is a number as a value of the unsigned integer type t: integral,
// not negative and in range, or an error that says which it is not.
func UintOf(f float64, t reflect.Type) (uint64, error) {
	if f != math.Trunc(f) || f < 0 || math.IsInf(f, 0) {
		return 0, &ConvertError{fmt.Sprintf("expected a non-negative integer (%s), got %v", t, f)}
	}
	n := uint64(f)
	if bits := t.Bits(); bits < 64 {
		n = n << (64 - bits) >> (64 - bits)
	}
	if float64(n) != f {
		return 0, &ConvertError{fmt.Sprintf("%v overflows %s", f, t)}
	}
	return n, nil
}

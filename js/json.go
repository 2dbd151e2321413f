package js

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"time"
)

// JSONValue returns v in a form encoding/json always encodes, replacing
// what JSON cannot hold as JSON.stringify would where it can: NaN and the
// infinities (in typed arrays too) become null; undefined becomes null; a
// bigint its decimal string; a *Map an array of [key, value] pairs; a *Set
// an array of its values; a *Boxed its value; an *Array its elements, as
// JSON.stringify drops an array's named properties; an invalid Date (the zero Time) null, and a Date
// outside the years 0 to 9999 its ISO text (+275760-09-13T00:00:00.000Z);
// a container met a second time, as in a cycle, null, so that no value
// expands without bound. Other values are returned as they are. It does not
// recurse, and it does not modify v. airlock's Result and Log JSON, and the
// agent layer's, encode values through it.
func JSONValue(v any) any {
	type frame struct {
		src any
		dst *any
	}
	type mapSlot struct {
		m    map[string]any
		k    string
		slot *any
	}
	var out any
	var slots []mapSlot
	stack := []frame{{v, &out}}
	seen := map[uintptr]bool{}
	first := func(x any) bool {
		p := reflect.ValueOf(x).Pointer()
		if p == 0 {
			return true
		}
		if seen[p] {
			return false
		}
		seen[p] = true
		return true
	}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := f.src.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				*f.dst = nil
			} else {
				*f.dst = x
			}
		case float32:
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				*f.dst = nil
			} else {
				*f.dst = x
			}
		case *big.Int:
			if x == nil {
				*f.dst = nil
			} else {
				*f.dst = x.String()
			}
		case Undefined:
			*f.dst = nil
		case time.Time:
			switch y := x.Year(); {
			case x.IsZero():
				*f.dst = nil
			case y < 0 || y > 9999:
				*f.dst = isoDate(x)
			default:
				*f.dst = x
			}
		case *Boxed:
			if x == nil {
				*f.dst = nil
				continue
			}
			stack = append(stack, frame{x.Value, f.dst})
		case *Array:
			if x == nil {
				*f.dst = nil
				continue
			}
			stack = append(stack, frame{x.Elements, f.dst})
		case []float64:
			*f.dst = finiteFloats(x)
		case []float32:
			*f.dst = finiteFloats(x)
		case Float64Array:
			*f.dst = finiteFloats(x)
		case Float32Array:
			*f.dst = finiteFloats(x)
		case map[string]any:
			if !first(x) {
				continue
			}
			m := make(map[string]any, len(x))
			for k, e := range x {
				slot := new(any)
				slots = append(slots, mapSlot{m, k, slot})
				stack = append(stack, frame{e, slot})
			}
			*f.dst = m
		case []any:
			if len(x) > 0 && !first(x) {
				continue
			}
			a := make([]any, len(x))
			for i := range x {
				stack = append(stack, frame{x[i], &a[i]})
			}
			*f.dst = a
		case *Map:
			if x == nil || !first(x) {
				continue
			}
			pairs := make([]any, len(x.Entries))
			for i, e := range x.Entries {
				pair := make([]any, 2)
				pairs[i] = pair
				stack = append(stack, frame{e.Key, &pair[0]}, frame{e.Value, &pair[1]})
			}
			*f.dst = pairs
		case *Set:
			if x == nil || !first(x) {
				continue
			}
			a := make([]any, len(x.Values))
			for i := range x.Values {
				stack = append(stack, frame{x.Values[i], &a[i]})
			}
			*f.dst = a
		default:
			*f.dst = x
		}
	}
	for _, s := range slots {
		s.m[s.k] = *s.slot
	}
	return out
}

// finiteFloats is a float typed array for JSON: as it is when every
// element is finite, else an array with null for the others.
func finiteFloats[F float32 | float64](a []F) any {
	for i, x := range a {
		if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			continue
		}
		out := make([]any, len(a))
		for j, y := range a {
			if j >= i && (math.IsNaN(float64(y)) || math.IsInf(float64(y), 0)) {
				continue
			}
			out[j] = y
		}
		return out
	}
	return a
}

// marshalJSONValue marshals a value as JSON, where NaN and the infinities,
// which JSON lacks, become null as in JSON.stringify.
func marshalJSONValue(v any) ([]byte, error) {
	return json.Marshal(JSONValue(v))
}

// isoDate formats t as Date.prototype.toISOString does, for a year outside
// 0 to 9999 too (+275760-09-13T00:00:00.000Z).
func isoDate(t time.Time) string {
	t = t.UTC()
	y := t.Year()
	var year string
	switch {
	case y >= 0 && y <= 9999:
		year = pad(strconv.Itoa(y), 4)
	case y < 0:
		year = "-" + pad(strconv.Itoa(-y), 6)
	default:
		year = "+" + pad(strconv.Itoa(y), 6)
	}
	return year + t.Format("-01-02T15:04:05.000Z")
}

func pad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

package airlock

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/airlockrun/airlock/js"
)

// FuzzInspect decodes arbitrary wire text, as values from the sandbox
// arrive, and formats what decodes: Inspect must never panic, must return
// valid UTF-8 when the strings in the value are, and must stay within its
// bound on bytes, whatever the shape (cycles and shared containers
// included: ["a",["r",0]] is an array that holds itself); JSONValue
// of it must always encode.
func FuzzInspect(f *testing.F) {
	for _, s := range []string{
		`1`, `"s"`, `["u"]`, `["n","NaN"]`, `["n","-0"]`, `["i","-123"]`, `["o","a",1,"self",["r",0]]`,
		`["a",["r",0],["a",["r",1],["r",0]]]`, `["h",5,0,1,4,2]`, `["m",["r",0],["s",["r",0],["r",1]]]`,
		`["d",0]`, `["d",null]`, `["d",8640000000000000]`, `["x","Float64Array","AAAAAAAA+H8="]`,
		`["x","BigInt64Array","//////////8="]`, `["b","AQI="]`, `["e","TypeError","it's \"quoted\"\n"]`,
		`["o","it's",["o","a b",["a","x\u0085y"]]]`,
		strings.Repeat(`["a",`, 3000) + "1" + strings.Repeat("]", 3000),
		`["a",["a",["a",["a",["a","leaf","leaf"],["r",4]],["r",3]],["r",2]],["r",1]]`,
	} {
		f.Add(s, 3, 5, 20, 400)
	}
	f.Fuzz(func(t *testing.T, s string, depth, items, chars, limit int) {
		v, err := decodeWire(s, 1<<20)
		if err != nil {
			return
		}
		limit = limit%100000 + 1
		if limit < 0 {
			limit = -limit
		}
		o := InspectOptions{Depth: depth % 2000, MaxArrayLength: items % 1000, MaxStringLength: chars % 1000, MaxBytes: limit}
		got := o.Inspect(v)
		const marker = len("... [truncated: more than  bytes]") + 20
		if len(got) > limit+marker {
			t.Fatalf("%d bytes for a bound of %d", len(got), limit)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		_ = Inspect(v)
		if _, err := json.Marshal(js.JSONValue(v)); err != nil {
			t.Fatalf("JSON of %s: %v", s, err)
		}
	})
}

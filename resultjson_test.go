package airlock_test

import (
	"encoding/json"
	"testing"

	"github.com/airlockrun/airlock"
)

// TestResultJSONNeverFails: the Result JSON of values JSON cannot hold.
// A Float64Array holding NaN, a Date past the year 9999 and an invalid
// Date made json.Marshal of the Result fail ("unsupported value: NaN",
// "year outside of range [0,9999]"); now they are encoded as JSON.stringify
// encodes them, and a cycle is cut.
func TestResultJSONNeverFails(t *testing.T) {
	res := runOpts(t, `const o = { n: NaN, inf: -Infinity, f64: new Float64Array([1, NaN]), f32: new Float32Array([Infinity]),
		far: new Date(8.64e15), invalid: new Date(NaN), big: 12n, u: undefined };
		o.self = o;
		console.log(o);
		report(o);
		export default o;`, airlock.Options{Report: func(any) {}})
	wantStatus(t, res, airlock.StatusSuccess)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Result  map[string]any   `json:"result"`
		Reports []map[string]any `json:"reports"`
		Logs    []struct {
			Args []map[string]any `json:"args"`
		} `json:"logs"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"big":"12","f32":[null],"f64":[1,null],"far":"+275760-09-13T00:00:00.000Z","inf":null,"invalid":null,"n":null,"self":null,"u":null}`
	for _, m := range []map[string]any{got.Result, got.Reports[0], got.Logs[0].Args[0]} {
		if b, _ := json.Marshal(m); string(b) != want {
			t.Errorf("got  %s\nwant %s", b, want)
		}
	}
}

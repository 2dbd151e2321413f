package airlock_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/airlockrun/airlock"
)

// inspectCase is a case of testdata/inspect/golden.json: a JavaScript
// expression, the util.inspect options it is shown with, and what Node
// 20 prints for it (testdata/inspect/gen.mjs writes the file from
// cases.json). Airlock is the expected text where Airlock's form differs
// from Node's on purpose, with Note saying why.
type inspectCase struct {
	Name    string `json:"name"`
	JS      string `json:"js"`
	Options struct {
		Depth           *int `json:"depth"`
		MaxArrayLength  int  `json:"maxArrayLength"`
		MaxStringLength int  `json:"maxStringLength"`
	} `json:"options"`
	Want    string `json:"want"`
	Airlock string `json:"airlock"`
	Note    string `json:"note"`
}

// TestInspectMatchesNode runs each case's expression in the sandbox and
// checks that Inspect shows the value that crossed as Node shows the
// value itself.
func TestInspectMatchesNode(t *testing.T) {
	b, err := os.ReadFile("testdata/inspect/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []inspectCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			v := evalJS(t, "export default ("+c.JS+");")
			opts := airlock.InspectOptions{MaxArrayLength: c.Options.MaxArrayLength, MaxStringLength: c.Options.MaxStringLength}
			if d := c.Options.Depth; d != nil {
				opts.Depth = *d
				if *d == 0 {
					opts.Depth = -1 // 0 is the default; a negative depth is 0
				}
			}
			want := c.Want
			if c.Airlock != "" {
				want = c.Airlock
			}
			if got := opts.Inspect(v); got != want {
				t.Errorf("Inspect(%s)\n got %s\nwant %s", c.JS, got, want)
			}
		})
	}
}

// TestInspectScriptError: a *ScriptError is shown as the JavaScript error
// it was, [Name: message], alone, inside a value and on a console line; a
// Go error as an Error with its text.
func TestInspectScriptError(t *testing.T) {
	e := &airlock.ScriptError{Name: "TypeError", Message: "x is not a function"}
	for _, c := range []struct {
		name string
		got  string
		want string
	}{
		{"alone", airlock.Inspect(e), "[TypeError: x is not a function]"},
		{"inside", airlock.Inspect(map[string]any{"err": e}), "{ err: [TypeError: x is not a function] }"},
		{"quoted", airlock.InspectOptions{QuoteString: true}.Inspect(e), "[TypeError: x is not a function]"},
		{"console line", airlock.Log{Args: []any{"failed:", e}}.Message(), "failed: [TypeError: x is not a function]"},
		{"Go error", airlock.Inspect(errors.New("disk full")), "[Error: disk full]"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.got, c.want)
		}
	}
}

package instrument

import (
	"reflect"
	"strings"
	"testing"
)

// Each found call is shown up to its first ")".
func TestAsyncCalls(t *testing.T) {
	named := func(n string) bool { return n == "f" || n == "g" }
	for code, want := range map[string][]string{
		`const a = f(1); a`:                                 nil,
		`const a = await f(1)`:                              {"f(1)"},
		`await Promise.all([f(1), g(2), h(3)])`:             {"f(1)", "g(2)"},
		`await Promise.all([1, 2].map(x => f(x)))`:          {"f(x)"},
		`await Promise.all([f(1).value])`:                   nil,
		`f(1).then(v => v)`:                                 {"f(1)"},
		`const s = "await f(1)"; f(2).x`:                    nil,
		`Promise.race([g(1)]); f(2)`:                        {"g(1)"},
		`for await (const x of [f(1)]) {}`:                  nil,
		`syntax error (`:                                    nil,
		`async function h() { return await f(1) } h()`:      {"f(1)"},
		`await Promise.allSettled([f(1), f(f(2).a)]); f(3)`: {"f(1)", "f(f(2)"},
	} {
		var got []string
		for _, off := range Parse(code).AsyncCalls(named) {
			end := strings.IndexByte(code[off:], ')')
			got = append(got, code[off:off+end+1])
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %q, want %q", code, got, want)
		}
	}
}

func TestThrows(t *testing.T) {
	code := "if (x) throw 'a string';\nfunction f() { throw { code: 5 } }\nthrow (new Error(\"e\"))"
	var got []string
	for _, sp := range Parse(code).Throws() {
		got = append(got, code[sp[0]:sp[1]])
	}
	if want := []string{"'a string'", "{ code: 5 }", "new Error(\"e\")"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if Parse("throw (").Throws() != nil {
		t.Fatal("found throws in code that does not parse")
	}
}

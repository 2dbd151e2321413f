package instrument

import "testing"

// FuzzCompletion: any code gives offsets inside it, or none.
//
//	go test -run '^$' -fuzz FuzzCompletion -fuzztime 1m ./internal/instrument
func FuzzCompletion(f *testing.F) {
	for _, s := range []string{"1 + 2", "import x from 'y';\nx()", "export default 1;\n2", "for await (const x of y) {}\nz", "`${a}`", "let[...A("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		s, e, ok := Parse(code).Completion()
		if ok && (s < 0 || e > len(code) || s >= e) {
			t.Fatalf("Completion(%q) = %d, %d", code, s, e)
		}
	})
}

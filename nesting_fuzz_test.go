package airlock_test

import (
	"context"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// FuzzNesting repeats a fragment thousands of times, between a prefix and a
// suffix, and gives the program to every entry point that parses code in the
// host: airlock.Run as TypeScript and as JavaScript, and the executor's
// ValidateCode. The seeds include nests hidden behind a slash or a comment
// that a scan without a parser may read the wrong way. The Go stack is capped at 64 MB while it runs: a shape that
// slips past the nesting bound and makes a parser recurse deeper than a few
// thousand levels crashes the fuzzer instead of passing unnoticed.
func FuzzNesting(f *testing.F) {
	for _, s := range []struct {
		pre, frag, post string
		n               uint16
	}{
		{"export default ", "(", "", 60000},
		{"export default ", "[", "", 60000},
		{"export default ", "{a:", "", 60000},
		{"", "{", "", 60000},
		{"export default ", "`${", "", 60000},
		{"export default ", "([{a:", "1", 30000},
		{"export default 1", ")", "", 60000},
		{"export default ", "(]", "", 60000},
		{"export default ", "!", "1", 60000},
		{"export default ", "a=>", "1", 60000},
		{"export default ", "1?1:", "1", 60000},
		{"export default Math", ".a", "", 60000},
		{"export default Math.max", "()", "", 60000},
		{"export default String.raw", "``", "", 60000},
		{"", "if(1)", ";", 60000},
		{"if(0);", "else if(0);", "", 60000},
		{"", "a:", ";", 60000},
		{"export default ", "<any>", "1", 60000},
		{"export default 1 as ", "Map<1,", "", 60000},
		{"export default ", "/(/.x(", "", 60000},
		{"export default ", "'('+(", "", 60000},
		{"export default ", "/*)*/(", "", 60000},
		{"export default ", "async x=>", "1", 60000},
		{"export default ", "x=>async x=>", "1", 60000},
		{"", "do ", ";", 60000},
		{"export default ", "new ", "Object", 60000},
		{"export default ", "1+(", "", 60000},
		// Nests behind a slash or a comment that a scan without a parser
		// may read the wrong way (nestingtest.Hidden).
		{"const x = {} / '/ ; ' ", "(", "", 60000},
		{"let as = 1; const x = as / '/ ; ' ", "(", "", 60000},
		{"let of = 1; const x = of / `/ ; ` + ", "[", "", 60000},
		{"let x: string[]\n/'/ + ", "(", "", 60000},
		{"let x\n/[//]/ + ", "(", "", 60000},
		{"for (;;) { break\n/\"/ + ", "(", "", 60000},
		{"let a = 1, b = 2; const x = a < b > /'/ ", "(", "", 60000},
		{"let a = 1\n!/'/ ", "(", "", 60000},
		{"const x = 1 <!-- `\n", "(", "", 60000},
		{"const x = 1\n--> /*\n", "(", "", 60000},
	} {
		f.Add(s.pre, s.frag, s.post, s.n)
	}
	old := debug.SetMaxStack(64 << 20)
	f.Cleanup(func() { debug.SetMaxStack(old) })
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, pre, frag, post string, n uint16) {
		if len(pre) > 64 || len(frag) > 16 || len(post) > 64 || frag == "" {
			return
		}
		src := pre + strings.Repeat(frag, int(n)) + post
		for _, lang := range []airlock.Language{airlock.TypeScript, airlock.JavaScript} {
			run, err := fuzzNestingRuntime().Run(ctx, src, airlock.Options{Language: lang})
			if err != nil {
				t.Fatal(err)
			}
			switch st := run.Wait().Status; st {
			case airlock.StatusSuccess, airlock.StatusError, airlock.StatusLinkError, airlock.StatusTerminated, airlock.StatusMemory:
			default:
				t.Fatalf("status %q", st)
			}
		}
		airlock.ValidateCode(strings.Replace(src, "export default ", "return ", 1), airlock.ExecutorOptions{})
	})
}

var fuzzNestingRuntime = sync.OnceValue(func() *airlock.Runtime {
	return airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: 2 * time.Second})
})

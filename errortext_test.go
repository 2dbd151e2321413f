package airlock_test

import (
	"context"
	"errors"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/airlockrun/airlock"
)

// cutMarker matches the line that says how much of a text was cut, as
// ClipText writes it, and captures the count.
var cutMarker = regexp.MustCompile(`\.\.\. \[truncated ([0-9,]+) characters\] \.\.\.`)

// cutCount is the count a text's markers state, in all.
func cutCount(s string) int {
	n := 0
	for _, m := range cutMarker.FindAllStringSubmatch(s, -1) {
		k, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		n += k
	}
	return n
}

// errorBytes is what an error's texts weigh.
func errorBytes(e *airlock.ScriptError) int {
	return len(e.Name) + len(e.Message) + len(e.Stack) + len(e.Filename) + len(e.Specifier)
}

// wantBounded checks that each text of e is at most MaxErrorText
// characters.
func wantBounded(t *testing.T, e *airlock.ScriptError) {
	t.Helper()
	for _, f := range []struct{ name, text string }{{"Name", e.Name}, {"Message", e.Message}, {"Stack", e.Stack}, {"Filename", e.Filename}, {"Specifier", e.Specifier}} {
		if n := utf8.RuneCountInString(f.text); n > airlock.MaxErrorText {
			t.Errorf("%s has %d characters, over MaxErrorText (%d)", f.name, n, airlock.MaxErrorText)
		}
	}
}

// The texts of a failure crossed to the host whole and outside the run's
// budget: an error's name and message, its stack, a thrown value's text
// and a rejection's reason. With a budget (MaxValueBytes) of 1 MiB, a
// program that threw an Error with a 16 MiB message gave the caller 16 MiB
// (any size up to the heap limit), in process and in a worker process.
// Each text is now cut in the sandbox, before it crosses, to MaxErrorText
// characters, keeping its head and its tail around ClipText's marker,
// which says how much was cut; a stack keeps its frames, each line cut to
// 1,000 characters.
func TestErrorText_Bounded(t *testing.T) {
	const budget = 1 << 20
	modes := []struct {
		name string
		rt   *airlock.Runtime
	}{
		{"in process", airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: budget})},
		{"worker", airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: budget, Workers: 1})},
	}
	for _, m := range modes {
		defer m.rt.Close()
	}
	const big = `const big = "<" + "x".repeat(16 << 20) + ">";`
	for _, tc := range []struct {
		name, src string
		text      func(*airlock.ScriptError) string // the text that was cut
		head      string                            // what it starts with
	}{
		{"Error message", big + `throw new Error(big)`, msg, "<xxx"},
		{"thrown string", big + `throw big`, msg, "<xxx"},
		{"thrown object", big + `throw { a: big }`, msg, `{"a": "<xxx`},
		{"rejection reason", big + `await Promise.reject(new TypeError(big))`, msg, "<xxx"},
		{"rejected string", big + `await Promise.reject(big)`, msg, "<xxx"},
		{"rejected export", big + `export default async () => { throw new RangeError(big) }`, msg, "<xxx"},
		{"name", big + `const e = new Error("m"); e.name = big; throw e`, func(e *airlock.ScriptError) string { return e.Name }, "<xxx"},
		{"message getter", big + `const e = new Error(); Object.defineProperty(e, "message", { get: () => big }); throw e`, msg, "<xxx"},
		{"stack property", big + `const e = new Error("m"); e.stack = big; throw e`, nil, ""},
		{"symbol", big + `throw Symbol(big)`, msg, "Symbol(<xxx"},
		{"deep frames with long names", `const n = "f".repeat(1 << 20);
			const o = { [n]: function (d) { if (d > 0) return o[n](d - 1); throw new Error("deep") } };
			o[n](20)`, func(e *airlock.ScriptError) string { return e.Stack }, "    at fff"},
		{"many frames with long names", `Error.stackTraceLimit = 1e9; const n = "f".repeat(1 << 16);
			const o = { [n]: function (d) { if (d > 0) return o[n](d - 1); throw new Error("deep") } };
			o[n](1000)`, func(e *airlock.ScriptError) string { return e.Stack }, "    at fff"},
	} {
		for _, m := range modes {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				ex, err := m.rt.Run(context.Background(), tc.src, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 256 << 20})
				if err != nil {
					t.Fatal(err)
				}
				res := ex.Wait()
				wantStatus(t, res, airlock.StatusError)
				e := res.Error
				wantBounded(t, e)
				if n := errorBytes(e); n > budget/4 {
					t.Errorf("the error weighs %d bytes", n)
				}
				if tc.text == nil {
					return
				}
				s := tc.text(e)
				if !strings.HasPrefix(s, tc.head) {
					t.Errorf("the text starts %.40q, want %q", s, tc.head)
				}
				if cutCount(s) == 0 {
					t.Errorf("no marker says what was cut: %.200q", s)
				}
				if tc.head == "<xxx" && (!strings.HasSuffix(s, "xx>") || utf8.RuneCountInString(s) != airlock.MaxErrorText || cutCount(s) != 16<<20+2-(airlock.MaxErrorText-len(cutMarker.FindString(s))-2)) {
					t.Errorf("want the head and tail of the text, %d characters in all, and a marker that counts the rest: %d characters, ending %q, marker %q",
						airlock.MaxErrorText, utf8.RuneCountInString(s), s[max(0, len(s)-10):], cutMarker.FindString(s))
				}
			})
		}
	}
}

var framePos = regexp.MustCompile(`\(<runCode>:2:\d+\)$`)

// A stack whose frames have long function names keeps its frames, with
// positions mapped to the source, each name cut in its line.
func TestErrorText_StackKeepsFrames(t *testing.T) {
	res := runOpts(t, `const n = "f".repeat(1 << 20);
const o = { [n]: function (d) { if (d > 0) return o[n](d - 1); throw new Error("deep") } };
o[n](3)`, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	lines := strings.Split(res.Error.Stack, "\n")
	if len(lines) != 5 {
		t.Fatalf("%d frames, want 5:\n%.2000s", len(lines), res.Error.Stack)
	}
	for _, l := range lines[:4] {
		if !framePos.MatchString(l) || cutCount(l) == 0 || len(l) > 1100 {
			t.Errorf("frame %.60q…%q (%d bytes): want a cut name and its position", l, l[max(0, len(l)-30):], len(l))
		}
	}
	if res.Error.Line != 2 {
		t.Errorf("line %d, want 2", res.Error.Line)
	}
	// Past MaxErrorText, the innermost frames are kept and a last line
	// says how much of the rest was cut.
	res = runOpts(t, `Error.stackTraceLimit = 1e9; const n = "f".repeat(1 << 16);
const o = { [n]: function (d) { if (d > 0) return o[n](d - 1); throw new Error("deep") } };
o[n](1000)`, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	lines = strings.Split(res.Error.Stack, "\n")
	last := lines[len(lines)-1]
	if len(lines) < 10 || !strings.HasPrefix(last, "    ... [truncated ") || cutCount(last) < 900<<16 {
		t.Errorf("%d lines, the last %q: want the innermost frames and a line that says how much was cut", len(lines), last)
	}
	for _, l := range lines[:len(lines)-1] {
		if !framePos.MatchString(l) {
			t.Errorf("frame %.60q…: no position", l)
		}
	}
}

// The texts of an error count against the run's budget for values that
// cross (MaxValueBytes): a run that spent most of it before it threw gets
// its error cut to what is left, the marker saying how much was cut.
func TestErrorText_CountsAgainstBudget(t *testing.T) {
	const budget = 1 << 20
	for _, workers := range []int{0, 1} {
		rt := airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: budget, Workers: workers})
		defer rt.Close()
		t.Run("workers="+strconv.Itoa(workers), func(t *testing.T) {
			spent := 0
			ex, err := rt.Run(context.Background(), `const s = "y".repeat(1000);
				for (;;) { try { sink(s) } catch { break } }
				throw new Error("<" + "x".repeat(16 << 20) + ">")`, airlock.Options{
				Language: airlock.JavaScript,
				Globals:  map[string]any{"sink": func(s string) { spent += len(s) }},
			})
			if err != nil {
				t.Fatal(err)
			}
			res := ex.Wait()
			wantStatus(t, res, airlock.StatusError)
			// Each call pays its argument's bytes and what decoding them
			// costs (in worker-process mode the list of its arguments, in
			// the binary format, with a value's and a list's allowance).
			if spent < budget*8/10 {
				t.Fatalf("the sink took %d bytes; want the budget spent", spent)
			}
			msg := res.Error.Message
			if len(msg) > 2000 || !strings.HasPrefix(msg, "<") || cutCount(msg) < 16<<20-2000 {
				t.Errorf("message %.100q (%d bytes): want what was left of the budget, and a marker that says how much was cut", msg, len(msg))
			}
		})
	}
}

// A step's error message came back twice, in ExecutorError.Message and in
// Details, whole: past the step's budget for values that cross. It is now
// cut in the sandbox to MaxErrorText characters, counted against the
// step's budget once, and held once: Details' message is the same text as
// Message's.
func TestErrorText_ExecutorStep(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{Timeout: time.Minute})
	defer ex.Cleanup(context.Background())
	if err := ex.SendTools(context.Background(), map[string]any{"fail": func() error { return errors.New("<" + strings.Repeat("t", 16<<20) + ">") }}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, code string }{
		{"Error", `throw new TypeError("<" + "x".repeat(16 << 20) + ">")`},
		{"string", `throw "<" + "x".repeat(16 << 20) + ">"`},
		{"rejection", `await Promise.reject(new Error("<" + "x".repeat(16 << 20) + ">"))`},
		{"name", `const e = new Error("<m>"); e.name = "N".repeat(16 << 20); throw e`},
		{"tool", `fail()`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ex.Run(context.Background(), tc.code)
			var ee *airlock.ExecutorError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v", err)
			}
			msg, _ := ee.Details["message"].(string)
			name, _ := ee.Details["name"].(string)
			total := len(ee.Message) + len(msg) + len(name)
			if n := utf8.RuneCountInString(msg); n > airlock.MaxErrorText || !strings.HasPrefix(msg, "<") || !strings.HasSuffix(msg, ">") {
				t.Errorf("details' message: %d characters, %.30q…", n, msg)
			}
			if n := utf8.RuneCountInString(name); n > airlock.MaxErrorText {
				t.Errorf("details' name: %d characters", n)
			}
			if !strings.Contains(ee.Message, msg) || !sameText(ee.Message, msg) {
				t.Errorf("the message is held twice, or Message lacks it: Message %.60q…, %d bytes in all", ee.Message, total)
			}
			if total > 200<<10 {
				t.Errorf("the error holds %d bytes", total)
			}
		})
	}
}

func msg(e *airlock.ScriptError) string { return e.Message }

// sameText reports whether sub is held in the memory of s: one copy of the
// text, not two.
func sameText(s, sub string) bool {
	if sub == "" {
		return true
	}
	p, q := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(sub)))
	return q >= p && q+uintptr(len(sub)) <= p+uintptr(len(s))
}

// A failure's texts are cut before they cross: the host never copies the
// whole text out of the sandbox. Reading the text whole, then cutting it,
// made the host allocate it (and more, for the stack's mapping); the bytes
// the Go heap allocates during a run that throws 24 MiB of text stay far
// below that. A module specifier is refused unread past 4 KiB: the
// resolver made six candidate paths of an import("./" + s) and quoted s in
// its error, 720 MiB of host allocations for a 48 MiB s.
func TestErrorText_NotCopiedWhole(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations are not the program's")
	}
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: -1})
	defer rt.Close()
	wrt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1})
	defer wrt.Close()
	const big = `const big = "x".repeat(24 << 20);`
	for _, tc := range []struct{ name, src string }{
		{"message", big + `throw new Error(big)`},
		{"name", big + `const e = new Error("m"); e.name = big; throw e`},
		{"stack", big + `const e = new Error("m"); e.stack = big; throw e`},
		{"thrown string", big + `throw big`},
		{"rejection", big + `await Promise.reject(new Error(big))`},
		{"file name", big + `const e = new Error("m"); e.fileName = big; throw e`},
		{"import specifier", big + `await import("./" + big)`},
		{"import specifier caught", big + `try { await import(big) } catch {} throw new Error("m")`},
	} {
		for _, m := range []struct {
			name string
			rt   *airlock.Runtime
		}{{"in process", rt}, {"worker", wrt}} {
			t.Run(m.name+"/"+tc.name, func(t *testing.T) {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				ex, err := m.rt.Run(context.Background(), tc.src, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 256 << 20})
				if err != nil {
					t.Fatal(err)
				}
				res := ex.Wait()
				runtime.ReadMemStats(&after)
				wantStatus(t, res, airlock.StatusError)
				if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
					t.Errorf("the host allocated %d MiB for the run", n>>20)
				}
				if tc.name == "import specifier" && !strings.Contains(res.Error.Message, "module specifier is 25165826 bytes long, over the bound of 4096 bytes") {
					t.Errorf("error %.300v", res.Error)
				}
			})
		}
	}
}

// The engine's own messages need no cut: QuickJS formats each into a
// 256-byte buffer, whatever names it quotes (RATIONALE.md, "A failure's
// texts are cut in the sandbox"). Only the texts a program makes grow.
func TestErrorText_EngineMessagesShort(t *testing.T) {
	long := strings.Repeat("k", 5000)
	for _, src := range []string{
		long + `.c`,
		`null["` + long + `"]`,
		`undefined.` + long,
	} {
		res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript})
		wantStatus(t, res, airlock.StatusError)
		if n := len(res.Error.Message); n > 255 || !strings.Contains(res.Error.Message, "kkk") {
			t.Errorf("%.40s…: a message of %d bytes: %.80q", src, n, res.Error.Message)
		}
	}
}

package airlock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

// The functions of numbers, strings and booleans a program calls most are
// called without boxing their arguments; they keep the conversions and
// errors of every bridged function.
func TestHostCall_TypedShapes(t *testing.T) {
	globals := map[string]any{
		"inc":   func(x float64) float64 { return x + 1 },
		"half":  func(x float64) (float64, error) { return x / 2, nil },
		"neg":   func(x float64) (float64, error) { return 0, errors.New("no negatives: " + strings.Repeat("n", 600)) },
		"add":   func(a, b float64) float64 { return a + b },
		"upper": func(s string) string { return strings.ToUpper(s) },
		"check": func(s string) (string, error) {
			if s == "" {
				return "", errors.New("empty")
			}
			return s + "!", nil
		},
		"size":  func(s string) float64 { return float64(len(s)) },
		"isYes": func(s string) bool { return s == "yes" },
	}
	src := `const caught = (f) => { try { return f() } catch (e) { return e.constructor.name + ": " + e.message } };
	export default [inc(1), inc(), inc(null), inc(undefined), inc(2.5, "extra"), half(5), add(2, 3), add(2),
		upper("héllo 😀"), upper(), check("a"), caught(() => check("")), size("ü"), isYes("yes"), isYes("no"),
		caught(() => inc("1")), caught(() => inc(true)), caught(() => upper(1)), caught(() => add(1, "2")),
		caught(() => neg(1)).length, typeof inc(0)]`
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript, Globals: globals})
	want := []any{2.0, 1.0, 1.0, 1.0, 3.5, 2.5, 5.0, 2.0,
		"HÉLLO 😀", "", "a!", "Error: empty", 2.0, true, false,
		"Error: argument 1: cannot convert a string to float64", "Error: argument 1: cannot convert a boolean to float64",
		"Error: argument 1: cannot convert a number to string", "Error: argument 2: cannot convert a string to float64",
		float64(len("Error: no negatives: ") + 600), "number"}
	wantResult(t, res, want)
}

// Objects given to a typed function fail as they fail for any function of
// a float64 or string parameter; Async keeps its promise.
func TestHostCall_TypedShapesOtherArguments(t *testing.T) {
	inc := func(x float64) float64 { return x + 1 }
	res := runOpts(t, `const caught = (f) => { try { return f() } catch (e) { return e.message } };
	export default [caught(() => inc({})), caught(() => inc([1])), await ainc(1)]`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"inc": inc, "ainc": airlock.Async(inc)}})
	wantResult(t, res, []any{"argument 1: cannot convert an object to float64", "argument 1: cannot convert an array to float64", 2.0})
}

// The text of an answer crosses whole at every size: text shorter than the
// buffer a call offers comes with the answer, longer text is fetched; a
// string, an error's message, JSON text, each around the buffer's size.
func TestHostCall_AnswerTextSizes(t *testing.T) {
	echo := func(s string) string { return s }
	fail := func(s string) (string, error) { return "", errors.New(s) }
	jsonEcho := airlock.JSONFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		return args[1 : len(args)-1], nil
	})
	src := `const out = [];
	for (const n of [0, 1, 2, 255, 256, 508, 509, 510, 511, 512, 513, 1000, 5000]) {
		for (const unit of ["a", "é", "😀"]) {
			const s = unit.repeat(n);
			let m = "";
			try { fail(s) } catch (e) { m = e.message }
			const j = jsonEcho({ s }).s;
			if (echo(s) !== s || m !== s || j !== s) out.push(n + " " + unit);
		}
	}
	export default out.length === 0 ? "ok" : out.join(", ")`
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript,
		Globals: map[string]any{"echo": echo, "fail": fail, "jsonEcho": jsonEcho}})
	wantResult(t, res, "ok")
}

// A lone surrogate a typed function gives back crosses as it came, as it
// does through any other function.
func TestHostCall_TypedLoneSurrogate(t *testing.T) {
	echo := func(s string) string { return s }
	res := runOpts(t, `const r = echo("a\ud800b"); export default [r.length, r.charCodeAt(1)]`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"echo": echo}})
	wantResult(t, res, []any{3.0, float64(0xd800)})
}

// Typed calls pay the run's value budget: arguments and answers.
func TestHostCall_TypedBudget(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: 64 << 10})
	for _, c := range []struct {
		name string
		fn   any
		src  string
	}{
		{"arguments", func(s string) float64 { return float64(len(s)) }, `const s = "x".repeat(1000); let n = 0;
			try { for (let i = 0; i < 1000; i++) n += f(s) } catch (e) { n = e.message }
			export default n`},
		{"answers", func(n float64) string { return strings.Repeat("y", int(n)) }, `let n = 0;
			try { for (let i = 0; i < 1000; i++) n += f(1000).length } catch (e) { n = e.message }
			export default n`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex, err := rt.Run(context.Background(), c.src, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"f": c.fn}})
			if err != nil {
				t.Fatal(err)
			}
			res := ex.Wait()
			wantStatus(t, res, airlock.StatusSuccess)
			if s, _ := res.Result.(string); !strings.Contains(s, "MaxValueBytes") {
				t.Fatalf("the budget did not stop the calls: %v", res.Result)
			}
		})
	}
}

// A typed function's panic ends the run with an error that reveals nothing
// of it; a Terminate during a typed call stops the run, and the program
// calls nothing more.
func TestHostCall_TypedPanicAndStop(t *testing.T) {
	res := runOpts(t, `try { boom(1) } catch (e) {} for (let i = 0; i < 1e6; i++) {} export default "swallowed"`,
		airlock.Options{Globals: map[string]any{"boom": func(float64) float64 { panic("secret panic text") }}})
	wantStatus(t, res, airlock.StatusError)
	if b, _ := json.Marshal(res); strings.Contains(string(b), "secret") {
		t.Fatalf("panic text leaked: %s", b)
	}

	var ex *airlock.Execution
	var calls atomic.Int32
	ready := make(chan struct{})
	stopNow := func(x float64) float64 {
		if calls.Add(1) == 1 {
			<-ready
			ex.Terminate("stopped by the host function")
		}
		return x
	}
	var err error
	ex, err = testRuntime().Run(context.Background(), `for (let i = 0; i < 1e6; i++) { try { stopNow(i) } catch (e) {} }
		export default "finished"`, airlock.Options{Globals: map[string]any{"stopNow": stopNow}})
	if err != nil {
		t.Fatal(err)
	}
	close(ready)
	wantStatus(t, ex.Wait(), airlock.StatusTerminated)
	if n := calls.Load(); n != 1 {
		t.Fatalf("the host function ran %d times", n)
	}
}

// Every argument list reaches a host function the same way, whichever way
// the sandbox sends it: primitives only, up to the most that travel as
// slots of the call (14), more than that, or primitives before a value
// that is not one (the whole list is encoded then).
func TestHostCall_ArgumentPaths(t *testing.T) {
	describe := func(args ...any) string {
		b, err := json.Marshal(args)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%d %s", len(args), b)
	}
	// rope: a concatenation QuickJS keeps as a rope, not flat text.
	src := `const rope = "a".repeat(3000) + String(Math.random()).slice(0, 0) + "b".repeat(3000);
	const prims = [1, -0.5, 2 ** 40, true, false, null, "a", "é😀", "x".repeat(600), rope, 7, 8, 9, 10];
	const out = [];
	for (let n = 0; n <= 16; n++) out.push(d(...prims.slice(0, n)));
	out.push(d(...prims, 11, 12, 13));
	out.push(d("é", 1, {k: 2}), d("é", 1, [3]), d(undefined, 4));
	export default out`
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"d": describe}})
	prims := []any{1, -0.5, float64(1 << 40), true, false, nil, "a", "é😀", strings.Repeat("x", 600), strings.Repeat("a", 3000) + strings.Repeat("b", 3000), 7, 8, 9, 10}
	var want []any
	for n := 0; n <= 16; n++ {
		want = append(want, describe(prims[:min(n, len(prims))]...))
	}
	want = append(want, describe(append(append([]any{}, prims...), 11, 12, 13)...),
		describe("é", 1, map[string]any{"k": 2}), describe("é", 1, []any{3}), describe(js.Undefined{}, 4))
	wantResult(t, res, want)
}

// A host function takes any number of arguments: more primitives than the
// engine's host call carries cross encoded.
func TestHostCall_ManyPrimitiveArguments(t *testing.T) {
	count := func(args ...any) int { return len(args) }
	res := runOpts(t, `export default [count(1,2,3,4,5,6,7,8,9,10,11,12,13,14), count(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15),
		count(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16), count(...Array(40).fill(1)), count(...Array(40).fill(1), {})]`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"count": count}})
	wantResult(t, res, []any{14.0, 15.0, 16.0, 40.0, 41.0})
}

// The text of string arguments is freed when a value after them has the
// whole list encoded: a program that makes such calls in a loop does not
// run out of memory.
func TestHostCall_TextFreedWhenListEncoded(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: 1 << 30, MaxDuration: 60 * time.Second})
	f := func(s string, _ any) float64 { return float64(len(s)) }
	// Each call converts 1 MiB of text; 200 calls would hold 200 MiB if
	// the text were kept, over the 64 MiB heap.
	ex, err := rt.Run(context.Background(), `const s = "é".repeat(1 << 19); let n = 0;
		for (let i = 0; i < 200; i++) n += f(s, {});
		export default n`,
		airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 64 << 20, Globals: map[string]any{"f": f}})
	if err != nil {
		t.Fatal(err)
	}
	res := ex.Wait()
	wantStatus(t, res, airlock.StatusSuccess)
	wantResult(t, res, float64(200<<20))
}

// Replies of every kind follow one another in one run, each its own: the
// engine keeps one place for a call's reply, written anew by every call.
func TestHostCall_RepliesInSequence(t *testing.T) {
	globals := map[string]any{
		"num":  func(x float64) float64 { return x * 2 },
		"str":  func(s string) string { return s + "!" },
		"fail": func(x float64) (float64, error) { return 0, errors.New("failed " + fmt.Sprint(x)) },
		"any": func(k string) any {
			switch k {
			case "obj":
				return map[string]any{"k": 1.0}
			case "nil":
				return nil
			case "bool":
				return true
			}
			return js.Undefined{}
		},
		"later": airlock.Async(func(x float64) float64 { return x + 1 }),
	}
	src := `const caught = (f) => { try { return f() } catch (e) { return "E " + e.message } };
	const out = [];
	for (let i = 0; i < 3; i++) {
		out.push(num(i), caught(() => fail(i)), any("obj"), str("s" + i), any("nil"), typeof any("undef"), any("bool"), num(i + 10));
		out.push(await later(i));
	}
	export default out`
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript, Globals: globals})
	var want []any
	for i := 0; i < 3; i++ {
		x := float64(i)
		want = append(want, 2*x, "E failed "+fmt.Sprint(i), map[string]any{"k": 1.0}, "s"+fmt.Sprint(i)+"!", nil, "undefined", true, 2*(x+10), x+1)
	}
	wantResult(t, res, want)
}

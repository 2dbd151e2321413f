package airlock_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
)

// echoJSON returns the JSON text of its argument list as it received it.
var echoJSON = airlock.JSONFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	return args, nil
})

func TestJSONFunc_ArgumentsAndResult(t *testing.T) {
	res := runOpts(t, `
		const d = new Date(0);
		export default {
			args: echo({ a: 1, skip: undefined, when: d, nested: [1, undefined, "x"] }, 2),
			none: echo(),
		};`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"echo": echoJSON}})
	wantStatus(t, res, airlock.StatusSuccess)
	want := map[string]any{
		"args": []any{map[string]any{"a": 1.0, "when": "1970-01-01T00:00:00.000Z", "nested": []any{1.0, nil, "x"}}, 2.0},
		"none": []any{},
	}
	wantResult(t, res, want)
}

func TestJSONFunc_EmptyResultIsUndefined(t *testing.T) {
	nothing := airlock.JSONFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	res := runOpts(t, `export default typeof f({})`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"f": nothing}})
	wantResult(t, res, "undefined")
}

func TestJSONFunc_ErrorsAndBadOutput(t *testing.T) {
	failing := airlock.JSONFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("no such city")
	})
	broken := airlock.JSONFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"a":`), nil
	})
	panicking := airlock.JSONFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { panic("boom") })
	res := runOpts(t, `
		const out = [];
		for (const f of [failing, broken]) { try { f(1); } catch (e) { out.push(e.message); } }
		try { f(1n); } catch (e) { out.push(e.name); }
		const c = {}; c.c = c;
		try { f(c); } catch (e) { out.push(e.name); }
		export default out;`, airlock.Options{Language: airlock.JavaScript,
		Globals: map[string]any{"failing": failing, "broken": broken, "f": echoJSON}})
	wantStatus(t, res, airlock.StatusSuccess)
	got := res.Result.([]any)
	if got[0] != "no such city" || !strings.Contains(got[1].(string), "not JSON") || got[2] != "TypeError" || got[3] != "TypeError" {
		t.Fatalf("got %v", got)
	}
	res = runOpts(t, `p(1)`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"p": panicking}})
	wantStatus(t, res, airlock.StatusError)
	if strings.Contains(res.Error.Message, "boom") {
		t.Fatalf("the panic's value leaked: %v", res.Error.Message)
	}
}

func TestJSONFunc_AsyncRunsConcurrently(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	wait := airlock.Async(airlock.JSONFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return args, nil
	}))
	go func() { <-started; <-started; close(release) }()
	res := runOpts(t, `export default await Promise.all([w("a"), w("b")])`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"w": wait}})
	wantResult(t, res, []any{[]any{"a"}, []any{"b"}})
}

func TestJSONFunc_ExecutorTool(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	if err := ex.SendTools(context.Background(), map[string]any{"echo": echoJSON}); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, ex, `final_answer(echo({ city: "Oslo" })[0].city)`)
	if out.Output != "Oslo" {
		t.Fatalf("output = %v", out.Output)
	}
}

// The globals module once had its own bindings p, G and I: a global of one
// of those names was a link error ("invalid redefinition of global identifier").
// It is now the engine's native module, whose one export beyond the
// globals, the bridged modules, has a name no identifier can take.
func TestGlobals_NamesOfTheGlobalsModule(t *testing.T) {
	res := runOpts(t, `import { v } from "pkg"; import { w } from "./m.js"; export default p + G + I + v + w`, airlock.Options{Language: airlock.JavaScript,
		Globals: map[string]any{"p": 1, "G": 2, "I": 3},
		Imports: map[string]airlock.Module{"pkg": {"v": 4}},
		Modules: map[string]string{"./m.js": `import { v } from "pkg"; export const w = v + p;`}})
	wantResult(t, res, 15.0)
}

// A JSONFunc gets the text JSON.stringify gives for its argument list,
// whether the host writes it (plain data) or the engine does (a getter, a
// Date, toJSON), and code in the arguments runs once per call, as in
// JSON.stringify.
func TestJSONFunc_ArgumentTextIsStringify(t *testing.T) {
	text := airlock.JSONFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(string(args))
	})
	res := runOpts(t, `
		let reads = 0;
		const cases = [
			[{ n: 1, tag: "x" }],
			[-0, 1e21, 1.5e-7, NaN, 0.1, 2 ** 31],
			["\ud800", "\u2028\u0000\"\\", "😀", { "\udc00": [undefined, Symbol(), null] }],
			[{ b: 1, a: 2, 10: 3, 2: 4 }, Object.assign(Object.create(null), { z: true })],
			[{ get g() { reads++; return 1; } }, new Date(0), [1, , 2]],
			[{ toJSON() { reads++; return "t"; } }],
		];
		const bad = [];
		for (const args of cases) {
			const got = text(...args), want = JSON.stringify(args);
			if (got !== want) bad.push({ got, want });
		}
		Array.prototype.toJSON = function () { reads++; return "a"; };
		const got = text([1]), want = JSON.stringify([[1]]);
		if (got !== want) bad.push({ got, want });
		export default { bad, reads };`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"text": text}})
	wantResult(t, res, map[string]any{"bad": []any{}, "reads": 6.0}) // each of three once in text() and once in JSON.stringify
}

// An answer nested deeper than the engine's parser goes is an error the
// program can catch, which says so.
func TestJSONFunc_AnswerTooDeep(t *testing.T) {
	deep := airlock.JSONFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(strings.Repeat("[", 200000) + strings.Repeat("]", 200000)), nil
	})
	res := runOpts(t, `let r; try { r = typeof deep(); } catch (e) { r = e.message; } export default r;`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"deep": deep}})
	wantResult(t, res, "airlock: the sandbox could not hold the answer of the host function (out of memory, or nested too deep)")
}

// Bytes of an answer that are not UTF-8 are U+FFFD each, as in any string
// that crosses.
func TestJSONFunc_AnswerNotUTF8(t *testing.T) {
	bad := airlock.JSONFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage("[\"a\xffb\", \"\xed\xa0\x80\", \"ok\"]"), nil
	})
	res := runOpts(t, `export default bad()`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"bad": bad}})
	wantResult(t, res, []any{"a\uFFFDb", "\uFFFD\uFFFD\uFFFD", "ok"})
}

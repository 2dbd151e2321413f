package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// enc encodes a Go value in the codec's binary format
// (internal/qjs/shim/codec.c), as the host side does: nil, bool, float64,
// string, []any, map[string]any (its keys sorted) and hostFn.
func enc(v any) []byte {
	var values, objects uint32
	b := []byte{0xB1, 0, 0, 0, 0, 0, 0, 0, 0}
	u32 := func(n int) { b = binary.LittleEndian.AppendUint32(b, uint32(n)) }
	str := func(s string) { u32(len(s)); b = append(b, s...) }
	var walk func(v any)
	walk = func(v any) {
		values++
		switch x := v.(type) {
		case nil:
			b = append(b, 1)
		case bool:
			b = append(b, map[bool]byte{false: 2, true: 3}[x])
		case float64:
			b = append(b, 4)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		case string:
			b = append(b, 6)
			str(x)
		case []any:
			objects++
			b = append(b, 10)
			u32(len(x))
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			objects++
			b = append(b, 9)
			u32(len(x))
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				str(k)
				walk(x[k])
			}
		case hostFn:
			b = append(b, 21)
			u32(x.id)
			str(x.name)
			b = append(b, byte(x.mode))
		default:
			panic(fmt.Sprintf("enc: %T", v))
		}
	}
	walk(v)
	binary.LittleEndian.PutUint32(b[1:], values)
	binary.LittleEndian.PutUint32(b[5:], objects)
	return b
}

// hostFn is a host function in enc's values.
type hostFn struct {
	id   int
	name string
	mode int
}

// asyncQueue is the host's queue of finished asynchronous calls, as a
// Job's Take, Ready and Pending see it.
type asyncQueue struct {
	mu    sync.Mutex
	done  []Completion
	ready chan struct{}
}

func (q *asyncQueue) finish(c Completion) {
	q.mu.Lock()
	q.done = append(q.done, c)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *asyncQueue) job(j *Job) {
	q.ready = make(chan struct{}, 1)
	j.Ready = q.ready
	j.Take = func() (Completion, bool) {
		q.mu.Lock()
		defer q.mu.Unlock()
		if len(q.done) == 0 {
			return Completion{}, false
		}
		c := q.done[0]
		q.done = q.done[1:]
		return c, true
	}
	j.Pending = func() int {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.done)
	}
}

// transportJob is a job whose globals are the console (0), host functions
// f (1, plain), g (2, plain, asynchronous) and h (3, JSON), data, and the
// built-in report (5), and whose one bridged module is {k: 3}. f answers a
// primitive with the primitive (a string doubled, a number plus one), an
// encoded list with the encoding of {back: <its length in bytes>}, and
// "err" with an error; g answers asynchronously with the list ["async",
// n]; h answers the JSON text of its arguments' list. logs and reports
// collect the console's and report's encoded arguments.
func transportJob(v *VM, src string) (j *Job, logs, reports *[][]byte) {
	j = mainJob(v, "")
	j.GlobalNames = []string{"console", "f", "g", "h", "data", "report"}
	j.Console = 0
	j.Fn = "main"
	j.Load = func(name string) (string, error) {
		if name != "/main.js" {
			return "", fmt.Errorf("no module %q", name)
		}
		return `import { console, f, g, h, data, report, "airlock:imports" as mods } from "` + v.GlobalsModule() + `";` + src, nil
	}
	globals := [][]byte{nil, enc(hostFn{1, "f", fnPlain}), enc(hostFn{2, "g", fnPlain}), enc(hostFn{3, "h", fnJSON}),
		enc(map[string]any{"n": 1.0, "s": "é", "list": []any{true, nil, "x"}}), nil}
	j.Input = &Input{Args: enc([]any{2.0, "x"}), Globals: globals, Report: 5, Imports: enc([]any{map[string]any{"k": 3.0}})}
	q := &asyncQueue{}
	q.job(j)
	logs, reports = new([][]byte), new([][]byte)
	call := func(id int, args []Arg, encoded []byte, rep *Reply) {
		switch {
		case id == 0:
			*reports = append(*reports, bytes.Clone(encoded))
			rep.Kind, rep.Value = ReplyRaw, Undefined{}
		case id == 1 && encoded != nil:
			rep.Kind, rep.Bytes = ReplyBytes, enc(map[string]any{"back": float64(len(encoded))})
		case id == 1 && len(args) == 1 && args[0].Kind == wasmvm.String && args[0].Text == "err":
			rep.Kind, rep.Value = ReplyError, "f failed"
		case id == 1 && len(args) == 1 && args[0].Kind == wasmvm.String:
			rep.Kind, rep.Arg = ReplyArg, wasmvm.Value{Kind: wasmvm.String, Text: args[0].Text + args[0].Text}
		case id == 1 && len(args) == 1 && args[0].Kind == wasmvm.Number:
			rep.Kind, rep.Arg = ReplyArg, wasmvm.Value{Kind: wasmvm.Number, Number: args[0].Number + 1}
		case id == 2 && len(args) == 1:
			n := int(args[0].Number)
			c := Completion{ID: 100 + n, Reply: Reply{Kind: ReplyBytes, Bytes: enc([]any{"async", float64(n)})}}
			if n < 0 {
				c.Reply = Reply{Kind: ReplyError, Value: "g failed"}
			}
			q.finish(c)
			rep.Kind, rep.Value = ReplyAsync, 100+n
		case id == 3 && len(args) == 1:
			rep.Kind, rep.Value = ReplyJSON, args[0].Text
		default:
			rep.Kind, rep.Value = ReplyError, fmt.Sprintf("unexpected call %d %v %v", id, args, encoded)
		}
	}
	log := func(level int, encoded []byte) { *logs = append(*logs, bytes.Clone(encoded)) }
	j.CallBytes, j.LogBytes = call, log
	return j, logs, reports
}

// transportProgram calls every kind of host function with every kind of
// argument and answer, and selects main(a, b) two jobs after its module
// evaluated (a top-level await).
const transportProgram = `
const out = [];
out.push(f(1), f("s"), f({ n: 1, tag: "x" }).back > 0, f(new Uint8Array([1, 2])).back > 0);
try { f("err") } catch (e) { out.push(e instanceof Error, e.message) }
out.push(h({ j: [1] }, 2));
out.push(await g(7));
try { await g(-1) } catch (e) { out.push(e.message) }
console.log("log", { x: 1 });
report({ r: 1 });
out.push(data, Object.isFrozen(mods) && Object.isFrozen(mods[0]), mods[0].k);
export function main(a, b) { return JSON.stringify([a, b, out]) }
`

const transportWant = `[2,"x",[2,"ss",true,true,true,"f failed",[{"j":[1]},2],["async",7],"g failed",{"list":[true,null,"x"],"n":1,"s":"é"},true,3]]`

// TestBinaryTransport: a run's input, its host calls' arguments and
// answers (synchronous and asynchronous), its console's and report's
// arguments and its outcome cross as bytes of the codec's binary format
// (Job.Input, CallBytes, LogBytes, Reply.Bytes, Outcome.Bytes).
func TestBinaryTransport(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	j, logs, reports := transportJob(v, transportProgram)
	o := v.Run(j)
	if o.Kind != OK || o.Value != transportWant {
		t.Fatalf("outcome %+v\nwant %s", o, transportWant)
	}
	if len(*logs) != 1 || !bytes.Contains((*logs)[0], []byte("log")) {
		t.Errorf("logs %q", *logs)
	}
	// [{r: 1}]: a list of one object of one key, r
	if len(*reports) != 1 || !bytes.Contains((*reports)[0], []byte("\x0a\x01\x00\x00\x00\x09\x01\x00\x00\x00\x01\x00\x00\x00r")) {
		t.Errorf("reports %q, want the encoding of [{r: 1}]", *reports)
	}
}

// TestOutcomeBytesRoundTrip: the bytes of a run's outcome (Outcome.Bytes)
// are the codec's format the shim decodes too: a second run given them as its
// argument gets the value back.
func TestOutcomeBytesRoundTrip(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	o := v.Run(mainJob(v, `export default { m: new Map([[1, "a"]]), d: new Date(5), u: new Uint8Array([7]), big: 2n ** 70n, n: -0 }`))
	v.Close()
	if o.Kind != OK || !o.Encoded || len(o.Bytes) < 9 || o.Value != nil {
		t.Fatalf("%+v", o)
	}
	if v, err = New(); err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	j := mainJob(v, `export function main(x) { return [x.m.get(1), x.d.getTime(), x.u[0], String(x.big), Object.is(x.n, -0)].join() }`)
	j.Fn = "main"
	j.Input = &Input{Args: append([]byte{0xB1, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 0, 0, 0}, o.Bytes[9:]...), Globals: [][]byte{}}
	o = v.Run(j)
	if o.Kind != OK || o.Value != "a,5,7,1180591620717411303424,true" {
		t.Fatalf("%+v", o)
	}
}

// TestHostCallRunsNoScript: a host call is C → Go → C, and so is the rest
// of a job's protocol (its input, the selection of its export, its
// outcome, the settlement of an asynchronous call, a session's tools,
// values and steps): no JavaScript of the engine's runs on the way, so a
// program that replaces every intrinsic the engine's former JavaScript
// kernel used (its "primordials", captured before any program ran) and the
// getters reached through them (Promise[Symbol.species], which every
// Promise.prototype.then reads: the kernel called it for the run's export
// and for each step) sees none of them called while the engine has
// control: from each host call to its return, and from the program's
// suspension at an await of a host call, or at its end, to its next
// resumption. The program arms its traps then (each logs a TRIP through
// the console, which the host records; there must be none), and uses what
// it likes of its own while they are disarmed. And a step that does not
// compile is a link error however its SyntaxError's name reads (the kernel
// read the name to tell).
func TestHostCallRunsNoScript(t *testing.T) {
	const traps = `
const apply = Reflect.apply, defineProperty = Object.defineProperty, gopd = Object.getOwnPropertyDescriptor,
  log = console.log, c = console, qm = queueMicrotask;
let armed = false;
const trip = (what) => { if (armed) apply(log, c, ["TRIP " + what]) };
const trap = (o, k, name) => { const f0 = o[k]; o[k] = function (...a) { trip(name + "." + k); return apply(f0, this, a) } };
const getters = [[Promise, "Promise", Symbol.species], [Promise.prototype, "Promise.prototype", "constructor"],
  [Object.prototype, "Object.prototype", "value"], [Object.prototype, "Object.prototype", "0"],
  [Array.prototype, "Array.prototype", "0"], [Array.prototype, "Array.prototype", "1"]];
for (const [o, name, k] of getters) {
  const d = gopd(o, k);
  defineProperty(o, k, { __proto__: null, get() { trip("get " + name + "." + String(k)); return d && (d.get ? apply(d.get, this, []) : d.value) },
    set(v) { trip("set " + name + "." + String(k)); defineProperty(this, k, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true }) },
    configurable: true });
}
for (const k of ["Promise", "TypeError", "ReferenceError", "Error", "Map", "JSON", "Reflect", "Uint8Array", "Object"]) {
  const v0 = globalThis[k];
  defineProperty(globalThis, k, { __proto__: null, get() { trip("get globalThis." + k); return v0 }, configurable: true });
}
const fns = [[Object, "Object", ["defineProperty", "freeze", "isFrozen", "keys", "setPrototypeOf", "getOwnPropertyDescriptor", "getPrototypeOf", "assign", "entries"]],
  [Reflect, "Reflect", ["apply", "has", "get", "set", "construct", "ownKeys"]],
  [Function.prototype, "Function.prototype", ["bind", "call", "apply", "toString"]],
  [JSON, "JSON", ["parse", "stringify"]],
  [Promise, "Promise", ["resolve", "reject", "all"]],
  [Promise.prototype, "Promise.prototype", ["then", "catch", "finally"]],
  [Map.prototype, "Map.prototype", ["get", "set", "has"]],
  [WeakMap.prototype, "WeakMap.prototype", ["get", "set", "has"]],
  [Array.prototype, "Array.prototype", ["push", "pop", "slice", "map", "forEach", "join", "concat"]],
  [String.prototype, "String.prototype", ["slice", "concat", "indexOf", "charCodeAt"]],
  [Symbol.prototype, "Symbol.prototype", ["toString"]],
  [Error, "Error", ["captureStackTrace"]]];
for (const [o, name, ks] of fns) for (const k of ks) trap(o, k, name);
// call calls a host function with the traps armed; wait awaits a host
// call's promise with them armed from its suspension to its resumption.
const call = (f0, ...a) => { armed = true; try { return apply(f0, undefined, a) } finally { armed = false } };
const wait = async (p) => { qm(() => { armed = true }); try { return await p } finally { armed = false } };
`
	const program = `
const out = [];
out.push(call(f, 1), call(f, "s"), call(f, { n: 1, tag: "x" }).back > 0, call(f, new Uint8Array([1, 2])).back > 0);
try { call(f, "err") } catch (e) { out.push(e instanceof Error, e.message) }
out.push(call(h, { j: [1] }, 2));
out.push(await wait(call(g, 7)));
try { await wait(call(g, -1)) } catch (e) { out.push(e.message) }
call(console.log, "log", { x: 1 });
call(report, { r: 1 });
out.push(data, Object.isFrozen(mods) && Object.isFrozen(mods[0]), mods[0].k);
export function main(a, b) { armed = false; const r = JSON.stringify([a, b, out]); armed = true; return r }
armed = true;
`
	trips := func(t *testing.T, logs [][]byte) {
		t.Helper()
		for _, l := range logs {
			if i := bytes.Index(l, []byte("TRIP ")); i >= 0 {
				t.Errorf("the engine reached a replaced intrinsic: %q", l[i:])
			}
		}
	}
	t.Run("run", func(t *testing.T) {
		{
			v, err := New()
			if err != nil {
				t.Fatal(err)
			}
			j, logs, _ := transportJob(v, traps+program)
			o := v.Run(j)
			v.Close()
			trips(t, *logs)
			if o.Kind != OK || o.Value != transportWant {
				t.Fatalf("outcome %+v", o)
			}
		}
	})
	t.Run("session", func(t *testing.T) {
		v, err := NewSession(0)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		for i, name := range []string{"tool", "later"} {
			if err := v.DefineTool(name, i+1, false, false); err != nil {
				t.Fatal(err)
			}
		}
		var logs [][]byte
		q := &asyncQueue{}
		step := func(script string) Outcome {
			t.Helper()
			j := &Job{Stop: make(chan struct{}), LogBytes: func(_ int, b []byte) { logs = append(logs, bytes.Clone(b)) },
				CallBytes: func(id int, args []Arg, encoded []byte, rep *Reply) {
					switch id {
					case 1:
						rep.Kind, rep.Bytes = ReplyBytes, enc(map[string]any{"echo": float64(len(encoded) + len(args))})
					case 2:
						q.finish(Completion{ID: 5, Reply: Reply{Kind: ReplyBytes, Bytes: enc([]any{"later"})}})
						rep.Kind, rep.Value = ReplyAsync, 5
					}
				}}
			q.job(j)
			o, discarded := v.Step(j, script, 1e6)
			if discarded {
				t.Fatalf("%s: the session was discarded: %+v", script, o)
			}
			return o
		}
		if o := step(traps + `
const sn = gopd(SyntaxError.prototype, "name");
defineProperty(SyntaxError.prototype, "name", { __proto__: null, get() { return "Renamed" }, configurable: true });
armed = true`); o.Kind != OK {
			t.Fatalf("traps: %+v", o)
		}
		if err := v.DefineValueBytes("given", enc(map[string]any{"v": 2.0})); err != nil {
			t.Fatal(err)
		}
		defer trips(t, logs)
		o := step(`armed = false; const a = call(tool, 1).echo, b = call(tool, { x: [1, 2] }).echo > 0, l = await wait(call(later));
			const r = JSON.stringify({ a, b, l, g: given.v }); armed = true; r`)
		if o.Kind != OK || o.Value != `{"a":1,"b":true,"l":["later"],"g":2}` {
			t.Fatalf("step: %+v", o)
		}
		if o := step(`let x = ;`); o.Kind != LinkFailed || o.Name != "Renamed" {
			t.Fatalf("a step that does not compile: %+v, want LinkFailed, its name as the program's getter reads it", o)
		}
		if o := step(`armed = false; const e = new TypeError("no"); armed = true; throw e`); o.Kind != Thrown || o.Message != "no" {
			t.Fatalf("a step that throws: %+v", o)
		}
	})
}

// BenchmarkHostCallTransport: a host call with an object argument and an
// object answer ({n, tag}), b.N of them in one program, through the binary
// transport (CallBytes, ReplyBytes). The host side's work is a constant
// answer: what is measured is the engine's crossing.
func BenchmarkHostCallTransport(b *testing.B) {
	bin := enc(map[string]any{"n": 1.0, "tag": "x"})
	v, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	j := mainJob(v, "")
	j.Input, j.GlobalNames, j.Console = &Input{Globals: [][]byte{nil}, Report: 0}, []string{"f"}, -1
	j.Load = func(string) (string, error) {
		return fmt.Sprintf(`import { f } from "%s"; let s = 0; for (let i = 0; i < %d; i++) s += f({ n: i, tag: "x" }).n; export default s`,
			v.GlobalsModule(), b.N), nil
	}
	j.CallBytes = func(_ int, _ []Arg, _ []byte, rep *Reply) { rep.Kind, rep.Bytes = ReplyBytes, bin }
	b.ResetTimer()
	if o := v.Run(j); o.Kind != OK || o.Value != float64(b.N) {
		b.Fatalf("%+v", o)
	}
}

// BenchmarkInputTransport: a run given ~1 MB of plain data as its
// argument (5,000 records), as bytes of the codec's format (the binary
// transport: the shim's decoder builds it).
func BenchmarkInputTransport(b *testing.B) {
	rows := make([]any, 5000)
	for i := range rows {
		bio := strings.Repeat("lorem ipsum ", 12)
		rows[i] = map[string]any{"id": float64(i), "name": fmt.Sprint("user-", i), "email": fmt.Sprint("user", i, "@example.com"),
			"tags": []any{"a", "b", "c"}, "score": float64(i) * 1.5, "active": i%2 == 0, "bio": bio}
	}
	bin := enc([]any{rows})
	b.SetBytes(int64(len(bin)))
	for b.Loop() {
		v, err := New()
		if err != nil {
			b.Fatal(err)
		}
		j := mainJob(v, `export function main(rows) { return rows.length }`)
		j.Fn = "main"
		j.Load = func(string) (string, error) { return `export function main(rows) { return rows.length }`, nil }
		j.Input = &Input{Args: bin}
		if o := v.Run(j); o.Kind != OK || o.Value != 5000.0 {
			b.Fatalf("%+v", o)
		}
		v.Close()
	}
}

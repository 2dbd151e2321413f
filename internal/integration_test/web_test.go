package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// webHarness runs the cases of webCases on TextEncoder, TextDecoder, atob
// and btoa, the same script in the sandbox and in Node. Strings go in and
// out as arrays of UTF-16 code units, so that lone surrogates cross JSON
// intact; a thrown error is its name.
const webHarness = `
const units = (s) => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i));
const str = (u) => String.fromCharCode(...u);
// (Node's own errors carry a string code, a Node extension: only a
// DOMException's number is compared.)
const attempt = (f) => { try { return f(); } catch (e) { return { threw: e.name, code: typeof e.code === "number" ? e.code : null }; } };
function runCases(cases) {
  return cases.map((c) => {
    switch (c.op) {
    case "decode": return attempt(() => {
      const d = new TextDecoder(c.label, { fatal: c.fatal, ignoreBOM: c.ignoreBOM });
      const b = new Uint8Array(c.bytes);
      let out = "", at = 0;
      for (const cut of c.splits) { out += d.decode(b.subarray(at, cut), { stream: true }); at = cut; }
      out += d.decode(b.subarray(at));
      return units(out);
    });
    case "encode": return attempt(() => Array.from(new TextEncoder().encode(str(c.units))));
    case "encodeInto": return attempt(() => {
      const dest = new Uint8Array(c.room);
      const r = new TextEncoder().encodeInto(str(c.units), dest);
      return [r.read, r.written, Array.from(dest)];
    });
    case "atob": return attempt(() => units(atob(str(c.units))));
    case "btoa": return attempt(() => btoa(str(c.units)));
    }
  });
}
`

// webCases is a corpus of inputs chosen to meet the edges: UTF-8 of every
// length, truncated, overlong, surrogate and out-of-range sequences, bytes
// that cannot start one, BOMs, stream splits anywhere; strings with lone
// and paired surrogates; base64 with whitespace, padding in and out of
// place, every length modulo 4, non-zero padding bits, and Latin-1 and
// wider text for btoa.
func webCases(r *rand.Rand, n int) []map[string]any {
	edgeBytes := []int{0x00, 0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xa0, 0xed, 0x9f, 0xef, 0xbb, 0xbe,
		0xf0, 0x90, 0xf4, 0x8f, 0xf5, 0xff, 0xfe}
	someBytes := func() []int {
		b := make([]int, r.IntN(12))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = r.IntN(256)
			} else {
				b[i] = edgeBytes[r.IntN(len(edgeBytes))]
			}
		}
		if r.IntN(4) == 0 { // well-formed text around them
			b = append([]int{0xef, 0xbb, 0xbf}, b...)
		}
		if r.IntN(3) == 0 {
			b = append(b, []int(utf8Ints("é€😀a"))...)
		}
		return b
	}
	edgeUnits := []int{0x41, 0x7f, 0x80, 0xff, 0x100, 0x7ff, 0x800, 0xfeff, 0xfffd, 0xffff, 0xd800, 0xdbff, 0xdc00, 0xdfff}
	someUnits := func() []int {
		u := make([]int, r.IntN(10))
		for i := range u {
			if r.IntN(3) == 0 {
				u[i] = r.IntN(0x10000)
			} else {
				u[i] = edgeUnits[r.IntN(len(edgeUnits))]
			}
		}
		return u
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b64ish := func() []int {
		var s []int
		for range r.IntN(14) {
			switch k := r.IntN(10); {
			case k < 7:
				s = append(s, int(alphabet[r.IntN(len(alphabet))]))
			case k == 7:
				s = append(s, '=')
			case k == 8:
				s = append(s, int(" \t\n\f\r"[r.IntN(5)]))
			default:
				s = append(s, []int{'-', '_', '.', 0xa0, 0x100, 0}[r.IntN(6)])
			}
		}
		return s
	}
	latin1 := func() []int {
		u := make([]int, r.IntN(12))
		for i := range u {
			u[i] = r.IntN(256)
			if r.IntN(20) == 0 {
				u[i] = 0x100 + r.IntN(0xff00)
			}
		}
		return u
	}
	labels := []string{"utf-8", "UTF8", " utf-8\n", "unicode-1-1-utf-8", "x-unicode20utf8", "no-such-encoding", "utf-16", "utf-16le", "UCS-2"}
	var cases []map[string]any
	for range n {
		switch r.IntN(6) {
		case 0, 1:
			b := someBytes()
			var splits []int
			for at := 0; at < len(b); at += 1 + r.IntN(4) {
				if r.IntN(2) == 0 {
					splits = append(splits, at)
				}
			}
			label := "utf-8"
			if r.IntN(10) == 0 {
				label = labels[r.IntN(len(labels))]
			}
			cases = append(cases, map[string]any{"op": "decode", "bytes": b, "fatal": r.IntN(3) == 0,
				"ignoreBOM": r.IntN(3) == 0, "splits": splits, "label": label})
		case 2:
			cases = append(cases, map[string]any{"op": "encode", "units": someUnits()})
		case 3:
			cases = append(cases, map[string]any{"op": "encodeInto", "units": someUnits(), "room": r.IntN(12)})
		case 4:
			cases = append(cases, map[string]any{"op": "atob", "units": b64ish()})
		case 5:
			cases = append(cases, map[string]any{"op": "btoa", "units": latin1()})
		}
	}
	return cases
}

func utf8Ints(s string) []int {
	var out []int
	for _, b := range []byte(s) {
		out = append(out, int(b))
	}
	return out
}

// TestWebAPIsAsNode: TextEncoder, TextDecoder, atob and btoa give what
// Node gives, case by case, on a seeded corpus of edge inputs (webCases),
// errors included (their names and DOMException codes).
func TestWebAPIsAsNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (CI installs it): the differential needs it")
	}
	n := 3000
	if testing.Short() {
		n = 600
	}
	cases := webCases(rand.New(rand.NewPCG(7, 9)), n)
	data, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	res := runOpts(t, webHarness+"\nexport default JSON.stringify(runCases("+string(data)+"));",
		airlock.Options{Language: airlock.JavaScript})
	if res.Status != airlock.StatusSuccess {
		t.Fatalf("sandbox: %s %v", res.Status, res.Error)
	}
	ours, _ := res.Result.(string)
	cmd := exec.Command(node, "--input-type=module")
	cmd.Stdin = strings.NewReader(webHarness + "\nprocess.stdout.write(JSON.stringify(runCases(" + string(data) + ")));")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var a, b []json.RawMessage
	if err := json.Unmarshal([]byte(ours), &a); err != nil {
		t.Fatalf("sandbox's results: %v", err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("node's results: %v", err)
	}
	if len(a) != len(b) {
		t.Fatalf("%d results, node %d", len(a), len(b))
	}
	bad := 0
	for i := range a {
		if string(a[i]) != string(b[i]) {
			if bad++; bad <= 10 {
				c, _ := json.Marshal(cases[i])
				t.Errorf("case %d %s:\n  sandbox %s\n  node    %s", i, c, a[i], b[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d cases differ from node", bad, len(a))
	}
}

// TestWebAPIsShape: the names are the platform's: constructors that need
// new, prototype members enumerable as WebIDL makes them, the tags, a
// DOMException that is an Error with its legacy code, methods that refuse
// another object as this, and no frame of their own in a stack.
func TestWebAPIsShape(t *testing.T) {
	res := run(t, `
const out = [];
const threw = (f) => { try { f(); return "no"; } catch (e) { return e.name; } };
out.push(threw(() => TextEncoder()), threw(() => TextDecoder()), threw(() => DOMException()));
out.push(Object.keys(TextDecoder.prototype).join(","));
out.push(Object.prototype.toString.call(new TextDecoder()), Object.prototype.toString.call(new DOMException()));
const e = new DOMException("m", "InvalidCharacterError");
out.push(e instanceof Error, e.name, e.message, e.code, DOMException.INVALID_CHARACTER_ERR, String(e));
out.push(threw(() => TextEncoder.prototype.encode.call({}, "x")), threw(() => new TextDecoder("latin1")));
out.push(typeof atob, atob.length, btoa.length, threw(() => new atob("")), Object.keys(globalThis).includes("atob"));
out.push(threw(() => btoa("€")), threw(() => atob()), threw(() => new TextDecoder().decode("x")));
// the stack of an error they throw starts at the program's own frame
let st = "";
try { (function userFn() { new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff])); })(); } catch (e) { st = e.stack; }
out.push(st.trim().startsWith("at userFn"));
export default out.join("|");
`)
	wantStatus(t, res, airlock.StatusSuccess)
	want := strings.Join([]string{"TypeError", "TypeError", "TypeError", "encoding,fatal,ignoreBOM,decode",
		"[object TextDecoder]", "[object DOMException]", "true", "InvalidCharacterError", "m", "5", "5",
		"InvalidCharacterError: m", "TypeError", "RangeError", "function", "1", "1", "TypeError", "false",
		"InvalidCharacterError", "TypeError", "TypeError", "true"}, "|")
	if res.Result != want {
		t.Errorf("got  %v\nwant %s", res.Result, want)
	}
}

// webEvents exercises Event, EventTarget, AbortController and AbortSignal;
// every entry is [label, values...].
const webEvents = `
const log = [];
let n = 0;
const t = new EventTarget();
const f = (e) => log.push(["f" + ++n, e.type, e.eventPhase, e.target === t, e.currentTarget === t, e.cancelable]);
t.addEventListener("x", f);
t.addEventListener("x", f); // the same listener twice: once
t.addEventListener("x", { handleEvent(e) { log.push(["obj", this !== t]); e.preventDefault(); } }, { once: true });
let round = 0;
t.addEventListener("x", (e) => {
  round++;
  log.push(["passive" + round, e.defaultPrevented]);
  e.preventDefault();
  log.push(["after" + round, e.defaultPrevented]);
}, { passive: true });
const e1 = new Event("x", { cancelable: true });
log.push(["ret1", t.dispatchEvent(e1), e1.defaultPrevented, e1.eventPhase, e1.currentTarget, e1.target === t]);
log.push(["ret2", t.dispatchEvent(new Event("x"))]);
t.removeEventListener("x", f);
log.push(["ret3", t.dispatchEvent(new Event("x", { cancelable: true }))]);
const t2 = new EventTarget();
t2.addEventListener("y", (e) => { log.push(["a"]); e.stopImmediatePropagation(); });
t2.addEventListener("y", () => log.push(["b"]));
t2.dispatchEvent(new Event("y"));
const ac = new AbortController();
const t3 = new EventTarget();
let zs = 0;
t3.addEventListener("z", () => zs++, { signal: ac.signal });
ac.signal.onabort = (e) => log.push(["onabort", e.type, ac.signal.aborted, ac.signal.reason.name]);
ac.signal.addEventListener("abort", () => log.push(["abort-listener"]));
t3.dispatchEvent(new Event("z"));
ac.abort();
ac.abort("again");
t3.dispatchEvent(new Event("z"));
log.push(["zs", zs]);
log.push(["reason", ac.signal.reason instanceof DOMException, ac.signal.reason.code, ac.signal.reason.message]);
const s = AbortSignal.abort("why");
log.push(["static", s.aborted, s.reason]);
try { s.throwIfAborted(); } catch (e) { log.push(["thrown", e]); }
const a1 = new AbortController(), a2 = new AbortController();
const any = AbortSignal.any([a1.signal, a2.signal]);
a2.abort("second");
log.push(["any", any.aborted, any.reason]);
const threw = (f) => { try { f(); return "no"; } catch (e) { return e.name; } };
log.push(["errs", threw(() => new AbortSignal()), threw(() => new Event()), threw(() => t.dispatchEvent({})),
  threw(() => Event.prototype.type)]);
log.push(["timeout", threw(() => AbortSignal.timeout(5))]);
log.push(["tag", Object.prototype.toString.call(ac.signal), Event.AT_TARGET, new Event("q").eventPhase,
  Object.getPrototypeOf(AbortSignal.prototype) === EventTarget.prototype]);
log.push(["keys", Object.keys(Event.prototype).length, Object.keys(AbortSignal.prototype).join()]);
const ev = new Event("w");
const t4 = new EventTarget();
t4.addEventListener("w", () => { log.push(["again", threw(() => t4.dispatchEvent(ev))]); });
t4.dispatchEvent(ev);
const ie = new Event("a");
ie.initEvent("b", true, true);
log.push(["init", ie.type, ie.bubbles, ie.cancelable]);
`

// webEventsDivergent: where Node's EventTarget departs from the DOM and
// WebIDL specifications, the sandbox follows them. Each entry is the
// sandbox's value.
var webEventsDivergent = map[string]string{
	// "set the canceled flag" does nothing in a passive listener; Node 20
	// lets a passive listener cancel an event it did not cancel before.
	"after3": `["after3",false]`,
	"ret3":   `["ret3",true]`,
	// no timer in the sandbox (Node has one)
	"timeout": `["timeout","NotSupportedError"]`,
	// WebIDL makes constants and operations enumerable; Node 20 lists
	// neither NONE.. nor throwIfAborted.
	"keys": `["keys",22,"aborted,reason,throwIfAborted,onabort"]`,
	// an event being dispatched: an InvalidStateError DOMException (Node
	// 20: a plain Error with a code of its own)
	"again": `["again","InvalidStateError"]`,
}

// TestWebEventsAsNode: Event, EventTarget and AbortController/AbortSignal
// behave as Node's, entry by entry, but where Node departs from the
// specifications (webEventsDivergent), where they behave as those say.
func TestWebEventsAsNode(t *testing.T) { labelledAsNode(t, webEvents, webEventsDivergent) }

// webHeadersBlob exercises Headers and Blob; every entry is [label, values...].
const webHeadersBlob = `
const log = [];
const threw = (f) => { try { f(); return "no"; } catch (e) { return e.name; } };
const h = new Headers({ "Content-Type": "text/plain", "X-B": " padded\t" });
h.append("x-b", "two");
h.append("Set-Cookie", "a=1");
h.append("set-cookie", "b=2");
log.push(["get", h.get("content-type"), h.get("X-B"), h.get("missing"), h.has("SET-COOKIE")]);
log.push(["entries", [...h]]);
log.push(["keys", [...h.keys()], [...h.values()]]);
log.push(["cookies", h.getSetCookie()]);
h.set("x-b", "one");
h.delete("content-type");
const fe = [];
h.forEach((v, k, o) => fe.push([k, v, o === h]));
log.push(["forEach", fe]);
log.push(["pairs", [...new Headers([["a", "1"], ["A", "2"], ["b", "3"]])]]);
log.push(["copy", [...new Headers(h)]]);
log.push(["errs", threw(() => new Headers([["a"]])), threw(() => h.append("bad name", "x")), threw(() => h.append("x", "a\nb")),
  threw(() => h.get("é")), threw(() => Headers()), threw(() => new Headers("x"))]);
const it = h.entries();
log.push(["iter", Object.prototype.toString.call(it), typeof it.next, Object.prototype.toString.call(h), typeof it[Symbol.iterator]]);
const b = new Blob(["héllo ", new Uint8Array([65, 66]), new Blob(["!"]), "\r\nx"], { type: "Text/Plain" });
log.push(["blob", b.size, b.type, Object.prototype.toString.call(b)]);
log.push(["text", await b.text()]);
log.push(["bytes", Array.from(await b.bytes()), (await b.arrayBuffer()).byteLength]);
const sl = b.slice(1, -2, "X/Y");
log.push(["slice", sl.size, sl.type, await sl.text(), b.slice(-3).size, b.slice(5, 2).size, await b.slice(100).text()]);
const nb = new Blob(["a\r\nb\rc\n"], { endings: "native" });
log.push(["native", Array.from(await nb.bytes())]);
log.push(["types", new Blob([], { type: "é" }).type, new Blob().size, new Blob([]).type]);
log.push(["berrs", threw(() => new Blob("abc")), threw(() => new Blob([], { endings: "x" })), threw(() => Blob())]);
`

// TestWebHeadersBlobAsNode: Headers and Blob behave as Node's, entry by
// entry, but where Node departs from the specifications.
func TestWebHeadersBlobAsNode(t *testing.T) {
	labelledAsNode(t, webHeadersBlob, map[string]string{
		// File API's "convert line endings to native" turns a lone CR into
		// LF too; Node 20 turns only CR LF.
		"native": `["native",[97,10,98,10,99,10]]`,
	})
}

// webSearchParams exercises URLSearchParams; every entry is [label, values...].
const webSearchParams = `
const log = [];
const p = new URLSearchParams("?a=1&b=x+y&a=%E2%82%AC&c&=d&e=%zz&f=%C3&g=%2B+%20");
log.push(["parsed", [...p]]);
log.push(["get", p.get("a"), p.getAll("a"), p.get("none"), p.has("c"), p.has("a", "2"), p.size]);
p.append("é k", "v&w=x");
p.set("a", "one");
p.delete("b");
log.push(["str", p.toString()]);
p.sort();
log.push(["sorted", [...p.keys()], [...p.values()]]);
log.push(["rec", String(new URLSearchParams({ x: "1", "y z": "~!*'()" })), String(new URLSearchParams([["k", "v"], ["k", "w"]]))]);
log.push(["del2", (() => { const q = new URLSearchParams("a=1&a=2&a=1"); q.delete("a", "1"); return q.toString(); })()]);
log.push(["lone", String(new URLSearchParams([["\uD800", "\uDC00x"]]))]);
log.push(["tag", Object.prototype.toString.call(p), Object.prototype.toString.call(p.entries())]);
const threw = (f) => { try { f(); return "no"; } catch (e) { return e.name; } };
log.push(["errs", threw(() => new URLSearchParams([["a"]])), threw(() => URLSearchParams()), threw(() => p.append("a"))]);
const fe = [];
new URLSearchParams("z=1&y=2").forEach((v, k) => fe.push(k + v));
log.push(["fe", fe]);
const big = new URLSearchParams();
for (let i = 0; i < 300; i++) big.append("k" + (i * 7919 % 300), String(i));
big.sort();
log.push(["stable", big.toString().length, big.getAll("k0"), [...big.keys()].slice(0, 5)]);
// a leading BOM is kept (the form is decoded without BOM sniffing); lone
// surrogates become U+FFFD, with no escape in the text as without one
log.push(["bom", [...new URLSearchParams("%EF%BB%BFa=1&\uFEFFb=2").keys()].map((k) => k.length)]);
log.push(["lone", [...new URLSearchParams("a\uD800=\uDC00&b=c").entries()].map(([k, v]) => [k.charCodeAt(1), v.charCodeAt(0)])]);
`

// TestWebSearchParamsAsNode: URLSearchParams behaves as Node's, entry by
// entry: parsing (plus signs, bad escapes, bad UTF-8), serializing,
// sorting (stable), the forms of its init.
func TestWebSearchParamsAsNode(t *testing.T) { labelledAsNode(t, webSearchParams, nil) }

// labelledAsNode runs script, which fills log with [label, values...]
// entries, in the sandbox and in Node, and compares the entries label by
// label; a label in divergent must give that value in the sandbox (the
// specification's) and another in Node.
func labelledAsNode(t *testing.T, script string, divergent map[string]string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (CI installs it): the differential needs it")
	}
	res := runOpts(t, script+"\nexport default JSON.stringify(log);", airlock.Options{Language: airlock.JavaScript})
	if res.Status != airlock.StatusSuccess {
		t.Fatalf("sandbox: %s %v", res.Status, res.Error)
	}
	cmd := exec.Command(node, "--input-type=module")
	cmd.Stdin = strings.NewReader(script + "\nprocess.stdout.write(JSON.stringify(log));")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	byLabel := func(s string) (map[string]string, []string) {
		var entries []json.RawMessage
		if err := json.Unmarshal([]byte(s), &entries); err != nil {
			t.Fatalf("%v: %s", err, s)
		}
		m := map[string]string{}
		var order []string
		for _, e := range entries {
			var head []any
			json.Unmarshal(e, &head)
			label, _ := head[0].(string)
			m[label] = string(e)
			order = append(order, label)
		}
		return m, order
	}
	ours, order := byLabel(res.Result.(string))
	theirs, nodeOrder := byLabel(string(out))
	if strings.Join(order, ",") != strings.Join(nodeOrder, ",") {
		t.Errorf("entries in another order:\n  sandbox %v\n  node    %v", order, nodeOrder)
	}
	for _, l := range order {
		if want, ok := divergent[l]; ok {
			if ours[l] != want {
				t.Errorf("%s: sandbox %s, want %s (the specification's)", l, ours[l], want)
			}
			if theirs[l] == want {
				t.Errorf("%s: node now gives %s too: it is no longer a divergence", l, theirs[l])
			}
			continue
		}
		if ours[l] != theirs[l] {
			t.Errorf("%s: sandbox %s, node %s", l, ours[l], theirs[l])
		}
	}
}

// webFetchBodies exercises Request and Response: construction from each
// kind of body, the Content-Type each implies, reading each way, reading
// twice, cloning, the statics, the validation of status, statusText,
// methods, modes and bodies on GET, and the interfaces' shapes. Error
// messages differ from Node's; their names are compared.
const webFetchBodies = `
const log = [];
const threw = (f) => { try { f(); return "no"; } catch (e) { return e.name; } };
const rejects = async (p) => { try { await p; return "no"; } catch (e) { return e.name; } };
const bodies = {
  string: "héllo", empty: "", buffer: new Uint8Array([1, 2, 255]).buffer, view: new DataView(new Uint8Array([9, 8, 7, 6]).buffer, 1, 2),
  u16: new Uint16Array([0x4142]), blob: new Blob(["b", "lob"], { type: "Text/X" }), blobNoType: new Blob(["x"]),
  params: new URLSearchParams("a=1&b=x y"), number: 42, nul: null,
};
for (const [k, b] of Object.entries(bodies)) {
  const r = new Response(b);
  const t = r.clone();
  log.push(["body " + k, r.headers.get("content-type"), Array.from(await r.bytes()), r.bodyUsed, await t.text(), t.bodyUsed]);
}
for (const [k, read] of Object.entries({ text: (r) => r.text(), json: (r) => r.json(), ab: (r) => r.arrayBuffer().then((b) => b.byteLength), blob: (r) => r.blob().then((b) => [b.size, b.type]) })) {
  const r = new Response('{"a":[1,"é"]}', { headers: { "content-type": "Application/JSON; x=1" } });
  log.push(["read " + k, await read(r), await rejects(read(r)), threw(() => r.clone())]);
}
log.push(["bad json", await rejects(new Response("{").json())]);
for (const ct of ["text/html", 'TEXT/HTML; Charset="utf-8"', 'a/b;c="d\\"e"', "bad", "a/b; x", "a/b;x=;y=1", "a/b;x=1;x=2", " a/b ; q = 1 ",
  'a/b;q="1";r=" "', "a/b;é=1", "a /b", "a/b;c=\"unterminated", "a/b;;;c=d", ""]) {
  log.push(["mime " + JSON.stringify(ct), await new Response("", { headers: { "content-type": ct } }).blob().then((b) => b.type)]);
}
log.push(["no body", await new Response().text(), new Response().bodyUsed, await new Response(null).bytes().then((b) => b.length), new Response().bodyUsed]);
for (const s of [200, 201, 299, 300, 404, 599, 199, 600, 0, 65736, -1, "204", 204, 304]) {
  log.push(["status " + s, threw(() => new Response(null, { status: s })), threw(() => new Response("x", { status: s })),
    (() => { try { const r = new Response(null, { status: s }); return [r.status, r.ok]; } catch { return null; } })()]);
}
for (const t of ["OK", "", "Not Found", "a\\nb", "é", "\\u0100", "tab\\there"]) log.push(["statusText " + JSON.stringify(t), threw(() => new Response(null, { statusText: t }))]);
const r0 = new Response("x", { status: 201, statusText: "Made", headers: [["X-A", "1"], ["x-a", "2"]] });
log.push(["props", r0.type, r0.url, r0.redirected, r0.status, r0.ok, r0.statusText, [...r0.headers]]);
log.push(["error", Response.error().type, Response.error().status, Response.error().ok, Response.error().statusText]);
for (const s of [undefined, 301, 302, 303, 307, 308, 200, 304]) {
  log.push(["redirect " + s, threw(() => Response.redirect("https://a.test/x y", s)), (() => { try { const r = Response.redirect("https://a.test/x y", s); return [r.status, r.headers.get("location")]; } catch { return null; } })()]);
}
log.push(["redirect bad url", threw(() => Response.redirect("not a url"))]);
const j = Response.json({ a: 1 }, { status: 202, headers: { "X-B": "2" } });
log.push(["json", j.status, j.headers.get("content-type"), j.headers.get("x-b"), await j.text(), threw(() => Response.json(undefined)), threw(() => Response.json(1n)),
  Response.json("s", { headers: { "content-type": "text/x" } }).headers.get("content-type")]);
const req = new Request("https://u.test/p?q#f", { method: "post", headers: { "content-type": "text/x" }, body: "data" });
log.push(["request", req.method, req.url, req.headers.get("content-type"), req.mode, req.credentials, req.cache, req.redirect, req.referrer,
  req.referrerPolicy, req.integrity, req.keepalive, req.destination, req.duplex, req.signal instanceof AbortSignal, req.signal.aborted, await req.clone().text(), req.bodyUsed]);
for (const m of ["get", "GET", "head", "post", "put", "delete", "options", "patch", "PATCH", "custom", "CONNECT", "trace", "track", "bad method", ""]) {
  log.push(["method " + JSON.stringify(m), threw(() => new Request("https://u.test", { method: m })), (() => { try { return new Request("https://u.test", { method: m }).method; } catch { return null; } })()]);
}
log.push(["get body", threw(() => new Request("https://u.test", { body: "x" })), threw(() => new Request("https://u.test", { method: "HEAD", body: "x" })),
  threw(() => new Request("https://u.test", { body: null }))]);
log.push(["urls", threw(() => new Request("/rel")), threw(() => new Request("https://user:pw@u.test/")), new Request("HTTPS://U.test:443/a/../b").url]);
log.push(["enums", threw(() => new Request("https://u.test", { mode: "navigate" })), threw(() => new Request("https://u.test", { mode: "x" })),
  threw(() => new Request("https://u.test", { redirect: "x" })), new Request("https://u.test", { redirect: "manual", cache: "no-store", credentials: "omit" }).redirect]);
const base = new Request("https://u.test/a", { method: "PUT", body: "one", headers: { a: "1" } });
const derived = new Request(base, { headers: { b: "2" } });
log.push(["from request", derived.method, derived.url, [...derived.headers], base.bodyUsed, await derived.text(), threw(() => new Request(base))]);
const ac = new AbortController();
const sig = new Request("https://u.test", { signal: ac.signal }).signal;
ac.abort();
log.push(["signal", sig.aborted, sig.reason && sig.reason.name]);
// (the sandbox has no streams: no body getter; Node's Request.prototype
// has a stray enumerable "attribute", which no specification names)
const members = (C) => Object.keys(C.prototype).filter((k) => k !== "body" && k !== "attribute").sort();
log.push(["shape", members(Response), members(Request), Object.prototype.toString.call(new Response()),
  threw(() => Response()), threw(() => Response.prototype.status), await rejects(Response.prototype.text.call({}))]);
log.push(["formData", await rejects(new Response("a=1").formData())]);
`

// TestWebFetchBodiesAsNode: Request and Response behave as Node's, entry by
// entry, but where the sandbox has no stream: Node's body getter is not
// there (and left out of the comparison), and formData() rejects.
func TestWebFetchBodiesAsNode(t *testing.T) {
	labelledAsNode(t, webFetchBodies, nil)
}

// performance counts from the sandbox's first use of it: the image holds
// no time origin of its own (it was made earlier, and every sandbox is a
// copy of it), so a run's timeOrigin is no earlier than the run's own
// Date.now before it; now() does not go back; the constructor is
// illegal; an executor keeps one origin across its steps.
func TestWebPerformance(t *testing.T) {
	for range 2 {
		res := run(t, `
const d0 = Date.now();
const o = performance.timeOrigin, a = performance.now();
let x = 0; for (let i = 0; i < 1e5; i++) x += i;
const b = performance.now(), e = new Event("x").timeStamp, c = performance.now();
let newed; try { new Performance(); newed = "no"; } catch (err) { newed = err.name; }
export default [o >= d0, a >= 0, b >= a, e >= a, c >= e, newed, performance instanceof EventTarget,
  Object.prototype.toString.call(performance), JSON.stringify(performance.toJSON()) === JSON.stringify({ timeOrigin: o })].join(",");
`)
		wantStatus(t, res, airlock.StatusSuccess)
		if want := "true,true,true,true,true,TypeError,true,[object Performance],true"; res.Result != want {
			t.Fatalf("got %v, want %s", res.Result, want)
		}
	}
	ex := newExecutor(t, airlock.ExecutorOptions{Timeout: time.Minute})
	first, err := ex.Run(context.Background(), "globalThis.o = performance.timeOrigin; o")
	if err != nil {
		t.Fatal(err)
	}
	second, err := ex.Run(context.Background(), "performance.timeOrigin === o && performance.now() >= 0")
	if err != nil || second.Output != true || first.Output == nil {
		t.Fatalf("steps: %v, %v, %v", first.Output, second.Output, err)
	}
}

// webCrypto exercises crypto: digests by each algorithm of inputs of many
// lengths and kinds (compared byte for byte), the algorithm's forms and
// errors, getRandomValues's types, quota and identity, randomUUID's form,
// the interfaces' shapes. Random bytes themselves are not compared.
const webCrypto = `
const log = [];
const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
const rejects = async (p) => { try { await p; return "no"; } catch (e) { return e.name; } };
const threw = (f) => { try { f(); return "no"; } catch (e) { return e.name; } };
const inputs = { empty: new Uint8Array(0), abc: new TextEncoder().encode("abc"), block: new Uint8Array(64).fill(97),
  odd: new Uint8Array(1000).map((_, i) => (i * 31) & 255), big: new Uint8Array(200000).map((_, i) => i & 255),
  view: new DataView(new Uint8Array([1, 2, 3, 4, 5]).buffer, 1, 3), u32: new Uint32Array([1, 2, 3]), ab: new Uint8Array([9, 9]).buffer,
  sub: new Uint8Array([0, 1, 2, 3, 4, 5]).subarray(2, 5) };
for (const alg of ["SHA-1", "SHA-256", "SHA-384", "SHA-512"]) {
  for (const [k, v] of Object.entries(inputs)) log.push(["digest " + alg + " " + k, hex(await crypto.subtle.digest(alg, v))]);
}
log.push(["algorithm forms", hex(await crypto.subtle.digest("sha-256", inputs.abc)) === hex(await crypto.subtle.digest({ name: "Sha-256" }, inputs.abc))]);
for (const alg of ["MD5", "SHA-224", "", "SHA256", { name: "SHA-3" }, {}]) log.push(["bad algorithm " + JSON.stringify(alg), await rejects(crypto.subtle.digest(alg, inputs.abc))]);
for (const [k, v] of Object.entries({ string: "abc", number: 1, array: [1, 2], nul: null, obj: {} })) log.push(["bad data " + k, await rejects(crypto.subtle.digest("SHA-256", v))]);
log.push(["digest arity", await rejects(crypto.subtle.digest("SHA-256")), typeof crypto.subtle.digest("SHA-1", inputs.abc).then]);
for (const T of [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array, Float32Array, Float64Array]) {
  const a = new T(4);
  let r;
  try { r = crypto.getRandomValues(a) === a; } catch (e) { r = e.name; }
  log.push(["getRandomValues " + T.name, r]);
}
log.push(["getRandomValues others", threw(() => crypto.getRandomValues(new DataView(new ArrayBuffer(4)))), threw(() => crypto.getRandomValues([1, 2])),
  threw(() => crypto.getRandomValues(new ArrayBuffer(4))), threw(() => crypto.getRandomValues()), threw(() => crypto.getRandomValues(null))]);
log.push(["quota", threw(() => crypto.getRandomValues(new Uint8Array(65536))), threw(() => crypto.getRandomValues(new Uint8Array(65537))),
  threw(() => crypto.getRandomValues(new Uint32Array(16385))), crypto.getRandomValues(new Uint8Array(0)).length]);
const sub = new Uint8Array(8);
crypto.getRandomValues(sub.subarray(2, 4));
log.push(["subarray", sub[0], sub[1], sub[4], sub[5], sub[6], sub[7]]);
const uuids = Array.from({ length: 50 }, () => crypto.randomUUID());
log.push(["uuid", uuids.every((u) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u)), new Set(uuids).size]);
log.push(["shape", Object.keys(Crypto.prototype).sort(), "digest" in SubtleCrypto.prototype, Object.prototype.toString.call(crypto),
  Object.prototype.toString.call(crypto.subtle), crypto.subtle === crypto.subtle, crypto.subtle instanceof SubtleCrypto,
  threw(() => new Crypto()), threw(() => new SubtleCrypto()), threw(() => Crypto.prototype.randomUUID.call({})),
  threw(() => Crypto.prototype.getRandomValues.call({}, new Uint8Array(1)))]);
const e = (() => { try { crypto.getRandomValues(new Float32Array(1)); } catch (err) { return err; } })();
log.push(["error", e instanceof DOMException, e.code, (() => { try { crypto.getRandomValues(new Uint8Array(70000)); } catch (err) { return err.code; } })()]);
`

// TestWebCryptoAsNode: crypto behaves as Node's, entry by entry, but
// where Node departs from WebIDL: getRandomValues of what is not an
// ArrayBufferView at all (an array, an ArrayBuffer, null) is a TypeError,
// as in browsers; Node throws a TypeMismatchError.
func TestWebCryptoAsNode(t *testing.T) {
	labelledAsNode(t, webCrypto, map[string]string{
		"getRandomValues others": `["getRandomValues others","TypeMismatchError","TypeError","TypeError","TypeError","TypeError"]`,
	})
}

// Random bytes come from the host at each call: two runs, copies of one
// image, get different bytes, and 64 KiB of one call hold every byte value
// (a generator whose state were in the image would repeat itself from run
// to run).
func TestWebCryptoEntropy(t *testing.T) {
	get := func() string {
		res := run(t, `
const b = crypto.getRandomValues(new Uint8Array(65536));
const seen = new Set(b);
export default JSON.stringify([Array.from(b.subarray(0, 32)), seen.size, crypto.randomUUID()]);`)
		wantStatus(t, res, airlock.StatusSuccess)
		return res.Result.(string)
	}
	a, b := get(), get()
	var x, y []any
	json.Unmarshal([]byte(a), &x)
	json.Unmarshal([]byte(b), &y)
	if len(x) != 3 || len(y) != 3 {
		t.Fatalf("results %s, %s", a, b)
	}
	if x[1] != 256.0 || y[1] != 256.0 {
		t.Errorf("byte values seen in 64 KiB: %v, %v; want 256", x[1], y[1])
	}
	if fmt.Sprint(x[0]) == fmt.Sprint(y[0]) || x[2] == y[2] {
		t.Errorf("two runs drew the same: %s and %s", a, b)
	}
}

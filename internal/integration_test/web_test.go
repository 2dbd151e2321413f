package integration_test

import (
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

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

package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/airlockrun/airlock/agent"
	"github.com/airlockrun/airlock/internal/childtest"
	"github.com/airlockrun/airlock/mcp"
)

// TestRunCodeValuesJSONLacks: a result with a cycle, NaN, the infinities,
// a Float64Array holding NaN and a Date past the year 9999. The structured
// content failed to encode for the last two (the call was a protocol
// error, though the program had run); now it has null where JSON has no
// value, and the text shows the values as Node would.
func TestRunCodeValuesJSONLacks(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	cs := client(t, newServer(t, mcp.Options{}))
	r := runCode(t, cs, map[string]any{"language": "javascript", "code": `const o = { n: NaN, i: Infinity, f: new Float64Array([NaN, 1]), d: new Date(8.64e15) };
o.self = o;
console.log(o);
report(o);
export default o;`})
	const text = "<ref *1> { d: +275760-09-13T00:00:00.000Z, f: Float64Array(2) [ NaN, 1 ], i: Infinity, n: NaN, self: [Circular *1] }"
	if r.isError || r.text != text+"\n[log] "+text+"\n[report] "+text+"\n" {
		t.Fatalf("%+v", r)
	}
	b, _ := json.Marshal(r.structured["result"])
	if string(b) != `{"d":"+275760-09-13T00:00:00.000Z","f":[null,1],"i":null,"n":null,"self":null}` {
		t.Errorf("structured result: %s", b)
	}
}

// TestRunCodeOutputBound: one console.log of 2 MB sent 2 MB of text and
// 2 MB of structured content into the model's context. Now the text keeps
// its head and tail within MaxOutput with a marker, and the structured
// content keeps the status and what fits, naming what it left out.
func TestRunCodeOutputBound(t *testing.T) {
	for _, max := range []int{0, 3000} {
		want := max
		if max == 0 {
			want = agent.DefaultMaxOutput
		}
		cs := client(t, newServer(t, mcp.Options{MaxOutput: max}))
		r := runCode(t, cs, map[string]any{"code": "console.log('FIRST' + 'x'.repeat(2_000_000) + 'LAST');\nexport default { small: 1 };"})
		if n := utf8.RuneCountInString(r.text); n > want || !strings.HasPrefix(r.text, "{ small: 1 }\n[log] FIRST") ||
			!strings.HasSuffix(r.text, "LAST\n") || !strings.Contains(r.text, " characters] ...\n") {
			t.Errorf("max %d: text of %d characters: %.200s", max, n, r.text)
		}
		b, _ := json.Marshal(r.structured)
		if len(b) > want || r.structured["status"] != "success" {
			t.Errorf("max %d: structured content of %d bytes: %.300s", max, len(b), b)
		}
		trunc, _ := r.structured["truncated"].(map[string]any)
		if res, _ := r.structured["result"].(map[string]any); res["small"] != 1.0 || trunc == nil ||
			trunc["characters"].(float64) < 2_000_000 || !strings.Contains(string(b), `"omitted":["logs"]`) {
			t.Errorf("max %d: structured content: %.400s", max, b)
		}
		// An error with a huge message keeps its name and a cut message.
		r = runCode(t, cs, map[string]any{"code": "throw new RangeError('E' + 'y'.repeat(1_000_000))"})
		b, _ = json.Marshal(r.structured)
		e, _ := r.structured["error"].(map[string]any)
		if !r.isError || len(b) > want || e["name"] != "RangeError" || !strings.HasPrefix(e["message"].(string), "Eyyy") ||
			utf8.RuneCountInString(r.text) > want {
			t.Errorf("max %d: error: %.300s", max, b)
		}
		// Its name, its file name and its escaped characters are within
		// the bound too: a name passed it whole, and a control character
		// took six characters of JSON.
		r = runCode(t, cs, map[string]any{"code": "const e = new Error('\\u0001'.repeat(1_000_000)); e.name = 'N'.repeat(1_000_000); e.stack = '\\u0002'.repeat(1_000_000); throw e"})
		b, _ = json.Marshal(r.structured)
		if !r.isError || len(b) > want || utf8.RuneCountInString(r.text) > want {
			t.Errorf("max %d: error of %d bytes: %.300s", max, len(b), b)
		}
	}
}

package airlock

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/js"
)

// FuzzDecodeWire feeds arbitrary text to the decoder of values coming from
// the sandbox: it must return a value or an error, never panic, and never
// allocate past its budget.
func FuzzDecodeWire(f *testing.F) {
	for _, s := range []string{
		`1`, `"s"`, `null`, `["u"]`, `["n","NaN"]`, `["i","123"]`, `["o","a",1,"b",["r",0]]`,
		`["a",1,["a"],["r",1]]`, `["h",5,0,1,4,2]`, `["m",1,2]`, `["s",1]`, `["d",0]`, `["d",null]`,
		`["x","Float64Array","AAAAAAAA8D8="]`, `["x","Int16Array","AAE="]`, `["b","AQI="]`, `["e","TypeError","m"]`,
		`["h",3,0,1,"name",["p",["i","5"]],"k",["w",[55296,97]]]`, `["v","AQID"]`, `["g","a+","gi"]`,
		`["p",["n","-0"]]`, `["p","s"]`, `["p",true]`, `["p",["w",[56320]]]`, `["w",[55357,56832,55296]]`,
		`["w",[70000]]`, `["w","x"]`, `["p",["o"]]`, `["g",1,2]`, `["h",1,"a",["r",0]]`,
		`["h",4294967295]`, `["r",99]`, `["x","Uint32Array","AQI="]`, `["zz"]`, `[]`, `["o","k"]`, `{"a":1}`,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeWire(s, 1<<20)
		if err == nil {
			_, _ = json.Marshal(js.JSONValue(v))
		}
	})
}

// FuzzEncodeRoundTrip checks that values decoded from the wire encode again
// without error or panic.
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add(`["o","a",["a",1,2],"m",["m","k",["s",1]],"d",["d",5]]`)
	f.Add(`["a",["n","-0"],["i","-5"],["b",""]]`)
	f.Add(`["a",["v","AQ=="],["g","x","y"],["p",["n","NaN"]],["w",[55296]],["h",2,1,1,"n",["r",0]],["d",null]]`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeWire(s, 1<<20)
		if err != nil {
			return
		}
		if _, err := encodeWire(v, nil); err != nil {
			t.Fatalf("decoded %s but cannot encode it again: %v", s, err)
		}
	})
}

var fuzzRuntime = NewRuntime(RuntimeConfig{MaxDuration: 2 * time.Second})

// FuzzRunSource runs arbitrary source, as TypeScript and as JavaScript: every
// run must settle with a known status, and the host must not crash.
func FuzzRunSource(f *testing.F) {
	for _, s := range []string{
		"export default 1", "export default", "import x from 'y'", "export const a: number = 1",
		"enum E { A } export default E.A", "throw 1", "await null", "`${", "/*", "export default import.meta",
		"function f(){ f() } f()", "export default new Proxy({}, {})", "\x00", "#!shebang\nexport default 1",
		"export { a as default } from './x.js'", "import('fs')", "<div/>", "f<T>(x)",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, ts bool) {
		lang := JavaScript
		if ts {
			lang = TypeScript
		}
		ex, err := fuzzRuntime.Run(context.Background(), src, Options{Language: lang, MemoryLimitBytes: 16 << 20})
		if err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(time.Second, func() { ex.Terminate("fuzz budget") })
		defer timer.Stop()
		res := ex.Wait()
		switch res.Status {
		case StatusSuccess, StatusError, StatusMemory, StatusTerminated, StatusLinkError:
		default:
			t.Fatalf("status %q", res.Status)
		}
		if _, err := res.MarshalJSON(); err != nil {
			t.Fatalf("result does not marshal: %v", err)
		}
	})
}

// FuzzJSONString checks the codec's JSON string writer against encoding/json.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\x00\x1f\u2028", "\xff\xfe", "ß€😀", "</script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want string
		if err := json.Unmarshal(appendJSONString(nil, s), &want); err != nil {
			t.Fatalf("%q: not JSON: %v", s, err)
		}
		if valid := strings.ToValidUTF8(s, "\uFFFD"); want != valid {
			t.Fatalf("%q: decodes to %q", s, want)
		}
	})
}

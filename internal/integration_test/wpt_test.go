package integration_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// The web-platform-tests' encoding and base64 tests, run through the public
// API: wpt/fetch.sh fetches them (nothing of them is committed), and
// TestWebPlatformTests_EncodingAndBase64 runs them when -wpt names the
// folder (it skips at once without it, so go test ./... does not need them):
//
//	./internal/integration_test/wpt/fetch.sh /tmp/wpt
//	go test ./internal/integration_test -run TestWebPlatformTests_EncodingAndBase64 -wpt /tmp/wpt [-wpt.out report.md]
//
// CONFORMANCE.md ("The web-platform-tests: encoding and base64") holds the
// figures.
var (
	wptDir     = flag.String("wpt", "", "the folder wpt/fetch.sh filled (encoding/, html/webappapis/atob/, ...); unset, the web-platform-tests runner skips")
	wptOut     = flag.String("wpt.out", "", "write the web-platform-tests runner's report, in Markdown, to this file")
	wptTimeout = flag.Duration("wpt.timeout", 5*time.Minute, "the time one test file may take")
)

// wptFiles are the test files run, by path from the fetched folder's root
// (wpt/fetch.sh fetches the same list).
var wptFiles = []string{
	"encoding/api-basics.any.js",
	"encoding/api-invalid-label.any.js",
	"encoding/api-replacement-encodings.any.js",
	"encoding/api-surrogates-utf8.any.js",
	"encoding/encodeInto.any.js",
	"encoding/textdecoder-arguments.any.js",
	"encoding/textdecoder-byte-order-marks.any.js",
	"encoding/textdecoder-copy.any.js",
	"encoding/textdecoder-eof.any.js",
	"encoding/textdecoder-fatal.any.js",
	"encoding/textdecoder-fatal-streaming.any.js",
	"encoding/textdecoder-fatal-single-byte.any.js",
	"encoding/textdecoder-ignorebom.any.js",
	"encoding/textdecoder-labels.any.js",
	"encoding/textdecoder-streaming.any.js",
	"encoding/textdecoder-utf16-surrogates.any.js",
	"encoding/textencoder-constructor-non-utf.any.js",
	"encoding/textencoder-utf16-surrogates.any.js",
	"encoding/unsupported-encodings.any.js",
	"encoding/replacement-encodings.any.js",
	"html/webappapis/atob/base64.any.js",
}

// wptStandIns replace, by path, META scripts of the suite's own
// infrastructure that cannot load in the sandbox. /common/sab.js makes its
// SharedArrayBuffer from a shared WebAssembly.Memory as it loads: in the
// sandbox (no WebAssembly, no SharedArrayBuffer) it would throw before any
// subtest is defined, the ArrayBuffer ones included. Its stand-in has the
// same createBuffer (with the options of a resizable buffer, which later
// copies pass), and refuses the shared kind with an Error (not a TypeError,
// which an assert_throws_js around it would take for the one it expects)
// that wptExclShared names.
var wptStandIns = map[string]string{
	"common/sab.js": `// the runner's stand-in for /common/sab.js (wpt_test.go, wptStandIns)
const createBuffer = (type, length, opts) => {
  if (type === "ArrayBuffer") return new ArrayBuffer(length, opts);
  if (type === "SharedArrayBuffer") throw new Error("createBuffer (the runner's /common/sab.js): no SharedArrayBuffer in the sandbox");
  throw new Error("type has to be ArrayBuffer or SharedArrayBuffer");
};
`,
}

// The rules that put a failed subtest out of scope: it failed on something
// the sandbox does not have by design, as its error shows. A subtest that
// fails otherwise is a failure, known (wptKnownFailures) or not.
const (
	wptExclEncoding = "by design: TextDecoder decodes UTF-8 and UTF-16LE only; the subtest needs another of the Encoding Standard's encodings (UTF-16BE, the legacy single- and multi-byte ones, x-user-defined), whose labels throw a RangeError"
	wptExclShared   = "by design: no SharedArrayBuffer (the subtest decodes from a shared buffer)"
	wptExclXHR      = "by design: no XMLHttpRequest (resources/decoding-helpers.js decodes a data: URL through XHR's charset override: the decoders of documents and XHR, not TextDecoder)"
	wptExclStreams  = "by design: no streams (TextDecoderStream, TextEncoderStream, ReadableStream)"
	wptExclCodeGen  = "by design: no code generation (eval, new Function)"
)

var wptRuleOrder = []string{wptExclEncoding, wptExclShared, wptExclXHR, wptExclStreams, wptExclCodeGen}

// wptEncodingLabels reads the Encoding Standard's table of encodings and
// labels as the suite has it (encoding/resources/encodings.js, a copy of
// encodings.json) and gives the labels of the encodings the sandbox's
// TextDecoder does not have: all but UTF-8 and UTF-16LE, and but
// "replacement", whose labels the standard itself has TextDecoder refuse.
// A RangeError for one of them puts a subtest out of scope; for any other
// label (UTF-8's, UTF-16LE's, or no label at all) it is a failure.
func wptEncodingLabels(dir string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "encoding", "resources", "encodings.js"))
	if err != nil {
		return nil, err
	}
	other := map[string]bool{}
	for _, m := range wptEncodingRE.FindAllStringSubmatch(string(b), -1) {
		switch m[2] {
		case "UTF-8", "UTF-16LE", "replacement":
			continue
		}
		for _, l := range wptLabelRE.FindAllStringSubmatch(m[1], -1) {
			other[l[1]] = true
		}
	}
	if len(other) < 100 {
		return nil, fmt.Errorf("encodings.js: %d labels of other encodings, not the table", len(other))
	}
	return other, nil
}

var (
	wptEncodingRE = regexp.MustCompile(`(?s)"labels":\s*\[(.*?)\],\s*"name":\s*"([^"]+)"`)
	wptLabelRE    = regexp.MustCompile(`"([^"]+)"`)
)

var (
	// web.js's RangeError for a label it does not decode
	wptUnsupportedRE = regexp.MustCompile(`(?s)TextDecoder: the encoding "(.*?)" is not supported`)
	wptSharedRE      = regexp.MustCompile(`no SharedArrayBuffer in the sandbox|\b(SharedArrayBuffer|WebAssembly) is not defined`)
	wptXHRRE         = regexp.MustCompile(`\bXMLHttpRequest is not defined`)
	wptStreamsRE     = regexp.MustCompile(`\b(TextDecoderStream|TextEncoderStream|ReadableStream|WritableStream|TransformStream) is not defined`)
	wptCodeGenRE     = regexp.MustCompile(`code generation from strings is not allowed|\beval is not defined`)
)

// wptExclusion names the rule that puts a failure with this message out of
// scope, or "".
func wptExclusion(msg string, otherLabels map[string]bool) string {
	if m := wptUnsupportedRE.FindStringSubmatch(msg); m != nil {
		if otherLabels[strings.ToLower(strings.Trim(m[1], "\t\n\f\r "))] {
			return wptExclEncoding
		}
	}
	switch {
	case wptSharedRE.MatchString(msg):
		return wptExclShared
	case wptXHRRE.MatchString(msg):
		return wptExclXHR
	case wptStreamsRE.MatchString(msg):
		return wptExclStreams
	case wptCodeGenRE.MatchString(msg):
		return wptExclCodeGen
	}
	return ""
}

// wptKnownFailures are the subtests in scope that fail, by "file: subtest"
// (the file from the fetched folder's root), each with its reason. The
// test fails when another subtest fails, and when one of these passes (take
// it off the list, so that the recorded figures stay true).
var wptKnownFailures = map[string]string{}

var wptMetaScript = regexp.MustCompile(`(?m)^//\s*META:\s*script=(\S+)\s*$`)

// wptProgram is the test module of a file: its META scripts (or their
// stand-ins) and its own code, one after another, and the resources it may
// fetch (the fetched folder's .json files).
func wptProgram(dir, file string) (string, error) {
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range wptMetaScript.FindAllStringSubmatch(string(src), -1) {
		p := m[1]
		if strings.HasPrefix(p, "/") {
			p = strings.TrimPrefix(p, "/")
		} else {
			p = path.Join(path.Dir(file), p)
		}
		script, ok := wptStandIns[p]
		if !ok {
			s, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				return "", fmt.Errorf("%s's META script: %w", file, err)
			}
			script = string(s)
		}
		fmt.Fprintf(&b, "// META script %s\n%s\n;\n", p, script)
	}
	fmt.Fprintf(&b, "// %s\n%s\n", file, src)
	return b.String(), nil
}

func wptResourcesOf(dir string) (map[string]any, error) {
	res := map[string]any{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		res[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return res, err
}

type wptSubtest struct {
	Name, Status, Message string
}

// wptFileResult is what a file gave: its subtests, in order, and a harness
// error (its code threw outside any subtest), if any.
type wptFileResult struct {
	Tests   []wptSubtest
	Harness *string
	Err     string // the run did not give results
}

func runWPTFile(rt *airlock.Runtime, harness, dir, file string, resources map[string]any) wptFileResult {
	prog, err := wptProgram(dir, file)
	if err != nil {
		return wptFileResult{Err: err.Error()}
	}
	return runWPTProgram(rt, harness, file, prog, resources, *wptTimeout)
}

// runWPTProgram runs the harness as the entry, with prog, a file's test
// module, as ./wpt-test.js.
func runWPTProgram(rt *airlock.Runtime, harness, file, prog string, resources map[string]any, timeout time.Duration) wptFileResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ex, err := rt.Run(ctx, harness, airlock.Options{
		Language:         airlock.JavaScript,
		Filename:         "wpt-harness.js",
		Modules:          map[string]string{"./wpt-test.js": prog},
		Globals:          map[string]any{"wptPath": file, "wptResources": resources},
		MemoryLimitBytes: 512 << 20,
		Timeout:          timeout,
	})
	if err != nil {
		return wptFileResult{Err: "Run: " + err.Error()}
	}
	res := ex.Wait()
	if res.Status != airlock.StatusSuccess {
		b, _ := json.Marshal(res.Error)
		return wptFileResult{Err: fmt.Sprintf("status %s: %s", res.Status, b)}
	}
	s, ok := res.Result.(string)
	if !ok {
		return wptFileResult{Err: fmt.Sprintf("result %T, not the JSON", res.Result)}
	}
	var out wptFileResult
	if err := json.Unmarshal([]byte(s), &struct {
		Tests   *[]wptSubtest `json:"tests"`
		Harness **string      `json:"harness"`
	}{&out.Tests, &out.Harness}); err != nil {
		return wptFileResult{Err: "the result's JSON: " + err.Error()}
	}
	return out
}

// wptFileCount is one file's figures.
type wptFileCount struct {
	file                             string
	subtests, pass, excluded, failed int
	err                              string
}

// TestWebPlatformTests_EncodingAndBase64 runs the web-platform-tests'
// encoding and base64 (atob/btoa) testharness tests: each file, with its
// META scripts, after a testharness of our own (wpt/harness.js), in one
// run of its own. A subtest that fails for something absent by design is
// out of scope by a named rule (wptRuleOrder); any other failure fails the
// test unless wptKnownFailures lists it.
func TestWebPlatformTests_EncodingAndBase64(t *testing.T) {
	if *wptDir == "" {
		t.Skip("the web-platform-tests runner runs with -wpt DIR (wpt/fetch.sh DIR fetches them)")
	}
	harness, err := os.ReadFile(filepath.Join("wpt", "harness.js"))
	if err != nil {
		t.Fatal(err)
	}
	resources, err := wptResourcesOf(*wptDir)
	if err != nil {
		t.Fatal(err)
	}
	otherLabels, err := wptEncodingLabels(*wptDir)
	if err != nil {
		t.Fatal(err)
	}
	rt := airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: *wptTimeout + time.Minute})
	defer rt.Close()

	var counts []wptFileCount
	byRule := map[string]int{}
	type failure struct{ key, msg, known string }
	var failures []failure
	seen := map[string]bool{}
	start := time.Now()
	for _, file := range wptFiles {
		fileStart := time.Now()
		r := runWPTFile(rt, string(harness), *wptDir, file, resources)
		c := wptFileCount{file: file, err: r.Err}
		if r.Err != "" {
			t.Errorf("%s: %s", file, r.Err)
			counts = append(counts, c)
			continue
		}
		tests := r.Tests
		if r.Harness != nil {
			tests = append(tests, wptSubtest{Name: "(harness error)", Status: "ERROR", Message: *r.Harness})
		}
		for _, st := range tests {
			c.subtests++
			if st.Status == "PASS" {
				c.pass++
				continue
			}
			msg := st.Status + ": " + st.Message
			if rule := wptExclusion(msg, otherLabels); rule != "" {
				c.excluded++
				byRule[rule]++
				continue
			}
			c.failed++
			key := file + ": " + st.Name
			seen[key] = true
			known, ok := wptKnownFailures[key]
			if !ok {
				t.Errorf("%s: %s", key, msg)
			}
			failures = append(failures, failure{key, msg, known})
		}
		if c.subtests == 0 { // a file that ran nothing passes nothing
			t.Errorf("%s: no subtest ran", file)
		}
		t.Logf("%s: %d subtests, %d pass, %d out of scope, %d fail (%s)", file, c.subtests, c.pass, c.excluded, c.failed,
			time.Since(fileStart).Round(time.Millisecond))
		counts = append(counts, c)
	}
	var keys []string
	for key := range wptKnownFailures {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if !seen[key] {
			t.Errorf("a known failure passes now, or is gone (take it off wptKnownFailures): %s", key)
		}
	}

	var total wptFileCount
	for _, c := range counts {
		total.subtests += c.subtests
		total.pass += c.pass
		total.excluded += c.excluded
		total.failed += c.failed
	}
	inScope := total.subtests - total.excluded
	rate := 100.0
	if inScope > 0 {
		rate = 100 * float64(total.pass) / float64(inScope)
	}
	t.Logf("%d files, %d subtests: %d pass, %d out of scope by rule, %d fail; %d of %d in scope pass (%.2f%%) in %s",
		len(counts), total.subtests, total.pass, total.excluded, total.failed, total.pass, inScope, rate, time.Since(start).Round(time.Second))
	for _, rule := range wptRuleOrder {
		if byRule[rule] > 0 {
			t.Logf("out of scope, %d: %s", byRule[rule], rule)
		}
	}

	if *wptOut == "" {
		return
	}
	var b strings.Builder
	b.WriteString("# The web-platform-tests: encoding and base64\n\n")
	fmt.Fprintf(&b, "Folder `%s`; %s.\n\n", *wptDir, time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| file | subtests | pass | out of scope | in scope | fail |\n|---|---:|---:|---:|---:|---:|\n")
	for _, c := range counts {
		if c.err != "" {
			fmt.Fprintf(&b, "| %s | did not run: %s | | | | |\n", c.file, strings.ReplaceAll(c.err, "|", "\\|"))
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", c.file, c.subtests, c.pass, c.excluded, c.subtests-c.excluded, c.failed)
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %d |\n\n", total.subtests, total.pass, total.excluded, inScope, total.failed)
	fmt.Fprintf(&b, "Of the subtests in scope, %d of %d pass (%.2f%%).\n\n## Out of scope, by rule\n\n", total.pass, inScope, rate)
	for _, rule := range wptRuleOrder {
		fmt.Fprintf(&b, "- %s: %d\n", rule, byRule[rule])
	}
	b.WriteString("\n## Failures\n\n")
	if len(failures) == 0 {
		b.WriteString("None.\n")
	}
	for _, f := range failures {
		reason := "**not a known failure**"
		if f.known != "" {
			reason = "known: " + f.known
		}
		fmt.Fprintf(&b, "- `%s`: %s (%s)\n", strings.ReplaceAll(f.key, "`", "'"), strings.ReplaceAll(f.msg, "\n", " "), reason)
	}
	if err := os.WriteFile(*wptOut, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// wptHarnessCheck is a test module with a subtest of each kind, named by
// the status testharness.js gives it (a "want" prefix), and the rule that
// puts it out of scope, if one does.
const wptHarnessCheck = `
test(() => { assert_equals(1, 1); assert_array_equals(new Uint8Array([1, 2]), [1, 2]); assert_true(true); assert_false(false); }, "PASS asserts");
test(() => assert_equals(1, "1"), "FAIL assert_equals types");
test(() => assert_equals(-0, 0), "FAIL assert_equals -0");
test(() => assert_equals(NaN, NaN), "PASS assert_equals NaN");
test(() => assert_not_equals(1, 1), "FAIL assert_not_equals");
test(() => assert_array_equals([1, 2], [1, 3]), "FAIL assert_array_equals");
test(() => assert_throws_js(TypeError, () => { throw new RangeError("x"); }), "FAIL assert_throws_js wrong error");
test(() => assert_throws_js(TypeError, () => {}), "FAIL assert_throws_js no throw");
test(() => assert_throws_js(TypeError, () => null.x), "PASS assert_throws_js");
test(() => assert_throws(new TypeError(), () => { throw new RangeError(); }), "FAIL assert_throws legacy");
test(() => assert_throws_dom("InvalidCharacterError", () => atob("a")), "PASS assert_throws_dom");
test(() => assert_throws_dom("INVALID_CHARACTER_ERR", () => atob("a")), "PASS assert_throws_dom legacy code");
test(() => assert_throws_dom("SyntaxError", () => atob("a")), "FAIL assert_throws_dom name");
test(() => assert_class_string(new TextDecoder(), "TextDecoder"), "PASS assert_class_string");
test(() => assert_unreached("no"), "FAIL assert_unreached");
test(() => assert_equals(format_value("a\u0000\"\ud800"), '"a\\0\\"\\ud800"'), "PASS format_value");
promise_test(() => Promise.reject(new Error("boom")), "FAIL promise_test rejected");
promise_test(async () => assert_true(true), "PASS promise_test");
promise_test(() => 5, "FAIL promise_test not thenable");
promise_test(() => fetch("d.json").then((r) => r.json()).then((v) => assert_array_equals(v, [1])), "PASS fetch stand-in");
async_test((t) => { Promise.resolve().then(t.step_func_done(() => assert_true(true))); }, "PASS async_test");
async_test((t) => { Promise.resolve().then(t.step_func(() => assert_true(false))); }, "FAIL async_test");
async_test(() => {}, "TIMEOUT async_test never done");
generate_tests((a, b) => assert_equals(a, b), [["PASS generate_tests", 1, 1]]);
test(() => { const b = new ArrayBuffer(4); const v = new Uint8Array(b); new MessageChannel().port1.postMessage(b, [b]); assert_equals(v.length, 0); }, "PASS MessageChannel stand-in detaches");
test(() => { createBuffer("SharedArrayBuffer", 2); }, "FAIL shared " + "` + wptExclShared + `");
test(() => new TextDecoder(" utf-16BE"), "FAIL other encoding " + "` + wptExclEncoding + `");
test(() => new TextDecoder("utf-8\u00a0"), "FAIL not a label");
test(() => new Function("return 1")(), "FAIL code generation " + "` + wptExclCodeGen + `");
test(() => new XMLHttpRequest(), "FAIL xhr " + "` + wptExclXHR + `");
test(() => new TextDecoderStream(), "FAIL streams " + "` + wptExclStreams + `");
test(() => {}, "PASS a name");
test(() => {}, "PASS a name");
throw new Error("at the top level, after the subtests");
`

// TestWebPlatformTestsHarness checks the runner's own parts, without the
// suite: wpt/harness.js gives each kind of subtest the status testharness.js
// gives it, and the rules put out of scope what they name and no more.
func TestWebPlatformTestsHarness(t *testing.T) {
	harness, err := os.ReadFile(filepath.Join("wpt", "harness.js"))
	if err != nil {
		t.Fatal(err)
	}
	prog := wptStandIns["common/sab.js"] + wptHarnessCheck
	r := runWPTProgram(testRuntime, string(harness), "encoding/check.any.js", prog,
		map[string]any{"encoding/d.json": "[1]"}, time.Minute)
	if r.Err != "" {
		t.Fatal(r.Err)
	}
	other := map[string]bool{"utf-16be": true}
	got := map[string]bool{}
	for _, st := range r.Tests {
		got[st.Name] = true
		want, _, _ := strings.Cut(st.Name, " ")
		if st.Status != want {
			t.Errorf("%q: %s (%s), want %s", st.Name, st.Status, st.Message, want)
		}
		wantRule := ""
		for _, rule := range wptRuleOrder {
			if strings.HasSuffix(st.Name, rule) {
				wantRule = rule
			}
		}
		if rule := wptExclusion(st.Status+": "+st.Message, other); rule != wantRule {
			t.Errorf("%q (%s): out of scope by %q, want %q", st.Name, st.Message, rule, wantRule)
		}
	}
	if !got["PASS a name [2]"] {
		t.Errorf("a second subtest of the same name is not told apart: %v", got)
	}
	if n := len(regexp.MustCompile(`(?m)^(test|promise_test|async_test|generate_tests)\(`).FindAllString(wptHarnessCheck, -1)); len(r.Tests) != n {
		t.Errorf("%d subtests, want %d", len(r.Tests), n)
	}
	if r.Harness == nil || !strings.Contains(*r.Harness, "at the top level") {
		t.Errorf("harness error = %v, want the top-level throw", r.Harness)
	}
}

package integration_test

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock"
)

// testRuntime is shared by the tests; each run still gets a fresh sandbox.
// Its safety cap is far above any test's need: the long sort tests
// take 11 s on a loaded 2-core machine, and a cap that fires under load fails
// a test for the machine's sake, not the code's.
var testRuntime = airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: 60 * time.Second})

func runOpts(t *testing.T, src string, opts airlock.Options) *airlock.Result {
	t.Helper()
	ex, err := testRuntime.Run(context.Background(), src, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return ex.Wait()
}

func run(t *testing.T, src string) *airlock.Result {
	t.Helper()
	return runOpts(t, src, airlock.Options{})
}

func wantStatus(t *testing.T, res *airlock.Result, want airlock.Status) {
	t.Helper()
	if res.Status != want {
		b, _ := json.Marshal(res)
		t.Fatalf("status = %s, want %s; result: %s", res.Status, want, b)
	}
	if (res.Error == nil) != (want == airlock.StatusSuccess) {
		t.Fatalf("error = %v with status %s", res.Error, res.Status)
	}
}

func wantResult(t *testing.T, res *airlock.Result, want any) {
	t.Helper()
	wantStatus(t, res, airlock.StatusSuccess)
	if !reflect.DeepEqual(res.Result, want) {
		t.Fatalf("result = %#v, want %#v", res.Result, want)
	}
}

// evalJS runs a JavaScript entry and returns its default export.
func evalJS(t *testing.T, src string) any {
	t.Helper()
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusSuccess)
	return res.Result
}

// comparable is a result's JSON, indented, less what changes from run to
// run: the duration, the memory, the logs' timestamps.
func comparable(t *testing.T, res *airlock.Result) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "durationMs")
	delete(m, "memoryUsedBytes")
	for _, l := range m["logs"].([]any) {
		delete(l.(map[string]any), "timestamp")
	}
	b, _ = json.MarshalIndent(m, "", "  ")
	return string(b)
}

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

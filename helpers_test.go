package airlock_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

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

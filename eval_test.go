package airlock_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// Eval runs and waits in one call; report() works without a callback.
func TestEval(t *testing.T) {
	res, err := airlock.Eval(context.Background(), `report(1); report({a: 2}); export default 6 * 7`, airlock.Options{})
	if err != nil || res.Status != airlock.StatusSuccess || res.Result != 42.0 || len(res.Reports) != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	// A deadline is a timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err = airlock.Eval(ctx, `for (;;) {}`, airlock.Options{})
	if err != nil || res.Status != airlock.StatusTerminated {
		t.Fatalf("%+v, %v", res, err)
	}
	// A Globals report stays the caller's.
	res, err = airlock.Eval(context.Background(), `export default report`, airlock.Options{Globals: map[string]any{"report": "mine"}})
	if err != nil || res.Result != "mine" {
		t.Fatalf("%+v, %v", res, err)
	}
	// Invalid options are the error.
	if _, err := airlock.Eval(context.Background(), `1`, airlock.Options{MemoryLimitBytes: -1}); err == nil {
		t.Fatal("negative memory accepted")
	}
}

// A Result encodes the same by value as through a pointer.
func TestResultMarshalByValue(t *testing.T) {
	res, err := airlock.Eval(context.Background(), `console.log("x"); export default {n: 1}`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byPtr, err1 := json.Marshal(res)
	byVal, err2 := json.Marshal(*res)
	inSlice, err3 := json.Marshal([]airlock.Result{*res})
	if err1 != nil || err2 != nil || err3 != nil || string(byPtr) != string(byVal) || string(inSlice) != "["+string(byPtr)+"]" ||
		!strings.Contains(string(byVal), `"status":"success"`) || !strings.Contains(string(byVal), `"durationMs"`) {
		t.Fatalf("%s\n%s\n%s", byPtr, byVal, inSlice)
	}
}

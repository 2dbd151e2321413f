package airlock_test

import (
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
)

// A run settles as soon as its export has resolved, even while the program
// keeps queueing microtasks forever.
func TestRun_SettlesDespiteEndlessMicrotasks(t *testing.T) {
	res := runOpts(t, `async function spin() { for (;;) await null } spin(); export default 1`,
		airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, 1.0)
	res = runOpts(t, `queueMicrotask(function again() { queueMicrotask(again) }); throw new TypeError("boom")`,
		airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Message != "boom" {
		t.Fatalf("%+v", res.Error)
	}
}

// A panic in a callback the engine calls (here Options.Log) fails the run
// as an error of the host call; it is not taken for a runtime.Goexit.
func TestRun_CallbackPanicIsAnError(t *testing.T) {
	res := runOpts(t, `console.log("x"); export default 1`, airlock.Options{Language: airlock.JavaScript,
		Log: func(airlock.Log) { panic("boom") }})
	wantStatus(t, res, airlock.StatusError)
	if strings.Contains(res.Error.Message, "Goexit") {
		t.Fatalf("%+v", res.Error)
	}
}

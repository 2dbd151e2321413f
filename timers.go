package airlock

import "github.com/airlockrun/airlock/internal/timers"

// Timers returns setTimeout, setInterval, clearTimeout and clearInterval,
// to put in Options.Globals (maps.Copy(opts.Globals, airlock.Timers())):
// seed 000 §6.6 leaves timers out of the sandbox unless the caller gives
// them, and this is the ready way. Timers live in the sandbox; the host
// only wakes it for the earliest, so any number of timers costs a few
// asynchronous host calls. They die with the run: a timer still pending
// when the program's evaluation ends never fires (await what must
// happen: await new Promise((r) => setTimeout(r, 100))), and callbacks run
// under the run's limits. An id is a number, as in browsers; a callback
// must be a function (no code from strings); a delay that is not a number
// in [0, 2^31-1] is 0. Not for an Executor (Executor.SendTools refuses
// them: what a step leaves pending is dropped when it ends).
func Timers() map[string]any {
	t := &timerBridge{}
	return map[string]any{"setTimeout": t, "setInterval": t, "clearTimeout": t, "clearInterval": t}
}

// timerBridge marks the four globals Timers gives; run.go bridges them.
type timerBridge struct{}

// bridged is what the timers' glue is called with.
func (*timerBridge) bridged() any { return Async(timers.Sleep) }

// glue is the JavaScript that makes the four.
func (*timerBridge) glue() string { return timers.Glue }

func (*timerBridge) names() []string {
	return []string{"setTimeout", "setInterval", "clearTimeout", "clearInterval"}
}

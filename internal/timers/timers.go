// Package timers is the sandbox's setTimeout, setInterval, clearTimeout and
// clearInterval (airlock.Timers): JavaScript glue (glue.js) that keeps the
// timers in the sandbox and waits on the host with Sleep, one wait at a time
// for the earliest timer, so that any number of timers holds at most a few
// asynchronous host calls.
package timers

import (
	"context"
	_ "embed"
	"time"
)

// Glue makes the four functions from an object { sleep } (source.Config.Glue).
//
//go:embed glue.js
var Glue string

// MaxDelay is the longest delay a timer takes, as in browsers and Node
// (2^31-1 ms); a longer one, or one that is not a number, is 1 ms in Node
// and 0 in browsers: here 0, as WebIDL's conversion gives.
const MaxDelay = 1<<31 - 1

// Sleep waits ms milliseconds and reports true, or reports false at once
// when ctx ends (the run's end: its timers die with it).
func Sleep(ctx context.Context, ms float64) bool {
	if ms > MaxDelay {
		ms = MaxDelay
	}
	t := time.NewTimer(time.Duration(max(ms, 0) * float64(time.Millisecond)))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

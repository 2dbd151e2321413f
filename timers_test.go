package airlock_test

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

func runTimers(t *testing.T, code string) *airlock.Result {
	t.Helper()
	return runTimersReport(t, code, func(any) {})
}

// runTimersReport is runTimers with report, called on each report() as
// the program makes it.
func runTimersReport(t *testing.T, code string, report func(any)) *airlock.Result {
	t.Helper()
	globals := map[string]any{}
	maps.Copy(globals, airlock.Timers())
	ex, err := airlock.Run(context.Background(), code, airlock.Options{Language: airlock.JavaScript, Globals: globals,
		Timeout: time.Minute, Report: report})
	if err != nil {
		t.Fatal(err)
	}
	return ex.Wait()
}

// The timers: a delay awaited, callbacks of one delay in the order of
// their creation (two thousand of them, far more than the asynchronous
// host calls that run at once), arguments, clearTimeout, setInterval until
// cleared, a callback that clears a later one, ids as numbers, and the
// refusal of code from strings.
func TestTimers(t *testing.T) {
	res := runTimers(t, `
const order = [];
await new Promise((r) => setTimeout(r, 5));
const done = new Promise((resolve) => {
  for (let i = 0; i < 2000; i++) { const d = (i * 7) % 10; setTimeout((n) => order.push([n]), d, i); }
  setTimeout(resolve, 30);
});
const cleared = setTimeout(() => order.push("cleared"), 1);
clearTimeout(cleared);
let ticks = 0;
const every = setInterval(() => { if (++ticks === 3) clearInterval(every); }, 2);
let late; const early = setTimeout(() => clearTimeout(late), 1); late = setTimeout(() => order.push("late"), 3);
await done;
await new Promise((r) => setTimeout(r, 20));
// (timers of one delay fire in the order they were made; across delays
// the order depends on when each was made, which a loaded machine moves)
const fired = order.filter((x) => Array.isArray(x));
const lastOfDelay = {};
let sorted = true;
fired.forEach(([n]) => {
  const d = (n * 7) % 10;
  if (lastOfDelay[d] !== undefined && lastOfDelay[d] > n) sorted = false;
  lastOfDelay[d] = n;
});
// across delays: one due a second later fires after, though made first
const pair = [];
await new Promise((r) => { setTimeout(() => { pair.push("later"); r(); }, 1000); setTimeout(() => pair.push("sooner"), 0); });
if (pair.join() !== "sooner,later") sorted = false;
let threw; try { setTimeout("order.push(1)", 1); } catch (e) { threw = e.name; }
export default [order.length, sorted, order.includes("cleared"), order.includes("late"), ticks, typeof every, threw].join(",");`)
	if res.Status != airlock.StatusSuccess || res.Result != "2000,true,false,false,3,number,TypeError" {
		t.Fatalf("%s %v %+v", res.Status, res.Result, res.Error)
	}
}

// Timers die with the run: one pending for an hour does not hold the run,
// and one due a millisecond after its end never fires (its report would
// come from the host's side, after Wait); an error thrown by a callback
// fails the run, as an uncaught error does.
func TestTimers_DieWithTheRun(t *testing.T) {
	var mu sync.Mutex
	var reports []any
	done := make(chan *airlock.Result, 1)
	go func() {
		done <- runTimersReport(t, `setTimeout(() => report("fired"), 3600 * 1000); setInterval(() => {}, 1);
setTimeout(() => report("after the end"), 1); export default "ended";`, func(v any) {
			mu.Lock()
			reports = append(reports, v)
			mu.Unlock()
		})
	}()
	select {
	case res := <-done:
		if res.Status != airlock.StatusSuccess || res.Result != "ended" || len(res.Reports) != 0 {
			t.Fatalf("%s %v %v", res.Status, res.Result, res.Reports)
		}
	case <-time.After(time.Minute): // a hang guard, not a speed bound
		t.Fatal("a pending timer held the run")
	}
	time.Sleep(50 * time.Millisecond) // (fifty times the late timer's delay: a report it made would be here)
	mu.Lock()
	late := len(reports)
	mu.Unlock()
	if late != 0 {
		t.Errorf("timers fired after the run: %v", reports)
	}
	res := runTimers(t, `await new Promise((r) => { setTimeout(() => { throw new RangeError("in a timer"); }, 1); setTimeout(r, 20); }); export default 1;`)
	if res.Status != airlock.StatusError || res.Error == nil || res.Error.Name != "RangeError" {
		t.Fatalf("an error in a callback: %s %+v", res.Status, res.Error)
	}
}

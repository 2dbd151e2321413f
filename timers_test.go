package airlock_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

func runTimers(t *testing.T, code string) *airlock.Result {
	t.Helper()
	globals := map[string]any{}
	maps.Copy(globals, airlock.Timers())
	ex, err := airlock.Run(context.Background(), code, airlock.Options{Language: airlock.JavaScript, Globals: globals,
		Timeout: time.Minute, Report: func(any) {}})
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
  for (let i = 0; i < 2000; i++) { const d = (i * 7) % 10; setTimeout((n, due) => order.push([n, due]), d, i, Date.now() + d); }
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
// and it never fires; an error thrown by a callback fails the run, as an
// uncaught error does.
func TestTimers_DieWithTheRun(t *testing.T) {
	done := make(chan *airlock.Result, 1)
	go func() {
		done <- runTimers(t, `setTimeout(() => report("fired"), 3600 * 1000); setInterval(() => {}, 1); export default "ended";`)
	}()
	select {
	case res := <-done:
		if res.Status != airlock.StatusSuccess || res.Result != "ended" || len(res.Reports) != 0 {
			t.Fatalf("%s %v %v", res.Status, res.Result, res.Reports)
		}
	case <-time.After(time.Minute): // a hang guard, not a speed bound
		t.Fatal("a pending timer held the run")
	}
	res := runTimers(t, `await new Promise((r) => { setTimeout(() => { throw new RangeError("in a timer"); }, 1); setTimeout(r, 20); }); export default 1;`)
	if res.Status != airlock.StatusError || res.Error == nil || res.Error.Name != "RangeError" {
		t.Fatalf("an error in a callback: %s %+v", res.Status, res.Error)
	}
}

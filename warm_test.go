package airlock_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/childtest"
)

// logsOf is the first argument of each of res's logs, as text.
func logsOf(res *airlock.Result) string {
	s := ""
	for _, l := range res.Logs {
		if len(l.Args) > 0 {
			s += fmt.Sprint(l.Args[0]) + " "
		}
	}
	return s
}

// The shim runs the entry module itself (no import() around it), and
// selects the export at once when nothing of the program's is queued. The
// program's own microtasks run in the order an import() gave them: the
// export is selected two jobs after the module evaluated, and the run ends
// a job after the export's value settled. These logs are those the engine
// gave when it ran the entry through import().
func TestEntryJobsAsAfterImport(t *testing.T) {
	const chain = `let p = Promise.resolve(); for (let i = 1; i <= 9; i++) p = p.then(() => console.log(i));`
	for _, c := range []struct{ src, logs string }{
		// Jobs queued by the module's body: those of the first four jobs
		// run before the outcome.
		{chain + ` export default "r"`, "1 2 3 4 "},
		{`queueMicrotask(() => console.log("m")); export default 1`, "m "},
		{`console.log("body"); export default function () { return 1 }`, "body "},
		// Jobs queued by the selected export's call: two run before the
		// outcome, whether its value is a primitive or not.
		{`export default function () { ` + chain + ` return 1 }`, "1 2 "},
		{`export default function () { ` + chain + ` return {} }`, "1 2 "},
		{`export default function () { queueMicrotask(() => console.log("x")); return 1 }`, "x "},
		{`export default async function () { console.log("a"); await null; console.log("b"); return 1 }`, "a b "},
		{`export default { then(r) { console.log("then"); r(1) } }`, "then "},
		// A module or an export that awaits.
		{chain + ` export default async function () { await null; return 1 }`, "1 2 3 4 5 6 "},
		{chain + ` await null; export default 2`, "1 2 3 4 5 6 "},
	} {
		res := runOpts(t, c.src, airlock.Options{Language: airlock.JavaScript})
		if res.Status != airlock.StatusSuccess {
			t.Fatalf("%s: %s %v", c.src, res.Status, res.Error)
		}
		if got := logsOf(res); got != c.logs {
			t.Errorf("%s: logs %q, want %q", c.src, got, c.logs)
		}
	}
}

// A module whose text never spells "meta" gets no import.meta object (the
// engine skips its URL); every spelling that reads import.meta has it.
func TestImportMetaSpellings(t *testing.T) {
	for _, src := range []string{
		`export default import.meta.url`,
		`export default import . meta . url`,
		"export default import/* c */.\n// c\nmeta.url",
		`const m = import.meta; export default m["url"]`,
	} {
		if got := evalJS(t, src); got != "sandbox:<runCode>" {
			t.Errorf("%s: %v", src, got)
		}
	}
	res := runOpts(t, `export default import.m\u0065ta.url`, airlock.Options{Language: airlock.JavaScript})
	if res.Status == airlock.StatusSuccess {
		t.Fatalf("an escaped meta compiled: %v", res.Result)
	}
}

// Runs one after another on one processor use the sandboxes the runtime
// prepares: a run that comes while the previous run's sandbox is being
// rewound waits for it rather than making a new instance. Before, the
// workers that yield to their caller after a run fell behind it, and
// about a third of such runs made a new instance (1.3-1.8x the
// floor's time per run instead of 0.2x: BENCHMARKS.md, "Sequential
// runs on one processor").
func TestSequentialRunsReuseSandboxes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, prepared := range []int{-1, 1, 2, 4} {
		rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: prepared})
		run := func() {
			ex, err := rt.Run(context.Background(), `export default "hello"`, airlock.Options{Language: airlock.JavaScript})
			if err != nil {
				t.Fatal(err)
			}
			if res := ex.Wait(); res.Status != airlock.StatusSuccess || res.Result != "hello" {
				t.Fatalf("%+v", res)
			}
		}
		for range 20 {
			run()
		}
		const n = 300
		before := airlock.NewInstances()
		for range n {
			run()
		}
		// A few are allowed: the pool fills as closed sandboxes are given
		// back, and another test's runtime may still be winding down.
		if made := airlock.NewInstances() - before; made > 10 {
			t.Errorf("Prepared %d: %d of %d sequential runs made a new instance", prepared, made, n)
		}
		rt.Close()
	}
}

// A run that waits for a worker's next sandbox still runs when the runtime
// is closed meanwhile: Close lets runs in progress finish.
func TestWaitingRunFinishesAfterClose(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for range 20 {
		rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: 1})
		var exs []*airlock.Execution
		for range 3 {
			ex, err := rt.Run(context.Background(), `export default 1`, airlock.Options{Language: airlock.JavaScript})
			if err != nil {
				t.Fatal(err)
			}
			exs = append(exs, ex)
		}
		rt.Close()
		for _, ex := range exs {
			if res := ex.Wait(); res.Status != airlock.StatusSuccess {
				t.Fatalf("%+v", res)
			}
		}
	}
}

// A process's first runs, which wait for the engine's start-up, have their
// TypeScript entries transformed meanwhile (source.Pretransform): their
// results, logs and error positions are those of later runs.
func TestFirstRunsOfAProcess(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	if airlock.EngineStarted() {
		t.Fatal("the engine started before the first run: the test tests nothing")
	}
	cases := []struct{ src, want string }{
		{"interface G { text: string }\nconst g: G = { text: 'hi' };\nconsole.log('computing');\nexport default g.text satisfies string;", "hi"},
		{"type N = number;\nconst n: N = 1;\n\n  throw new Error('boom ' + n);\nexport default n;", "Error boom 1 at <runCode>:4:13"},
		{"const f = <T,>(x: T): T => x;\nexport default f<string>('generic');", "generic"},
	}
	rt := airlock.NewRuntime(airlock.RuntimeConfig{})
	defer rt.Close()
	var exs []*airlock.Execution
	for _, c := range cases {
		ex, err := rt.Run(context.Background(), c.src, airlock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		exs = append(exs, ex)
	}
	outcome := func(res *airlock.Result) string {
		if res.Error != nil {
			return fmt.Sprintf("%s %s at %s:%d:%d", res.Error.Name, res.Error.Message, res.Error.Filename, res.Error.Line, res.Error.Column)
		}
		return fmt.Sprint(res.Result)
	}
	var first []string
	for i, ex := range exs {
		first = append(first, outcome(ex.Wait()))
		if first[i] != cases[i].want {
			t.Errorf("first run %d: %s, want %s", i, first[i], cases[i].want)
		}
	}
	if !airlock.EngineStarted() {
		t.Fatal("the engine did not start")
	}
	for i, c := range cases {
		ex, err := rt.Run(context.Background(), c.src+"\n// again", airlock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := outcome(ex.Wait()); got != first[i] {
			t.Errorf("run %d: first %s, later %s", i, first[i], got)
		}
	}
}

// Several goroutines wait for one run: all get the same Result.
func TestManyWaitersOfOneRun(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{})
	defer rt.Close()
	for range 20 {
		ex, err := rt.Run(context.Background(), `export default 40 + 2`, airlock.Options{Language: airlock.JavaScript})
		if err != nil {
			t.Fatal(err)
		}
		results := make(chan *airlock.Result, 4)
		for range 4 {
			go func() { results <- ex.Wait() }()
		}
		first := <-results
		for range 3 {
			if res := <-results; res != first {
				t.Fatal("two waiters got different results")
			}
		}
		if first.Status != airlock.StatusSuccess || first.Result != 42.0 {
			t.Fatalf("%+v", first)
		}
	}
}

// waitFor polls cond until it holds, or fails the test after a generous
// bound that only a broken implementation reaches.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 30 s", what)
		}
	}
}

// A Runtime with KeepWarm rehearses a run while it is idle, for KeepWarm
// after its last run and no longer; Close stops it at once. One without
// rehearses nothing.
func TestKeepWarm(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{KeepWarm: 50 * time.Millisecond})
	defer rt.Close()
	if res := runOn(t, rt, `export default 1`, airlock.Options{}); res.Status != airlock.StatusSuccess {
		t.Fatalf("%+v", res)
	}
	waitFor(t, "rehearsing", func() bool { n, _ := airlock.Rehearsals(rt); return n > 0 })
	waitFor(t, "done rehearsing", func() bool { _, on := airlock.Rehearsals(rt); return !on })
	stopped, _ := airlock.Rehearsals(rt)
	time.Sleep(20 * time.Millisecond)
	if n, _ := airlock.Rehearsals(rt); n != stopped {
		t.Fatalf("%d rehearsals after the last run's KeepWarm, %d when it ended", n, stopped)
	}
	// A run starts it again, and the runs go on meanwhile.
	for range 20 {
		time.Sleep(3 * time.Millisecond)
		if res := runOn(t, rt, `export default 2`, airlock.Options{}); res.Result != 2.0 {
			t.Fatalf("%+v", res)
		}
	}
	if _, on := airlock.Rehearsals(rt); !on {
		t.Fatal("not rehearsing after a run")
	}
	rt.Close()
	waitFor(t, "stopped by Close", func() bool { _, on := airlock.Rehearsals(rt); return !on })

	cold := airlock.NewRuntime(airlock.RuntimeConfig{})
	defer cold.Close()
	runOn(t, cold, `export default 1`, airlock.Options{})
	time.Sleep(20 * time.Millisecond)
	if n, on := airlock.Rehearsals(cold); n != 0 || on {
		t.Fatalf("a Runtime without KeepWarm rehearsed %d runs (now: %v)", n, on)
	}
}

package airlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// The operation budget is counted by the engine: one operation for every
// entry into a loop body and for every entry into one of the session's
// functions, a call by any route (bytecode, native code, new, super) or the
// start or a resumption of an async function or a generator. A step with
// a budget of n operations that spends exactly n passes; the same step
// with n-1 fails.
func TestExecutor_OpBudgetExact(t *testing.T) {
	for _, c := range []struct {
		name string
		code string
		ops  int // what the code spends
	}{
		{"for", `for (let i = 0; i < 50; i++) {}`, 50},
		{"for without test", `for (let i = 0; ; i++) { if (i === 50) break }`, 51},
		{"for-in", `for (const k in {a: 1, b: 2, c: 3}) {}`, 3},
		{"for-of", `for (const x of [1, 2, 3, 4]) {}`, 4},
		// The generator's own loop counts as well, and its start and its
		// 21 resumptions (20 values, then done).
		{"for-of over a generator", `function* g(n) { for (let i = 0; i < n; i++) yield i } for (const x of g(20)) {}`, 20 + 20 + 1 + 21},
		{"for-of over a generator without loops", `function* g3() { yield 1; yield 2; yield 3 } for (const x of g3()) {}`, 3 + 1 + 4},
		// A hand-written iterator's next() is called by the engine: 1 more per value.
		{"for-of over an iterator", `const it = {[Symbol.iterator]() { let i = 0; return {next: () => ({done: i++ === 5, value: i})} }}; for (const x of it) {}`, 5 + 6 + 1},
		{"for await", `for await (const x of [1, 2, 3]) {}`, 3},
		{"while", `{ let i = 0; while (i < 30) i++ }`, 30},
		{"do-while", `{ let i = 0; do i++; while (i < 30) }`, 30},
		{"labelled continue", `outer: for (let i = 0; i < 10; i++) { for (let j = 0; j < 10; j++) { if (j === 5) continue outer } }`, 10 + 10*6},
		{"recursion into loops", `function r(d) { if (d === 0) return; for (let i = 0; i < 3; i++) r(d - 1) } r(3)`, (1 + 3 + 9 + 27) + (3 + 9 + 27)},
		{"forEach", `Array.from({length: 40}).forEach(() => {})`, 40},
		{"map, filter, reduce", `[1, 2, 3, 4].map((x) => x * 2).filter((x) => x > 2).reduce((a, b) => a + b, 0)`, 4 + 4 + 3},
		{"a native function as callback is free", `[1, 2, 3].map(Math.abs); [1, 2].forEach(console.log)`, 0},
		{"promise chain", `let p = Promise.resolve(); for (let i = 0; i < 10; i++) p = p.then(() => {}); await p`, 10 + 10},
		// Each call, and each resumption after its await.
		{"async callbacks", `await Promise.all([1, 2, 3].map(async (x) => { await null; return x }))`, 3 + 3},
		{"a getter is called by the engine", `const o = {get v() { return 1 }}; for (let i = 0; i < 10; i++) o.v`, 10 + 10},
		// new B() runs B's and A's constructors and their field initializers.
		{"constructors and field initializers", `class A { x = 1 } class B extends A { y = 2 } for (let i = 0; i < 10; i++) new B()`, 10 + 10*4},
		{"direct calls", `function f() { return 1 } f(); f(); new (class { constructor() {} })()`, 3},
		{"the step's own code is free", `await null; await null; 1 + 1`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.ops > 0 {
				ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: c.ops - 1})
				_, err := ex.Run(context.Background(), c.code)
				e := wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
				if want := fmt.Sprintf("Max operations exceeded (%d)", c.ops-1); e.Message != want || e.Details["maxOperations"] != c.ops-1 {
					t.Errorf("error %q %v, want %q", e.Message, e.Details, want)
				}
				wantState(t, ex, airlock.StateReady)
			}
			ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: max(c.ops, 1)})
			mustRun(t, ex, c.code)
		})
	}
}

// A sort comparator is called by the engine: every call counts, however
// many the sort makes.
func TestExecutor_OpBudgetSortComparator(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	out := mustRun(t, ex, `let calls = 0; Array.from({length: 200}, (_, i) => (i * 7919) % 200).sort((a, b) => { calls++; return a - b }); return calls`)
	calls := int(out.Output.(float64))
	// Array.from's mapping function is called 200 times too.
	code := `Array.from({length: 200}, (_, i) => (i * 7919) % 200).sort((a, b) => a - b)`
	ex = newExecutor(t, airlock.ExecutorOptions{MaxOperations: calls + 200})
	mustRun(t, ex, code)
	ex = newExecutor(t, airlock.ExecutorOptions{MaxOperations: calls + 199})
	_, err := ex.Run(context.Background(), code)
	wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
}

// No try, catch, finally, promise handler or async function swallows a
// spent budget, and no tool runs after it: the step fails with
// ERR_MAX_OPS_EXCEEDED, the executor is READY, and the next step has its
// budget again.
func TestExecutor_OpBudgetUncatchable(t *testing.T) {
	var ran atomic.Int32
	ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 100})
	if err := ex.SendTools(context.Background(), map[string]any{"sideEffect": func() { ran.Add(1) }}); err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{
		`try { for (;;) {} } catch (e) { sideEffect(); return "caught" }`,
		`try { for (;;) {} } finally { sideEffect(); return "finally" }`,
		`for (;;) { try { for (;;) {} } catch { sideEffect() } }`,
		`function f() { try { while (true) {} } catch { sideEffect() } } try { f() } catch { sideEffect() }`,
		`[1].forEach(() => { try { for (;;) {} } catch { sideEffect() } })`,
		`try { Array.from({length: 1000}).forEach(() => {}) } catch { sideEffect() }`,
		`await new Promise(() => { for (;;) {} }).catch(() => sideEffect())`,
		`await new Promise(() => { for (;;) {} }).then(null, () => sideEffect()).finally(() => sideEffect())`,
		`async function spin() { for (;;) {} } try { await spin() } catch { sideEffect() }`,
		`async function spin() { for (;;) {} } const p = spin(); sideEffect(); await p`,
		`async function spin() { await null; for (;;) {} } spin().catch(() => sideEffect()); await null; await null; sideEffect()`,
		`queueMicrotask(() => { for (;;) {} }); await null; sideEffect()`,
		`const it = {[Symbol.iterator]() { return {next: () => ({done: false}), return() { sideEffect(); return {} }} }}; for (const x of it) {}`,
		`function* g() { try { for (;;) yield 1 } finally { sideEffect() } } for (const x of g()) {}`,
		`const o = {get v() { for (;;) {} }}; try { o.v } catch { sideEffect() }`,
		`try { [3, 1, 2].sort(() => { for (;;) {} }) } catch { sideEffect() }`,
		`try { JSON.parse("[1]", () => { for (;;) {} }) } catch { sideEffect() }`,
		`try { "aaa".replace(/a/g, () => { for (;;) {} }) } catch { sideEffect() }`,
		`for (;;) {} final_answer("no")`,
		`try { for (;;) {} } catch { final_answer("swallowed") }`,
	} {
		_, err := ex.Run(context.Background(), code)
		if codeOf(err) != "ERR_MAX_OPS_EXCEEDED" {
			t.Errorf("%s: %v, want ERR_MAX_OPS_EXCEEDED", code, err)
		}
		if n := ran.Swap(0); n != 0 {
			t.Errorf("%s: a tool ran %d times after the budget was spent", code, n)
		}
		wantState(t, ex, airlock.StateReady)
		if out := mustRun(t, ex, `{ let i = 0; while (i < 100) i++; return i }`); out.Output != 100.0 {
			t.Fatalf("after %s: %v", code, out.Output)
		}
	}
}

// The budget used to count loop bodies and calls from native code only,
// which left routes to unbounded work that no loop statement or callback
// marks: a queueMicrotask callback (the kernel called it from its own,
// unbudgeted code), an async function resumed after an await and a
// generator resumed by next() (re-entered without a charge, so an async
// function that calls itself after an await is an endless loop with no
// loop in it), and direct calls (tree recursion is exponential work under
// any budget). However small the budget, each ran until the Timeout, the
// memory limit or a stack overflow (fib(30) to its end). Now every entry
// into a function of the steps, a call by any route or a resumption,
// spends one operation. Each route's unbounded program ends with
// ERR_MAX_OPS_EXCEEDED under a small budget, long before a generous
// Timeout; its bounded version spends what the rule says: with that budget
// it passes, with one less it fails.
func TestExecutor_OpBudgetEveryRoute(t *testing.T) {
	for _, c := range []struct {
		name      string
		unbounded string
		bounded   string
		ops       int // what bounded spends
	}{
		{
			name:      "async self-call after await",
			unbounded: `async function f() { await null; f() } f(); await new Promise(() => {})`,
			// 11 calls, each resumed after its await null, and 10 resumed
			// after awaiting the next.
			bounded: `async function f(n) { await null; if (n > 0) await f(n - 1) } await f(10)`,
			ops:     11 + 11 + 10,
		},
		{
			name:      "async generator resumed by its awaits",
			unbounded: `async function* g() { await null; yield* g() } for await (const x of g()) {}`,
			// for await's 3 bodies; the generator's start, a resumption
			// after each value's await and after each next().
			bounded: `async function* g() { yield 1; yield 2; yield 3 } for await (const x of g()) {}`,
			ops:     3 + 1 + 3*2 + 1,
		},
		{
			name:      "generator resumed by Array.from",
			unbounded: `function* g(n) { yield n; yield* g(n + 1) } Array.from(g(0))`,
			// The generator's start and 4 resumptions (3 values, then done).
			bounded: `function* g() { yield 1; yield 2; yield 3 } Array.from(g())`,
			ops:     1 + 4,
		},
		{
			name:      "generator resumed by spread",
			unbounded: `function* g(n) { yield n; yield* g(n + 1) } [...g(0)]`,
			bounded:   `function* g() { yield 1; yield 2; yield 3 } [...g()]`,
			ops:       1 + 4,
		},
		{
			name:      "queueMicrotask chain",
			unbounded: `function tick() { queueMicrotask(tick) } tick(); await new Promise(() => {})`,
			// The promise's executor, then 20 ticks.
			bounded: `await new Promise((resolve) => { let n = 0; function tick() { if (++n === 20) resolve(); else queueMicrotask(tick) } tick() })`,
			ops:     1 + 20,
		},
		{
			name:      "tree recursion",
			unbounded: `function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } fib(30)`,
			// fib(10) makes 177 calls.
			bounded: `function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } fib(10)`,
			ops:     177,
		},
		{
			name:      "tree recursion through constructors",
			unbounded: `class T { constructor(d) { if (d > 0) { new T(d - 1); new T(d - 1) } } } new T(30)`,
			bounded:   `class T { constructor(d) { if (d > 0) { new T(d - 1); new T(d - 1) } } } new T(5)`,
			ops:       63,
		},
		{
			name:      "tree recursion through getters",
			unbounded: `const o = {d: 30, get t() { if (this.d > 0) { this.d--; this.t; this.t; this.d++ } return 0 }}; o.t`,
			bounded:   `const o = {d: 5, get t() { if (this.d > 0) { this.d--; this.t; this.t; this.d++ } return 0 }}; o.t`,
			ops:       63,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 1000, Timeout: time.Minute})
			_, err := ex.Run(context.Background(), c.unbounded)
			wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
			wantState(t, ex, airlock.StateReady)

			ex = newExecutor(t, airlock.ExecutorOptions{MaxOperations: c.ops - 1})
			_, err = ex.Run(context.Background(), c.bounded)
			wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
			ex = newExecutor(t, airlock.ExecutorOptions{MaxOperations: c.ops})
			mustRun(t, ex, c.bounded)
		})
	}
}

// A budget spent in the last promise reaction of a step, one whose
// promise nothing awaits, left the event loop with nothing to run and
// nothing pending: the step was reported as a deadlock
// (ERR_RUNTIME_EXCEPTION, "waits for a promise that nothing can settle"),
// not as the spent budget it was.
func TestExecutor_OpBudgetSpentInLastReaction(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 100})
	for _, code := range []string{
		`await new Promise(() => { Promise.resolve().then(() => { for (;;) {} }) })`,
		`await new Promise(() => { queueMicrotask(() => { for (;;) {} }) })`,
		`await new Promise(() => { Promise.reject(new Error("x")).catch(() => { for (;;) {} }) })`,
		`async function f() { await null; for (;;) {} } await new Promise(() => { f() })`,
		`await new Promise(() => { readTool("x").then(() => { for (;;) {} }) })`,
	} {
		_, err := ex.Run(context.Background(), code)
		if codeOf(err) != "ERR_MAX_OPS_EXCEEDED" {
			t.Errorf("%s: %v, want ERR_MAX_OPS_EXCEEDED", code, err)
		}
		wantState(t, ex, airlock.StateReady)
	}
	// Spent in no reaction, the same shape is still a deadlock.
	_, err := ex.Run(context.Background(), `await new Promise(() => { Promise.resolve().then(() => { for (let i = 0; i < 10; i++) {} }) })`)
	e := wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	if !strings.Contains(e.Message, "nothing can settle") {
		t.Errorf("message %q, want a deadlock", e.Message)
	}
}

// The default budget of 50,000 operations still runs ordinary agent code:
// a loop of 10,000 iterations that calls a small function (20,000
// operations), a pipeline of callbacks over 5,000 records with helpers,
// and a class instantiated a few thousand times.
func TestExecutor_OpBudgetDefaultRunsOrdinaryCode(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for _, code := range []string{
		`function sq(x) { return x * x } let s = 0; for (let i = 0; i < 10000; i++) s += sq(i); s`,
		`const rows = Array.from({length: 5000}, (_, i) => ({id: i, name: "n" + i, price: i % 97}))
		 const fmt = (r) => r.name + ":" + r.price
		 rows.filter((r) => r.price > 10).map(fmt).join(",").length`,
		`class P { constructor(x, y) { this.x = x; this.y = y } len() { return Math.hypot(this.x, this.y) } }
		 let t = 0; for (let i = 0; i < 5000; i++) t += new P(i, i).len(); t`,
		`const text = await readTool("a.txt"); const words = text.repeat(2000).split(":"); const counts = {}
		 for (const w of words) counts[w] = (counts[w] || 0) + 1; Object.keys(counts).length`,
	} {
		mustRun(t, ex, code)
	}
}

// A step stopped by its loop budget whose program then runs a long native
// call is still stopped for good by its time, and Cleanup returns.
func TestExecutor_TimeoutAfterBudgetStopsNativeCall(t *testing.T) {
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{MaxOperations: 1, Timeout: 100 * time.Millisecond, MemoryLimitBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = ex.Run(ctx, `let i = 0; for (;;) { if (i++ > 0) { const a = []; a.length = 2**32 - 1; try { JSON.stringify(a) } catch {} } }`)
	var xe *airlock.ExecutorError
	if !errors.As(err, &xe) || !strings.Contains(string(xe.Code), "MAX_OPS") && !strings.Contains(string(xe.Code), "TIMEOUT") {
		t.Fatalf("%v", err)
	}
	done := make(chan error, 1)
	go func() { done <- ex.Cleanup(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Cleanup still waits for the step's native call 5 s later (it ran 18-24 s before it was stopped for good)")
	}
}

package airlock_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/airlockrun/airlock"
)

// The operation budget is counted by the engine: one operation for every
// entry into a loop body and for every call of one of the session's
// functions from native code. A step with a budget of n operations that
// spends exactly n passes; the same step with n-1 fails.
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
		// The generator's own loop counts as well: 2 per value.
		{"for-of over a generator", `function* g(n) { for (let i = 0; i < n; i++) yield i } for (const x of g(20)) {}`, 40},
		{"for-of over a generator without loops", `function* g3() { yield 1; yield 2; yield 3 } for (const x of g3()) {}`, 3},
		// A hand-written iterator's next() is called by the engine: 1 more per value.
		{"for-of over an iterator", `const it = {[Symbol.iterator]() { let i = 0; return {next: () => ({done: i++ === 5, value: i})} }}; for (const x of it) {}`, 5 + 6 + 1},
		{"for await", `for await (const x of [1, 2, 3]) {}`, 3},
		{"while", `{ let i = 0; while (i < 30) i++ }`, 30},
		{"do-while", `{ let i = 0; do i++; while (i < 30) }`, 30},
		{"labelled continue", `outer: for (let i = 0; i < 10; i++) { for (let j = 0; j < 10; j++) { if (j === 5) continue outer } }`, 10 + 10*6},
		{"recursion into loops", `function r(d) { if (d === 0) return; for (let i = 0; i < 3; i++) r(d - 1) } r(3)`, 3 + 9 + 27},
		{"forEach", `Array.from({length: 40}).forEach(() => {})`, 40},
		{"map, filter, reduce", `[1, 2, 3, 4].map((x) => x * 2).filter((x) => x > 2).reduce((a, b) => a + b, 0)`, 4 + 4 + 3},
		{"a native function as callback is free", `[1, 2, 3].map(Math.abs); [1, 2].forEach(console.log)`, 0},
		{"promise chain", `let p = Promise.resolve(); for (let i = 0; i < 10; i++) p = p.then(() => {}); await p`, 10 + 10},
		{"async callbacks", `await Promise.all([1, 2, 3].map(async (x) => { await null; return x }))`, 3},
		{"a getter is called by the engine", `const o = {get v() { return 1 }}; for (let i = 0; i < 10; i++) o.v`, 10 + 10},
		{"constructors and field initializers are free", `class A { x = 1 } class B extends A { y = 2 } for (let i = 0; i < 10; i++) new B()`, 10},
		{"a function of the step called directly is free", `function f() { return 1 } f(); f(); new (class { constructor() {} })()`, 0},
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

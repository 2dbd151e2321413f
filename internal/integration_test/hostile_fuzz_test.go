package integration_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// hostileFragments are pieces of programs from each class of attack the
// sandbox must answer: escapes to eval and Function, prototype pollution,
// traps on values crossing the boundary, host errors, loader probing,
// loops, microtask floods, native builtins, regexps, BigInt, deep
// recursion, memory bombs, forged errors, leaks of the host. The fuzzer
// glues them into whole programs.
var hostileFragments = []string{
	`try { (function(){}).constructor("return this")() } catch {}`,
	`try { (async function(){}).constructor("return 1") } catch {}`,
	`try { eval("1") } catch {}`,
	`Object.prototype.polluted = 1; Array.prototype.push = () => 0;`,
	`try { report(new Proxy({}, { get() { throw 1 } })) } catch {}`,
	`try { report({ get x() { return report } }) } catch {}`,
	`try { boom() } catch {}`,
	`try { await import("fs") } catch {}`,
	`try { await import("node:child_process") } catch {}`,
	`try { await import("https://example.com/x.js") } catch {}`,
	`for (let i = 0; i < 1e5; i++) {}`,
	`for (;;) {}`,
	`(function f() { queueMicrotask(f) })();`,
	`try { Array.prototype.includes.call({ length: 2 ** 32 }, 1) } catch {}`,
	`try { /(a+)+$/.test("a".repeat(30) + "b") } catch {}`,
	`try { (2n ** 100000n).toString() } catch {}`,
	`try { (function r() { r() })() } catch {}`,
	`try { const a = []; for (;;) a.push(new Array(1e4).fill(1)) } catch {}`,
	`throw new InternalError("out of memory");`,
	`try { throw Object.assign(new Error("x"), { stack: "at /etc/passwd" }) } catch {}`,
	`let o = {}; for (let i = 0; i < 1e4; i++) o = { o };  report(o);`,
	`const c = {}; c.c = c; report(c);`,
	`await new Promise(() => {});`,
	`await new Promise((r) => r(1)).then(() => { for (;;) {} }).catch(() => {});`,
	`try { structuredClone(function(){}) } catch {}`,
	`globalThis.report = null;`,
	`export default { toJSON() { return "x" }, s: Symbol("s") };`,
	`export default typeof process + typeof require + typeof Deno;`,
	`let f = () => 0; for (let i = 0; i < 1e5; i++) f = f.bind(null);`,
	`export default await boom2();`,
}

var fuzzWorkers = airlock.NewRuntime(airlock.RuntimeConfig{Workers: 2, MaxDuration: 2 * time.Second, MemoryLimitBytes: 32 << 20})

// FuzzHostilePrograms runs programs made of hostile fragments in worker
// processes: a crash of the engine (a dead worker), a run that outlives its
// bound, or a result that shows the host (a path, the environment) is a
// finding. The input's bytes choose the fragments.
//
//	go test -run '^$' -fuzz FuzzHostilePrograms -fuzztime 2m .
func FuzzHostilePrograms(f *testing.F) {
	for _, seed := range [][]byte{{0}, {3, 4, 5}, {11}, {13, 16}, {17, 20, 21}, {22}, {23, 1}, {28, 29}} {
		f.Add(seed)
	}
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	f.Fuzz(func(t *testing.T, pick []byte) {
		if len(pick) > 6 {
			pick = pick[:6]
		}
		var b strings.Builder
		exported := false
		for _, p := range pick {
			frag := hostileFragments[int(p)%len(hostileFragments)]
			if strings.HasPrefix(frag, "export default") {
				if exported {
					continue
				}
				exported = true
			}
			b.WriteString(frag + "\n")
		}
		src := b.String()
		start := time.Now()
		ex, err := fuzzWorkers.Run(context.Background(), src, airlock.Options{
			Language: airlock.JavaScript,
			Globals: map[string]any{
				"boom":  func() { panic("host panic with a secret") },
				"boom2": airlock.Async(func() (int, error) { return 0, os.ErrPermission }),
			},
			Report: func(any) {},
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		res := ex.Wait()
		if d := time.Since(start); d > 2*time.Second+3*time.Second {
			t.Fatalf("the run took %v:\n%s", d, src)
		}
		if res.Error != nil && strings.Contains(res.Error.Message, "worker process") {
			t.Fatalf("the engine crashed its worker (%s):\n%s", res.Error.Message, src)
		}
		b2, _ := json.Marshal(res)
		out := string(b2)
		for _, secret := range []string{"host panic with a secret", wd, home + "/"} {
			if secret != "" && secret != "/" && strings.Contains(out, secret) {
				t.Fatalf("the result shows %q:\n%s\n%s", secret, src, out)
			}
		}
	})
}

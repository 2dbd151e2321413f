package integration_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// Native string searches that never poll: the engine searches naively, at
// the product of the two lengths, so includes of a 4 KiB needle in a
// 16 MiB haystack (and replace, replaceAll, lastIndexOf, split) ran on for
// hours after a terminate. Every loop of the engine now checks for a
// stop (internal/qjs/stopcheck), so Terminate ends each class; the
// linear ones (normalize, localeCompare) stop at the next checkpoint. (A
// RegExp whose source is a long literal is not guarded: search, match and
// matchAll of a long string make one; see RATIONALE.md "Native loops".) Each program is terminated once it has started its search
// (it calls started()), and must settle terminated.
func TestHostile_NativeStringSearches(t *testing.T) {
	if raceEnabled {
		t.Skip("the guards are JavaScript, with no Go concurrency to check; searches of MBs take minutes under -race")
	}
	pre := `const s = "a".repeat(1 << 24), p = "a".repeat(1 << 12) + "b", q = "b" + "a".repeat(1 << 12), h = "a".repeat(1 << 14) + "b"; started();`
	for _, src := range []string{
		`for (;;) s.indexOf(p)`,
		`for (;;) s.includes(p)`,
		`for (;;) s.lastIndexOf(q)`,
		`for (;;) s.split(p)`,
		`for (;;) s.replace(p, "")`,
		`for (;;) s.replaceAll(p, "")`,
		`for (;;) s.indexOf(h)`,
		`for (;;) s.lastIndexOf("b" + h)`,
		`for (;;) String.prototype.includes.call({ toString() { return s } }, { toString() { return p } })`,
		`for (;;) s.normalize("NFD")`,
		`const t = s + "x"; for (;;) s.localeCompare(t)`,
	} {
		started := make(chan struct{}, 1)
		ex, err := testRuntime.Run(t.Context(), pre+src, airlock.Options{Language: airlock.JavaScript,
			Globals: map[string]any{"started": func() { started <- struct{}{} }}})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-started:
		case <-ex.Done():
			t.Fatalf("%s: %v", src, ex.Wait().Error)
		}
		ex.Terminate("test")
		select {
		case <-ex.Done():
		case <-time.After(time.Minute):
			t.Fatalf("%s: still running a minute after Terminate", src)
		}
		wantStatus(t, ex.Wait(), airlock.StatusTerminated)
	}
}

// Long string searches give the specification's results, on long and
// short inputs alike (they once ran through guards that searched in
// windows; the engine's own searches now check for a stop in their loops).
func TestHostile_LongStringSearchesStillWork(t *testing.T) {
	if raceEnabled {
		t.Skip("searches of several MB take minutes under the race detector")
	}
	got := evalJS(t, `
		const n = "ab".repeat(1 << 20) + "needle" + "cd".repeat(1 << 20) + "needle!";
		const p = "x".repeat(3000) + "y", hay = "x".repeat(5e4) + p + "z" + p;
		const w = "w".repeat(1 << 12), big = "q".repeat(1 << 22) + w + "q" + w;
		export default [
			n.indexOf("needle"), n.indexOf("needle", 2 ** 21 + 1), n.lastIndexOf("needle"), n.lastIndexOf("needle", 2 ** 22),
			n.includes("needle!"), n.includes("needle?"), n.split("needle").map(x => x.length),
			n.replace("needle", "[$&|$$|$'".slice(0, 5) + "]").length, n.replaceAll("needle", (m, i) => i).length,
			hay.indexOf(p), hay.lastIndexOf(p), hay.indexOf(p, 5e4 + 1), hay.split(p).length, hay.replaceAll(p, "").length,
			big.indexOf(w), big.lastIndexOf(w), big.includes(w, big.length - w.length), big.split(w, 2).length,
			big.replace(w, "$`+"`"+`").length, "abc".indexOf("c"), "".split("a"), "a,b".split(",", 0),
			String.prototype.indexOf.call(12345, 3), "aXbX".replaceAll("X", "$$"),
		]`)
	// Worked out by hand: "needle" at 2^21 and 2^22 + 6; hay's p at 50,000
	// and 53,002; big's w at 2^22 and 2^22 + 4,097.
	want := `[2097152,4194310,4194310,2097152,true,false,[2097152,2097152,1],4194321,4194319,` +
		`50000,53002,53002,3,50001,4194304,4198401,true,2,8392705,2,[""],[],2,"a$b$"]`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

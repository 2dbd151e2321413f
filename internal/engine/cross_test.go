package engine

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A run's result that holds a value which cannot cross is a thrown
// DataCloneError that says where it was; the engine reported a function or
// a symbol as undefined (the result encoded as a value to show), and so
// the run succeeded without it. A step's value is still shown.
func TestResultCannotCross(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`export default { items: [1, 2, () => 3] }`, "result.items[2]: a function cannot leave the sandbox"},
		{`export default Symbol("x")`, "result: a symbol cannot leave the sandbox"},
		{`export default { a: new WeakMap() }`, "result.a: a WeakMap cannot leave the sandbox"},
		{`export default () => [new Map([[1, new Set([Promise.resolve()])]])]`,
			"result[0]<Map value 0><Set member 0>: a Promise cannot leave the sandbox"},
		// Keys: not ASCII identifiers are quoted; a long one is cut at a
		// character's start, within 64 bytes.
		{`export default { "ключ": { "\u0000\t": Symbol() } }`, `result["ключ"]["\u0000\t"]: a symbol cannot leave the sandbox`},
		{`export default { ["é".repeat(100)]: Symbol() }`, `result["` + strings.Repeat("é", 32) + `…"]: a symbol cannot leave the sandbox`},
		{`export default { "a\ud800b": Symbol() }`, `result["a\ud800b"]: a symbol cannot leave the sandbox`},
		{`export default { ["x".repeat(100)]: Symbol() }`, "result." + strings.Repeat("x", 64) + "…: a symbol cannot leave the sandbox"},
		{`const a = [0, 1]; a[7] = 2; a.k = [Symbol()]; export default a`, "result.k[0]: a symbol cannot leave the sandbox"},
	} {
		v, err := New()
		if err != nil {
			t.Fatal(err)
		}
		o := v.Run(mainJob(v, c.src))
		v.Close()
		if o.Kind != Thrown || o.Name != "DataCloneError" || o.Message != c.want {
			t.Errorf("%s: %v %s: %q, want DataCloneError: %q", c.src, o.Kind, o.Name, o.Message, c.want)
		}
	}
	s := newSession(t)
	j := &Job{Stop: make(chan struct{}), LogBytes: func(int, []byte) {}}
	if o, _ := s.Step(j, `return { f() {}, n: 1, s: Symbol() }`, -1); o.Kind != OK || !o.Encoded {
		t.Fatalf("a step's value: %+v", o)
	}
}

// The path is cut at 512 bytes, its head and tail kept.
func TestResultCannotCross_PathBounded(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	o := v.Run(mainJob(v, `let x = [Symbol()]; for (let i = 0; i < 9000; i++) x = { ["k" + i]: x }; export default x`))
	if o.Kind != Thrown || len(o.Message) > 600 || !strings.HasPrefix(o.Message, "result.k8999.k8998") ||
		!strings.HasSuffix(o.Message, ".k1.k0[0]: a symbol cannot leave the sandbox") || !strings.Contains(o.Message, "…") {
		t.Fatalf("%v %q (%d bytes)", o.Kind, o.Message, len(o.Message))
	}
}

// BenchmarkResult1MB: a run whose result is a ~1 MB object (5,000 rows),
// encoded in the sandbox, against the same run returning only the
// length (build-only); the run's median, on the wall and in the
// process's CPU time (steadier on a shared machine), is the metric, so
// that the encoder's cost is result − build-only. What a value that cannot cross
// needs (its path) is computed on failure only: this is the success path.
func BenchmarkResult1MB(b *testing.B) {
	const rows = `const rows = []; for (let i = 0; i < 5000; i++) rows.push({ id: i, name: "user-" + i,
		email: "user" + i + "@example.com", tags: ["a", "b", "c"], score: i * 1.5, active: i % 2 === 0,
		bio: "lorem ipsum ".repeat(12) });`
	for _, c := range []struct{ name, src string }{
		{"result", rows + `export default rows`},
		{"build-only", rows + `export default rows.length`},
	} {
		b.Run(c.name, func(b *testing.B) {
			var run []time.Duration
			var cpu []int64
			for b.Loop() {
				v, err := New()
				if err != nil {
					b.Fatal(err)
				}
				j := mainJob(v, c.src)
				t0, c0 := time.Now(), cpuNanos()
				o := v.Run(j)
				run, cpu = append(run, time.Since(t0)), append(cpu, cpuNanos()-c0)
				v.Close()
				if o.Kind != OK {
					b.Fatal(o)
				}
			}
			slices.Sort(run)
			slices.Sort(cpu)
			b.ReportMetric(float64(run[len(run)/2].Nanoseconds())/1e6, "run-p50-ms")
			b.ReportMetric(float64(cpu[len(cpu)/2])/1e6, "cpu-p50-ms")
		})
	}
}

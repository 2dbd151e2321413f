package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/quickjs"

	"github.com/airlockrun/airlock"
)

// BenchmarkPeer measures the cases the speed targets name against the
// peer, an SES compartment under Node (ses/peer.js: lockdown() once, a new
// Compartment with the host function as an endowment), and the raw floor,
// modernc.org/quickjs's RegisterFunc, in one run:
//
//	sync-int     100,000 calls of host(i) from a JS loop, summed: func(x int) int
//	sync-string  the same with host("hello").length: func(s string) string
//	sync-id      host(i).length, a name made of an id: func(id int) string
//	sync-object  host({ n: i, tag: 'x' }).n: a struct with json tags in and out
//	async        10,000 awaits in sequence of a host function returning a
//	             promise: airlock.Async(func(x int) int); SES: Promise.resolve(x);
//	             the raw floor has no asynchronous host function and awaits its
//	             synchronous one (the await's own cost)
//	async-tick   SES only: the promise settled on Node's next event-loop turn,
//	             as a host function doing I/O settles
//	cold         a fresh sandbox (compartment) evaluating a hello, one after
//	             another: airlock.Runtime.Run→Wait with its sandboxes prepared
//	             (each run has a fresh one), the raw floor's NewVM+Eval+Close
//
// Each iteration of a sub-benchmark is one program (for cold, 1,000
// sandboxes); ns/call is the median over the iterations of the wall time
// per call, cpu-ns/call that of the process's CPU time (the garbage
// collector and the preparation of sandboxes in the background included).
// The airlock sub-benchmark of a case also reports its ratio to the others
// measured before it in the same process (÷ses, ÷floor).
//
// The SES peer needs Node (20 or later) and the ses package, installed by
// `npm ci` in bench/ses; without them the ses sub-benchmarks skip, saying so.
//
//	cd bench/ses && npm ci && cd .. && go test -run '^$' -bench Peer -benchtime 5x
func BenchmarkPeer(b *testing.B) {
	const n, awaits = 100000, 10000
	type point struct {
		N   int    `json:"n"`
		Tag string `json:"tag"`
	}
	inFunc := func(body string) string { return "(() => { let s = 0; " + body + " return s; })()" }
	inAsync := func(body string) string { return "(async () => { let s = 0; " + body + " return s; })()" }
	syncInt := fmt.Sprintf("for (let i = 0; i < %d; i++) s += host(i);", n)
	syncString := fmt.Sprintf(`for (let i = 0; i < %d; i++) s += host("hello").length;`, n)
	syncID := fmt.Sprintf("for (let i = 0; i < %d; i++) s += host(i).length;", n)
	name := func(id int) string { return "user-" + strconv.Itoa(id) }
	idLengths := 0.0
	for i := range n {
		idLengths += float64(len(name(i)))
	}
	syncObject := fmt.Sprintf("for (let i = 0; i < %d; i++) s += host({ n: i, tag: 'x' }).n;", n)
	async := fmt.Sprintf("for (let i = 0; i < %d; i++) s += await host(i);", awaits)
	sum := func(k int) float64 { return float64(k) * float64(k-1) / 2 }

	for _, c := range []struct {
		name  string
		calls int
		// floor registers the raw engine's host function; nil: no floor.
		floor func(vm *quickjs.VM) error
		src   string // the program of the floor and of airlock
		fn    any    // airlock's host function
		want  float64
	}{
		{"sync-int", n, func(vm *quickjs.VM) error {
			return vm.RegisterFunc("host", func(x int) int { return x }, false)
		}, inFunc(syncInt), func(x int) int { return x }, sum(n)},
		{"sync-string", n, func(vm *quickjs.VM) error {
			return vm.RegisterFunc("host", func(s string) string { return s }, false)
		}, inFunc(syncString), func(s string) string { return s }, 5 * n},
		{"sync-id", n, func(vm *quickjs.VM) error {
			return vm.RegisterFunc("host", name, false)
		}, inFunc(syncID), name, idLengths},
		{"sync-object", n, func(vm *quickjs.VM) error {
			// The floor's RegisterFunc takes an object as its JSON text
			// (quickjs.Object), decoded as its documentation shows.
			return vm.RegisterFunc("host", func(o *quickjs.Object) (p point) {
				if err := o.Into(&p); err != nil {
					panic(err)
				}
				return p
			}, false)
		}, inFunc(syncObject), func(p point) point { return p }, sum(n)},
		{"async", awaits, func(vm *quickjs.VM) error {
			return vm.RegisterFunc("host", func(x int) int { return x }, false)
		}, inAsync(async), airlock.Async(func(x int) int { return x }), sum(awaits)},
		{"async-tick", awaits, nil, "", nil, 0},
		{"cold", 1, nil, "", nil, 0},
	} {
		b.Run(c.name+"/ses", func(b *testing.B) { runPeer(b, c.name) })
		if c.name == "cold" {
			b.Run("cold/raw-floor", func(b *testing.B) {
				perRound(b, 1, func() {
					vm, err := quickjs.NewVM()
					if err != nil {
						b.Fatal(err)
					}
					if v, err := vm.Eval(`"hello, world"`, quickjs.EvalGlobal); err != nil || v != "hello, world" {
						b.Fatal(v, err)
					}
					vm.Close()
				})
			})
			b.Run("cold/airlock", func(b *testing.B) {
				rt := airlock.NewRuntime(airlock.RuntimeConfig{})
				defer rt.Close()
				perRound(b, 1, func() {
					ex, err := rt.Run(context.Background(), helloJS, airlock.Options{Language: airlock.JavaScript})
					if err != nil {
						b.Fatal(err)
					}
					if res := ex.Wait(); res.Result != "hello, world" {
						b.Fatal(res.Status, res.Error)
					}
				})
			})
			continue
		}
		if c.floor == nil {
			continue
		}
		b.Run(c.name+"/raw-floor", func(b *testing.B) {
			perRound(b, c.calls, func() {
				vm, err := quickjs.NewVM()
				if err != nil {
					b.Fatal(err)
				}
				defer vm.Close()
				if err := c.floor(vm); err != nil {
					b.Fatal(err)
				}
				var v any
				if strings.HasPrefix(c.src, "(async") {
					// The raw engine runs the promise's jobs when asked.
					if _, err = vm.Eval("globalThis.out = undefined; "+c.src+".then((s) => { globalThis.out = s })", quickjs.EvalGlobal); err == nil {
						if _, err = vm.ExecutePendingJobs(); err == nil {
							v, err = vm.Eval("out", quickjs.EvalGlobal)
						}
					}
				} else {
					v, err = vm.Eval(c.src, quickjs.EvalGlobal)
				}
				if err != nil || toFloat(v) != c.want {
					b.Fatal(v, err)
				}
			})
		})
		b.Run(c.name+"/airlock", func(b *testing.B) {
			rt := airlock.NewRuntime(airlock.RuntimeConfig{})
			defer rt.Close()
			src := "export default await " + c.src
			perRound(b, c.calls, func() {
				ex, err := rt.Run(context.Background(), src, airlock.Options{Language: airlock.JavaScript,
					Globals: map[string]any{"host": c.fn}})
				if err != nil {
					b.Fatal(err)
				}
				if res := ex.Wait(); res.Status != airlock.StatusSuccess || res.Result != c.want {
					b.Fatal(res.Status, res.Result, res.Error)
				}
			})
		})
	}
}

// peerFigures holds the ns/call of the sub-benchmarks of BenchmarkPeer run
// so far in this process, by name ("sync-int/ses"), for the ratios.
var peerFigures sync.Map

// report records b's median figures and, for airlock, its ratios to those
// of the same case measured before it.
func report(b *testing.B, ns, cpu []float64) {
	wall, c := median(ns), median(cpu)
	b.ReportMetric(wall, "ns/call")
	b.ReportMetric(c, "cpu-ns/call")
	name := b.Name()[strings.Index(b.Name(), "/")+1:]
	peerFigures.Store(name, wall)
	kase, impl, _ := strings.Cut(name, "/")
	if impl != "airlock" {
		return
	}
	for _, other := range []string{"ses", "raw-floor"} {
		if v, ok := peerFigures.Load(kase + "/" + other); ok {
			unit := "÷ses"
			if other == "raw-floor" {
				unit = "÷floor"
			}
			b.ReportMetric(wall/v.(float64), unit)
		}
	}
}

// perRound runs round b.N times, each making calls calls, and reports the
// medians per call.
func perRound(b *testing.B, calls int, round func()) {
	if calls == 1 {
		calls = 1000 // cold: round is one sandbox, timed by the thousand
		one := round
		round = func() {
			for range 1000 {
				one()
			}
		}
	}
	round() // a warm-up, unreported, as peer.js has
	var ns, cpu []float64
	b.ResetTimer()
	for range b.N {
		start, c := time.Now(), cpuNanos()
		round()
		ns = append(ns, float64(time.Since(start).Nanoseconds())/float64(calls))
		cpu = append(cpu, float64(cpuNanos()-c)/float64(calls))
	}
	b.StopTimer()
	report(b, ns, cpu)
}

// runPeer runs ses/peer.js for the case with b.N rounds, or skips b with
// what is missing.
func runPeer(b *testing.B, kase string) {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("the SES peer needs Node (20 or later) on the PATH: apt-get install nodejs")
	}
	if _, err := os.Stat(filepath.Join("ses", "node_modules", "ses", "package.json")); err != nil {
		b.Skip("the SES peer needs the ses package: run `npm ci` in bench/ses")
	}
	cmd := exec.Command(node, "peer.js", kase, fmt.Sprint(b.N))
	cmd.Dir = "ses"
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			b.Fatalf("node peer.js %s: %v\n%s", kase, err, stderr.String())
		}
		b.Fatal(err)
	}
	var r struct {
		NS  []float64 `json:"ns"`
		CPU []float64 `json:"cpu"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.NS) == 0 {
		b.Fatalf("node peer.js %s: %q: %v", kase, out, err)
	}
	report(b, r.NS, r.CPU)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return -1
}

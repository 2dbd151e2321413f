package airlock_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/childtest"
)

// One run costs the host a bounded amount of memory and goroutines,
// whatever the program does: about its heap limit, plus about three times
// MaxValueBytes for the values that cross (decoded), plus a little for
// each pending asynchronous call. The attacks run in a child process of
// the test binary, so that a host that runs out of memory is a failed
// test: a 96 MB string result, a string passed two thousand times to a
// function that keeps it (synchronous and asynchronous), 300,000 pending
// asynchronous calls (which started 299,942 goroutines and took 1.7 GB
// before), a result of 1.6 million numbers (decoded, each costs Go memory
// many times its text), and a console flood. The
// peak RSS (VmHWM) is measured against the RSS before each attack.
//
// Under -race the inputs are smaller (a 128 MiB heap, a 4 MiB budget,
// 66,000 calls, a 256 KiB string passed 100 times) and the bound three
// times larger: the detector's shadow memory multiplies the host's memory,
// and the engine runs about 40 times slower.
func TestHostMemory_Bounded(t *testing.T) {
	if testing.Short() {
		t.Skip("the child process allocates hundreds of MB")
	}
	if !childtest.InChild(t) {
		return
	}
	memLimit, budget, calls, str, times := int64(256<<20), 64<<20, 300000, 1<<20, 2000
	if raceEnabled {
		memLimit, budget, calls, str, times = 128<<20, 4<<20, 66000, 1<<18, 100
	}
	rt := airlock.NewRuntime(airlock.RuntimeConfig{MemoryLimitBytes: memLimit, MaxValueBytes: budget, Prepared: -1, MaxDuration: 10 * time.Minute})
	defer rt.Close()
	// The bound: the heap, three times the budget, and 256 MiB for the
	// engine's own overhead, Go's garbage and the race detector's slack.
	bound := memLimit + 3*int64(budget) + 256<<20
	if raceEnabled {
		bound *= 3
	}
	var kept [][]byte
	var keptMu sync.Mutex
	keep := func(s string) {
		keptMu.Lock()
		kept = append(kept, []byte(s))
		keptMu.Unlock()
	}
	attack := func(name, src string, globals map[string]any, check func(*airlock.Result)) {
		keptMu.Lock()
		kept = nil
		keptMu.Unlock()
		runtime.GC()
		before := vmStatus(t, "VmRSS")
		resetHWM()
		ex, err := rt.Run(context.Background(), src, airlock.Options{Language: airlock.JavaScript, Globals: globals})
		if err != nil {
			t.Fatal(err)
		}
		res := ex.Wait()
		peak := vmStatus(t, "VmHWM")
		t.Logf("%s (%v): %s; RSS %d MiB before, peak %d MiB (growth %d MiB, bound %d MiB)", name, res.Duration.Round(time.Millisecond), res.Status, before>>20, peak>>20, (peak-before)>>20, bound>>20)
		if peak-before > bound {
			t.Errorf("%s: the host's RSS grew by %d MiB, over %d MiB", name, (peak-before)>>20, bound>>20)
		}
		check(res)
	}
	notSuccess := func(res *airlock.Result) {
		if res.Status == airlock.StatusSuccess {
			t.Errorf("succeeded")
		}
	}
	size := strconv.Itoa(budget * 3 / 2)
	attack("string result", `export default "x".repeat(`+size+`)`, nil, notSuccess)
	refusedSome := func(res *airlock.Result) {
		wantStatus(t, res, airlock.StatusSuccess)
		if n, _ := res.Result.(float64); n == 0 {
			t.Errorf("no call was refused")
		}
	}
	strLoop := `const s = "x".repeat(` + strconv.Itoa(str) + `); let n = 0; const p = []; for (let i = 0; i < ` + strconv.Itoa(times) + `; i++) `
	attack("sync string arguments", strLoop+`try { keep(s) } catch { n++ }
		export default n`, map[string]any{"keep": keep}, refusedSome)
	attack("async string arguments", strLoop+`try { p.push(keep(s).catch(() => n++)) } catch { n++ }
		await Promise.all(p); export default n`, map[string]any{"keep": airlock.Async(keep)}, refusedSome)

	release := make(chan struct{})
	before := runtime.NumGoroutine()
	during := 0
	attack("pending asynchronous calls", `const p = []; let refused = 0;
		for (let i = 0; i < `+strconv.Itoa(calls)+`; i++) try { p.push(wait()) } catch (e) { refused++ }
		allStarted(); await Promise.all(p); export default [p.length, refused]`, map[string]any{
		"wait": airlock.Async(func() { <-release }),
		"allStarted": func() {
			during = runtime.NumGoroutine()
			close(release)
		},
	}, func(res *airlock.Result) {
		wantStatus(t, res, airlock.StatusSuccess)
		got, _ := res.Result.([]any)
		if len(got) != 2 || got[0] != 65536.0 || got[1] != float64(calls-65536) {
			t.Errorf("pending calls and refused calls: %v, want [65536 %d]", got, calls-65536)
		}
	})
	t.Logf("goroutines: %d before, %d with the calls pending", before, during)
	if during > before+64+32 {
		t.Errorf("%d goroutines with the calls pending, %d before: more than 64 calls run at once", during, before)
	}
	attack("numbers within the budget", `export default new Array(`+strconv.Itoa(budget/40)+`).fill(0)`, nil, func(res *airlock.Result) {
		wantStatus(t, res, airlock.StatusSuccess)
	})
	attack("console flood", `const s = "x".repeat(`+strconv.Itoa(str)+`); for (;;) console.log(s)`, nil, notSuccess)
}

// vmStatus reads a field of /proc/self/status, in bytes.
func vmStatus(t *testing.T, field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Skipf("no %s in /proc/self/status", field)
	return 0
}

// resetHWM resets the peak RSS (VmHWM) to the current RSS.
func resetHWM() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

package integration_test

import (
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

var soak = flag.Bool("soak", false, "run the memory soak test (a few minutes)")

// rssKiB is this process's resident memory.
func rssKiB(t testing.TB) int {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	n, _ := strconv.Atoi(strings.Fields(string(b))[1])
	return n * os.Getpagesize() / 1024
}

// TestSoak_MemoryBaseline runs rounds of mixed runs, hostile and normal,
// and checks that resident memory comes back to its level after the first
// rounds: what runs leave behind would show as growth.
//
//	go test -run TestSoak -soak -v ./internal/integration_test
func TestSoak_MemoryBaseline(t *testing.T) {
	if !*soak {
		t.Skip("run with -soak")
	}
	programs := []string{
		`export default 1 + 1`,
		`for (;;) {}`,
		`const a = []; for (;;) a.push(new Array(1e4).fill(1))`,
		`null.boom`,
		`export default await Promise.all([tick(), tick()])`,
		`let f = () => 0; for (let i = 0; i < 1e4; i++) f = f.bind(null); export default 1`,
		`const c = {}; c.c = c; report(c)`,
	}
	tick := airlock.Async(func() int { return 1 })
	const rounds = 30
	samples := make([]int, rounds)
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		for i := 0; i < 48; i++ {
			src := programs[i%len(programs)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				ex, err := testRuntime.Run(context.Background(), src, airlock.Options{MemoryLimitBytes: 16 << 20,
					Globals: map[string]any{"tick": tick}, Report: func(any) {}})
				if err != nil {
					t.Error(err)
					return
				}
				timer := time.AfterFunc(200*time.Millisecond, func() { ex.Terminate("soak") })
				ex.Wait()
				timer.Stop()
			}()
		}
		wg.Wait()
		runtime.GC()
		debug.FreeOSMemory()
		samples[round] = rssKiB(t)
		t.Logf("round %d: %d KiB resident", round, samples[round])
	}
	avg := func(s []int) int {
		sum := 0
		for _, v := range s {
			sum += v
		}
		return sum / len(s)
	}
	early, late := avg(samples[2:7]), avg(samples[rounds-5:])
	if late > early+32<<10 {
		t.Fatalf("resident memory grew from %d KiB to %d KiB over %d runs", early, late, (rounds-7)*48)
	}
}

package wasmvm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const startEnv = "AIRLOCK_WASMVM_START_CACHE"

// TestStartChild is a CLI's first run, in a process of its own: NewEngine,
// NewSnapshot, a sandbox and a hello eval, with the cache directory of
// startEnv. It prints the times; BenchmarkProcessStart runs it.
func TestStartChild(t *testing.T) {
	dir := os.Getenv(startEnv)
	if dir == "" {
		t.Skip("run by BenchmarkProcessStart in a child process")
	}
	ctx := context.Background()
	t0 := time.Now()
	e, err := NewEngine(ctx, &EngineOptions{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	sn, err := e.NewSnapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t2 := time.Now()
	s, err := sn.NewSandbox(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, "1+2"); got != "3" {
		t.Fatalf("1+2 = %s", got)
	}
	t3 := time.Now()
	fmt.Printf("start: %d %d %d %t\n", t1.Sub(t0).Microseconds(), t2.Sub(t1).Microseconds(), t3.Sub(t2).Microseconds(), sn.cached)
}

// BenchmarkProcessStart: a fresh process's engine, snapshot and first
// hello eval, with a warm compilation cache, with the snapshot's image
// cached too (snapcache) and without it (built, then written: the
// snapshot directory is removed before each run). Metrics in ms, mean over
// the ops; exec-ms is the child's whole wall time, test binary start-up
// included.
func BenchmarkProcessStart(b *testing.B) {
	dir := b.TempDir()
	child := func(b *testing.B) (engine, snap, first int, cached bool, wall time.Duration) {
		t := time.Now()
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartChild$")
		cmd.Env = append(os.Environ(), startEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		wall = time.Since(t)
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		_, line, ok := strings.Cut(string(out), "start: ")
		if !ok {
			b.Fatalf("child:\n%s", out)
		}
		f := strings.Fields(line)
		engine, _ = strconv.Atoi(f[0])
		snap, _ = strconv.Atoi(f[1])
		first, _ = strconv.Atoi(f[2])
		return engine, snap, first, f[3] == "true", wall
	}
	child(b) // warm both caches
	for _, c := range []struct {
		name   string
		cached bool
	}{{"snapcache", true}, {"built", false}, {"snapcache", true}, {"built", false}} {
		b.Run(c.name, func(b *testing.B) {
			var en, sn, fi int
			var wall time.Duration
			for b.Loop() {
				if !c.cached {
					b.StopTimer()
					os.RemoveAll(filepath.Join(dir, "snapshots"))
					b.StartTimer()
				}
				e, s, f, cached, w := child(b)
				if cached != c.cached {
					b.Fatalf("snapshot cached %t, want %t", cached, c.cached)
				}
				en, sn, fi, wall = en+e, sn+s, fi+f, wall+w
			}
			n := float64(b.N) * 1000
			b.ReportMetric(float64(en)/n, "engine-ms")
			b.ReportMetric(float64(sn)/n, "snapshot-ms")
			b.ReportMetric(float64(fi)/n, "first-eval-ms")
			b.ReportMetric(float64(en+sn+fi)/n, "total-ms")
			b.ReportMetric(float64(wall.Microseconds())/n, "exec-ms")
		})
	}
}

package integration_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// children are this process's child processes.
func children(t *testing.T) []int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, pid)
		}
	}
	return out
}

// A worker that dies takes only its runs with it: they settle with an
// error, and the next run gets a fresh worker.
func TestWorkers_DeadWorker(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Workers: 1})
	defer rt.Close()
	before := map[int]bool{}
	for _, p := range children(t) {
		before[p] = true
	}
	ex, err := rt.Run(context.Background(), `for (;;) {}`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var worker int
	for deadline := time.Now().Add(5 * time.Second); worker == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, p := range children(t) {
			if !before[p] {
				worker = p
			}
		}
	}
	if worker == 0 {
		t.Fatal("no worker process")
	}
	syscall.Kill(worker, syscall.SIGKILL)
	res := ex.Wait()
	if res.Status != airlock.StatusError || !strings.Contains(res.Error.Message, "worker process") {
		t.Fatalf("%s %v", res.Status, res.Error)
	}
	ex, _ = rt.Run(context.Background(), `export default "alive"`, airlock.Options{})
	if res := ex.Wait(); res.Result != "alive" {
		t.Fatalf("%s %v", res.Status, res.Error)
	}
}

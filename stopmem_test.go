package airlock_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/childtest"
)

// A run that allocates a 1 GiB ArrayBuffer and is terminated while the
// buffer is being zeroed settles terminated, and the zeroing stops there:
// after Terminate the host's peak RSS grows by far less than the buffer. The zeroing was
// one memory.fill that wazero runs to its end (seconds of first-touch page
// faults after Terminate); it now goes in chunks with a stop check between
// them (RATIONALE.md, "Stops during large copies and fills"). The run is
// terminated once the RSS has grown 32 MiB past its level at started()
// (under way, by events), in a child process of the test binary so that a
// failure does not bloat this one.
func TestHostile_StopDuringLargeZeroing(t *testing.T) {
	if testing.Short() {
		t.Skip("the child process may touch a GiB of memory")
	}
	if !childtest.InChild(t) {
		return
	}
	const buffer = 1 << 30
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: -1, MaxDuration: 10 * time.Minute})
	defer rt.Close()
	// An attempt tells only if this goroutine saw the zeroing under way
	// well before its end (RSS at Terminate under half the buffer past
	// started()); a loaded machine may wake it too late, and the attempt
	// is made again.
	for attempt := 1; ; attempt++ {
		before, atTerminate, peak, res := zeroAndTerminate(t, rt, buffer)
		t.Logf("attempt %d: %s; RSS %d MiB at started(), %d MiB at Terminate, peak %d MiB (a %d MiB buffer)", attempt, res.Status, before>>20, atTerminate>>20, peak>>20, buffer>>20)
		if res.Status != airlock.StatusTerminated {
			t.Fatalf("status %s (%v), want terminated", res.Status, res.Error)
		}
		if atTerminate-before > buffer/2 {
			if attempt == 5 {
				t.Fatal("five attempts saw the zeroing under way only past half the buffer")
			}
			continue
		}
		if peak-atTerminate > buffer/4 {
			t.Errorf("the host's RSS grew by %d MiB after Terminate: the zeroing of the %d MiB buffer did not stop", (peak-atTerminate)>>20, buffer>>20)
		}
		return
	}
}

// zeroAndTerminate runs a program that allocates an ArrayBuffer of n
// bytes and terminates it once the host's RSS has grown 32 MiB past its
// level at started() (the zeroing under way). It returns the RSS at
// started() and at Terminate, the peak RSS after it, and the result.
func zeroAndTerminate(t *testing.T, rt *airlock.Runtime, n int) (before, atTerminate, peak int64, res *airlock.Result) {
	t.Helper()
	started := make(chan int64, 1)
	runtime.GC()
	ex, err := rt.Run(context.Background(), fmt.Sprintf(`started(); new ArrayBuffer(%d); export default 0`, n), airlock.Options{
		Language: airlock.JavaScript, MemoryLimitBytes: int64(n) + 256<<20,
		Globals: map[string]any{"started": func() { resetHWM(); started <- vmStatus(t, "VmRSS") }},
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case before = <-started:
	case <-ex.Done():
		t.Fatalf("ended before started(): %v", ex.Wait().Error)
	}
	for {
		atTerminate = vmStatus(t, "VmRSS")
		if atTerminate-before >= 32<<20 { // the zeroing is under way
			break
		}
		select {
		case <-ex.Done():
			t.Fatalf("ended before the RSS grew: %s %v", ex.Wait().Status, ex.Wait().Error)
		case <-time.After(time.Millisecond):
		}
	}
	ex.Terminate("test")
	res = ex.Wait()
	return before, atTerminate, vmStatus(t, "VmHWM"), res
}

package early

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// childEnv makes the test binary print its GC percent, as its init left
// it, and exit; with childHeapEnv, its resident memory in KiB instead.
const (
	childEnv     = "AIRLOCK_EARLY_TEST_CHILD"
	childHeapEnv = "AIRLOCK_EARLY_TEST_HEAP"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if os.Getenv(childHeapEnv) != "" {
			b, _ := os.ReadFile("/proc/self/status")
			_, rss, _ := strings.Cut(string(b), "VmRSS:")
			rss, _, _ = strings.Cut(rss, "kB")
			fmt.Print(strings.TrimSpace(rss))
		} else {
			fmt.Print(debug.SetGCPercent(100))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// `airlock run` starts with heapPrefault bytes more memory resident than
// other commands: the populated heap, where the allocations of its start
// land (on a kernel with MADV_POPULATE_WRITE).
func TestHeapPopulated(t *testing.T) {
	if syscall.Madvise(make([]byte, 1<<20), madvPopulateWrite) != nil {
		t.Skip("the kernel has no MADV_POPULATE_WRITE")
	}
	rss := func(arg string) uint64 {
		cmd := exec.Command(os.Args[0], arg)
		cmd.Env = append(os.Environ(), childEnv+"=1", childHeapEnv+"=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		kib, err := strconv.ParseUint(string(out), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", arg, out)
		}
		return kib << 10
	}
	run, version := rss("run"), rss("version")
	if run < version+heapPrefault*9/10 {
		t.Errorf("resident: run %d bytes, version %d; want run to hold %d more", run, version, heapPrefault)
	}
}

// `airlock run` collects garbage at 400% (no collection during a hello
// run's start), unless GOGC says otherwise; other commands keep Go's
// default.
func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		arg, gogc, want string
	}{{"run", "", "400"}, {"version", "", "100"}, {"repl", "", "100"}, {"run", "150", "150"}, {"run", "off", "-1"}} {
		cmd := exec.Command(os.Args[0], c.arg)
		cmd.Env = append(os.Environ(), childEnv+"=1", "GOGC="+c.gogc) // the last GOGC counts
		out, err := cmd.Output()
		if err != nil || string(out) != c.want {
			t.Errorf("%s with GOGC=%q: %q, %v; want %s", c.arg, c.gogc, out, err, c.want)
		}
	}
}

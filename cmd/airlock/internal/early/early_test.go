package early

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"testing"
)

// childEnv makes the test binary print its GC percent, as its init left
// it, and exit; with childHeapEnv, what ownMemory reads instead.
const (
	childEnv     = "AIRLOCK_EARLY_TEST_CHILD"
	childHeapEnv = "AIRLOCK_EARLY_TEST_HEAP"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if what := os.Getenv(childHeapEnv); what != "" {
			fmt.Print(ownMemory(what))
		} else {
			fmt.Print(debug.SetGCPercent(100))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
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

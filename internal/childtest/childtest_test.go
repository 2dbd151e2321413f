package childtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/childtest"
)

// outer selects, in a run of this test binary that TestInChild starts, the
// test that uses InChild; the normal run skips it.
const outer = "AIRLOCK_CHILDTEST_OUTER"

// TestUser is a test that runs its body in a child process: its body
// writes a file (pass) or dies of a stack overflow (crash).
func TestUser(t *testing.T) {
	mode, dir, _ := strings.Cut(os.Getenv(outer), ":")
	if mode == "" {
		t.Skip("run by TestInChild")
	}
	if !childtest.InChild(t) {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "ran"), []byte(os.Getenv("AIRLOCK_NESTING_CHILD")), 0o600); err != nil {
		t.Fatal(err)
	}
	if mode == "crash" {
		debug.SetMaxStack(8 << 20) // a quick overflow
		var f func(int) int
		f = func(n int) int { return f(n+1) + 1 }
		f(0)
	}
}

// The body runs in the child; the parent passes when the child does, and
// fails, with the child's output, when the child dies.
func TestInChild(t *testing.T) {
	for _, mode := range []string{"pass", "crash"} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestUser$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), outer+"="+mode+":"+dir)
		out, err := cmd.CombinedOutput()
		ran, _ := os.ReadFile(filepath.Join(dir, "ran"))
		if string(ran) != "TestUser" {
			t.Errorf("%s: the body did not run in the child (%q):\n%s", mode, ran, out)
		}
		switch mode {
		case "pass":
			if err != nil || !strings.Contains(string(out), "--- PASS: TestUser") {
				t.Errorf("pass: %v\n%s", err, out)
			}
		case "crash":
			if err == nil || !strings.Contains(string(out), "the child process failed") || !strings.Contains(string(out), "stack overflow") {
				t.Errorf("crash: %v\n%s", err, out)
			}
		}
	}
}

// Package childtest runs a test in a child process of the test binary, so
// that a crash the test provokes in the host (Go's "fatal error: stack
// overflow", which no recover catches) is a failed test and not a dead
// test run.
package childtest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// env names the test a child process runs the body of.
const env = "AIRLOCK_NESTING_CHILD"

// InChild runs the calling top-level test in a child process of the test
// binary and reports false in the parent, which fails if the child does
// (a fatal stack overflow included) and logs again what the child's test
// logged; in the child it reports true, and the test goes on there:
//
//	if !childtest.InChild(t) {
//		return
//	}
func InChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(env) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		s := string(out)
		if len(s) > 8000 {
			s = s[:4000] + "\n...\n" + s[len(s)-4000:]
		}
		t.Fatalf("the child process failed (%v):\n%s", err, s)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if logged.MatchString(l) {
			t.Log(strings.TrimSpace(l))
		}
	}
	return false
}

// logged matches a line of -test.v output that a test logged: its file and
// line, then the text.
var logged = regexp.MustCompile(`^\s+\S+\.go:\d+: `)

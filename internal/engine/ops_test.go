package engine

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/airlockrun/airlock/internal/intl"
	"github.com/airlockrun/airlock/internal/qjs"
)

// The kernel's operations were bare numbers in three languages: host(0..6,
// …) in the kernel's JavaScript, kinds 9 and 10 in the shim, and case 0,
// 1 / 2 / 3 / 6 / 5 in the dispatcher. They are declared once, in the
// shim's kernel.h, and mirrored in ops.go (the JavaScript names none: it
// calls the shim's hooks); this test reads the header and fails when a
// number, or a name, differs, and when the kernel's JavaScript or Intl's
// passes an operation's number itself.
func TestKernelOps(t *testing.T) {
	h, err := os.ReadFile("../qjs/shim/kernel.h")
	if err != nil {
		t.Fatal(err)
	}
	goSide := map[string]int{
		"OP_CALL":          opCall,
		"OP_CALL_ENCODED":  opCallEncoded,
		"OP_DONE":          opDone,
		"OP_FAILED":        opFailed,
		"OP_OUT_OF_MEMORY": opOutOfMemory,
		"OP_LOG":           opLog,
		"OP_INTL":          opIntl,
		"PHASE_LINK":       phaseLink,
		"PHASE_RUN":        phaseRun,
		"PHASE_EXPORT":     phaseExport,
		"MAX_ERROR_TEXT":   MaxErrorText,
		"MAX_FRAME_TEXT":   MaxFrameText,
	}
	decl := regexp.MustCompile(`(?m)^\s*(?:#define\s+)?((?:OP|PHASE|MAX)_[A-Z_]+)(?:\s*=\s*|\s+)(\d+)\b`)
	seen := map[string]bool{}
	for _, m := range decl.FindAllStringSubmatch(string(h), -1) {
		name := m[1]
		n, _ := strconv.Atoi(m[2])
		seen[name] = true
		want, ok := goSide[name]
		if !ok {
			t.Errorf("kernel.h declares %s = %d, which ops.go does not mirror", name, n)
			continue
		}
		if want != n {
			t.Errorf("%s is %d in kernel.h, %d in Go", name, n, want)
		}
	}
	for name := range goSide {
		if !seen[name] {
			t.Errorf("%s is mirrored in Go but not declared in kernel.h", name)
		}
	}
	// The JavaScript passes no operation's number: a call of a host
	// function with a number first (host(2, …), hostFn(20, …)).
	literal := regexp.MustCompile(`\b(host|hostFn|__airlock_host)\(\s*\d`)
	for _, js := range []struct{ name, src string }{{"kernel.js", qjs.Kernel}, {"intl.js", intl.Source}} {
		if m := literal.FindString(js.src); m != "" {
			t.Errorf("%s passes an operation's number: %q", js.name, m)
		}
	}
}

package engine

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/airlockrun/airlock/internal/intl"
	"github.com/airlockrun/airlock/internal/wasmvm"
)

// The kernel's operations were bare numbers in three languages: host(0..6,
// …) in the kernel's JavaScript, kinds 9 and 10 in the shim, and case 0,
// 1 / 2 / 3 / 6 / 5 in the dispatcher; its entries were method names the
// host passed as text. Both are declared once, in the shim's kernel.h, and
// mirrored in ops.go, with the host functions' modes of shim.h; this test
// reads the headers and fails when a number, or a name, differs, and when
// Intl's JavaScript passes an operation's number itself. The kernel has
// no JavaScript of its own.
func TestKernelOps(t *testing.T) {
	h, err := os.ReadFile("../qjs/shim/kernel.h")
	if err != nil {
		t.Fatal(err)
	}
	shim, err := os.ReadFile("../qjs/shim/shim.h")
	if err != nil {
		t.Fatal(err)
	}
	goSide := map[string]int{
		"OP_CALL":               opCall,
		"OP_CALL_ENCODED":       opCallEncoded,
		"OP_DONE":               opDone,
		"OP_FAILED":             opFailed,
		"OP_OUT_OF_MEMORY":      opOutOfMemory,
		"OP_LOG":                opLog,
		"OP_INTL":               opIntl,
		"PHASE_LINK":            phaseLink,
		"PHASE_RUN":             phaseRun,
		"PHASE_EXPORT":          phaseExport,
		"ENTRY_INIT":            int(entryInit),
		"ENTRY_RUN":             int(entryRun),
		"ENTRY_SETTLE":          int(entrySettle),
		"ENTRY_RESET":           int(entryReset),
		"ENTRY_STEP":            int(entryStep),
		"ENTRY_DEFINE_TOOL":     int(entryDefineTool),
		"ENTRY_DEFINE_VALUE":    int(entryDefineValue),
		"ENTRY_INSTALL_CONSOLE": int(entryInstallConsole),
		"RUN_ENTRY":             runEntry,
		"RUN_FN":                runFn,
		"RUN_FLAGS":             runFlags,
		"RUN_ARGS":              runArgs,
		"RUN_IMPORTS":           runImports,
		"RUN_CONSOLE":           runConsole,
		"RUN_REPORT":            runReport,
		"RUN_GLOBALS_FROM":      runGlobalsFrom,
		"RUN_OPTIONAL":          runOptional,
		"RUN_WITH_GLOBALS":      runWithGlobals,
		"MAX_ERROR_TEXT":        MaxErrorText,
		"MAX_FRAME_TEXT":        MaxFrameText,
	}
	decl := regexp.MustCompile(`(?m)^\s*(?:#define\s+)?((?:OP|PHASE|MAX|ENTRY|RUN)_[A-Z_]+)(?:\s*=\s*|\s+)(\d+)\b`)
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
	// The kernel's entries come after the shim's own, which wasmvm
	// mirrors (TestABI): from ENTRY_SLOTS on, taking slots.
	for _, e := range []wasmvm.Entry{entryInit, entryRun, entrySettle, entryReset, entryStep, entryDefineTool,
		entryDefineValue, entryInstallConsole} {
		if e < wasmvm.EntrySlots {
			t.Errorf("entry %d is below ENTRY_SLOTS (%d): it would not take slots", e, wasmvm.EntrySlots)
		}
	}
	// The host functions' modes, declared in shim.h (codec.c's tag 21
	// carries them too).
	modes := map[string]int{"FN_PLAIN": fnPlain, "FN_JSON": fnJSON, "FN_SHOWN": fnShown}
	for _, m := range regexp.MustCompile(`(?m)^\s*(FN_[A-Z]+)\s*=\s*(\d+)`).FindAllStringSubmatch(string(shim), -1) {
		n, _ := strconv.Atoi(m[2])
		if want, ok := modes[m[1]]; !ok || want != n {
			t.Errorf("shim.h declares %s = %d; Go has %d (mirrored: %v)", m[1], n, want, ok)
		}
		delete(modes, m[1])
	}
	for name := range modes {
		t.Errorf("%s is mirrored in Go but not declared in shim.h", name)
	}
	// Intl's JavaScript passes no operation's number: a call of a host
	// function with a number first (hostFn(20, …)).
	literal := regexp.MustCompile(`\b(host|hostFn|__airlock_host)\(\s*\d`)
	if m := literal.FindString(intl.Source); m != "" {
		t.Errorf("intl.js passes an operation's number: %q", m)
	}
}

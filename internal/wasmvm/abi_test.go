package wasmvm

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestABI: the shim's numbers that this package mirrors (abi.go, entry.go)
// are declared once, in internal/qjs/shim/shim.h: the functions qjs_entry
// calls, the slot tags, the result statuses and the control block's
// offsets, which the header asserts at compile time. This test reads the
// header and fails when a name or a number differs.
func TestABI(t *testing.T) {
	h, err := os.ReadFile("../qjs/shim/shim.h")
	if err != nil {
		t.Fatal(err)
	}
	goSide := map[string]uint64{
		"ENTRY_EVAL": uint64(entryEval), "ENTRY_RUN_JOBS": uint64(entryRunJobs), "ENTRY_MALLOC": uint64(entryMalloc),
		"ENTRY_FREE": uint64(entryFree), "ENTRY_DEF_HOST_FUNC": uint64(entryDefHostFunc),
		"ENTRY_KERNEL_CALL": uint64(entryKernelCall), "ENTRY_KERNEL_STEP": uint64(entryKernelStep),
		"ENTRY_DROP_JOBS": uint64(entryDropJobs), "ENTRY_INSPECT_STEP": uint64(entryInspectStep),
		"ENTRY_KERNEL_RUN": uint64(entryKernelRun), "ENTRY_PREPARE_RUN": uint64(entryPrepareRun),
		"TAG_UNDEFINED": tagUndefined, "TAG_NULL": tagNull, "TAG_FALSE": tagFalse, "TAG_TRUE": tagTrue,
		"TAG_NUMBER": tagNumber, "TAG_STRING": tagString, "TAG_JSON": tagJSON, "TAG_ERROR": tagError,
		"TAG_REPLY_WIRE": tagReplyWire, "TAG_REPLY_ERROR": tagReplyError, "TAG_REPLY_ASYNC": tagReplyAsync,
		"TAG_BYTES": tagBytes, "KERNEL_FN": kernelFn,
		"RES_OK": resOK, "RES_EXCEPTION": resException, "RES_PENDING": resPending,
		"ctl.oom": ctlOOM, "ctl.heap_limit": ctlHeapLimit, "ctl.heap_used": ctlHeapUsed,
		"ctl.res_status": ctlResStatus, "ctl.res": ctlRes, "ctl.ret": ctlRet, "ctl.soft": ctlSoft,
		"ctl.heap_peak": ctlHeapPeak, "ctl.ops": ctlOps, "slot": slotSize,
	}
	seen := map[string]bool{}
	check := func(name, num string) {
		n, err := strconv.ParseUint(num, 0, 64)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		seen[name] = true
		if want, ok := goSide[name]; !ok {
			t.Errorf("shim.h declares %s = %d, which wasmvm does not mirror", name, n)
		} else if want != n {
			t.Errorf("%s is %d in shim.h, %d in Go", name, n, want)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*((?:ENTRY|TAG|RES)_[A-Z_]+)\s*=\s*(\d+)`).FindAllStringSubmatch(string(h), -1) {
		check(m[1], m[2])
	}
	for _, m := range regexp.MustCompile(`(?m)^#define (KERNEL_FN) (0x[0-9a-f]+|\d+)`).FindAllStringSubmatch(string(h), -1) {
		check(m[1], m[2])
	}
	for _, m := range regexp.MustCompile(`offsetof\(struct ctl, (\w+)\) == (\d+), "(ctl\.\w+)"`).FindAllStringSubmatch(string(h), -1) {
		check(m[3], m[2])
	}
	for _, m := range regexp.MustCompile(`sizeof\(struct slot\) == (\d+), "(slot)"`).FindAllStringSubmatch(string(h), -1) {
		check(m[2], m[1])
	}
	for name := range goSide {
		if !seen[name] {
			t.Errorf("%s is mirrored in Go but not declared in shim.h", name)
		}
	}
}

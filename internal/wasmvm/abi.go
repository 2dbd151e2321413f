package wasmvm

// The shim's interface (internal/qjs/shim/shim.h): offsets in its control block
// qjs_ctl, value slot tags and result statuses. shim.h asserts the offsets
// at compile time.
const (
	ctlStop      = 0
	ctlOOM       = 4
	ctlHeapLimit = 8
	ctlHeapUsed  = 12
	ctlResStatus = 16
	ctlRes       = 24
	ctlRet       = 40
	ctlSoft      = 56
	ctlHeapPeak  = 60
	ctlOps       = 64 // int64: what is left of a step's operation budget

	slotSize = 16
)

const (
	tagUndefined = 0
	tagNull      = 1
	tagFalse     = 2
	tagTrue      = 3
	tagNumber    = 4
	tagString    = 5
	tagJSON      = 6
	tagError     = 7 // host -> guest only
	tagAsync     = 8 // host -> guest only
	tagBytes     = 9
)

// hostFn is the number of the host function the shim calls on its own
// behalf (shim.h's HOST_FN): SetHostFunc's.
const hostFn = 0x7fffffff

const (
	resOK        = 0
	resException = 1
	resPending   = 2
)

// stackSize is the module's shadow stack (build.sh STACK); QuickJS's own
// stack check stops JavaScript recursion stackReserve bytes before its end,
// leaving room for the C frames of native functions.
const (
	stackSize    = 1 << 20
	stackReserve = 192 << 10
)

package hostcall

import (
	"sync/atomic"

	"github.com/airlockrun/airlock/internal/clip"
	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
)

// A Budget is what is left of a run's or a step's budget for values
// crossing between the sandbox and the host. It is spent twice in every
// host call, from the VM's goroutine and from those of asynchronous calls:
// an atomic, not a mutex, which was 6% of a synchronous call.
type Budget struct {
	left atomic.Int64
}

// Init sets the budget to n bytes.
func (b *Budget) Init(n int) { b.left.Store(int64(n)) }

// Spend takes n bytes from the budget, or reports false and takes none
// when fewer are left.
func (b *Budget) Spend(n int) bool {
	for {
		left := b.left.Load()
		if int64(n) > left {
			return false
		}
		if b.left.CompareAndSwap(left, left-int64(n)) {
			return true
		}
	}
}

// EntryCost is what a console call or a report costs the budget besides
// its value.
const EntryCost = 16

// SpendEntry pays for a console call or a report whose value is encoded:
// EntryCost and the encoding's cost (codec.BinaryCost).
func (b *Budget) SpendEntry(encoded []byte) bool {
	return b.Spend(EntryCost + codec.BinaryCost(encoded))
}

// Take takes up to n bytes from the budget, as many as are left, and
// returns how many it took.
func (b *Budget) Take(n int) int {
	for {
		left := b.left.Load()
		k := min(int64(n), max(left, 0))
		if b.left.CompareAndSwap(left, left-k) {
			return int(k)
		}
	}
}

// Value decodes the value a program settled with (out.Kind is engine.OK),
// paid for from the budget; limit is the decoder's budget
// (codec.DecodeBinary).
func (b *Budget) Value(out engine.Outcome, limit int) (any, error) {
	if !out.Encoded {
		if !b.Spend(rawCost(out.Value)) {
			return nil, codec.ErrTooLarge
		}
		return fromRaw(out.Value), nil
	}
	if !b.Spend(codec.BinaryCost(out.Bytes)) {
		return nil, codec.ErrTooLarge
	}
	return codec.DecodeBinaryBytes(out.Bytes, limit)
}

// PayText charges the bytes of a text that crossed from the sandbox, and
// cuts it to what was left, with internal/clip's marker, if that is less.
func (b *Budget) PayText(s string) string {
	if k := b.Take(len(s)); k < len(s) {
		return clip.Bytes(s, k)
	}
	return s
}

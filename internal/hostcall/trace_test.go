package hostcall

import (
	"context"
	"reflect"
	"testing"

	"github.com/airlockrun/airlock/internal/engine"
)

// With no tracer provider installed, a host call looks at its context's
// span once and then only at a flag: a typed call through the Host
// allocates nothing.
func TestUntracedCallDoesNotAllocate(t *testing.T) {
	h := NewHost(0)
	h.Funcs, h.Ctx, h.Limit, h.Spent = &Funcs{}, context.Background(), 1<<20, context.Canceled
	h.Budget.Init(1 << 40)
	id, err := h.Funcs.Register(reflect.ValueOf(func(x int) int { return x + 1 }))
	if err != nil {
		t.Fatal(err)
	}
	var rep engine.Reply
	in := []engine.Arg{num(41)}
	if a := testing.AllocsPerRun(1000, func() { h.Call(id, in, nil, &rep) }); a != 0 {
		t.Errorf("%v allocations a call", a)
	}
	if rep.Kind != engine.ReplyArg || rep.Arg.Number != 42 {
		t.Fatalf("reply %+v", rep)
	}
	if h.trace.Load() != traceOff {
		t.Error("the host traces with no provider")
	}
}

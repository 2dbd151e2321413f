package hostcall

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
)

// testSink is a LogSink that keeps what it is given.
type testSink struct {
	skip  int // a level it does not want
	calls [][]any
	spent int
}

func (s *testSink) Wants(level int) bool  { return level != s.skip }
func (s *testSink) Log(_ int, args []any) { s.calls = append(s.calls, args) }
func (s *testSink) Spent()                { s.spent++ }

// testHost is a Host of fns, with a budget of budget bytes.
func testHost(t *testing.T, budget int, fns ...any) (*Host, *testSink) {
	t.Helper()
	h := NewHost(0)
	h.Funcs = &Funcs{}
	for _, fn := range fns {
		if _, err := h.Funcs.Register(reflect.ValueOf(fn)); err != nil {
			t.Fatal(err)
		}
	}
	sink := &testSink{skip: -1}
	h.Ctx, h.Limit, h.Spent, h.Logs = context.Background(), 1<<20, errors.New("spent"), sink
	h.Interrupt = func() {}
	ended := make(chan struct{})
	close(ended)
	h.Ended = ended
	h.Budget.Init(budget)
	return h, sink
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := codec.AppendBinary(nil, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// One host side answers every kind of call: a typed one with primitives,
// a reflective one with an encoded list, whose answer is bytes; an
// unknown id, and every call after the stop, with the one set of texts.
func TestHostCalls(t *testing.T) {
	type point struct {
		N   int    `json:"n"`
		Tag string `json:"tag"`
	}
	h, _ := testHost(t, 1<<20, func(x int) int { return x + 1 }, func(p point) point { p.N++; return p })
	var rep engine.Reply
	h.Call(0, []engine.Arg{num(41)}, nil, &rep)
	if rep.Kind != engine.ReplyArg || rep.Arg.Number != 42 {
		t.Fatalf("typed call: %+v", rep)
	}
	rep = engine.Reply{}
	h.Call(1, nil, encode(t, []any{map[string]any{"n": 1.0, "tag": "x"}}), &rep)
	if rep.Kind != engine.ReplyBytes {
		t.Fatalf("struct call: %+v", rep)
	}
	if v, err := codec.DecodeBinaryBytes(rep.Bytes, 1<<20); err != nil || !reflect.DeepEqual(v, map[string]any{"n": 2.0, "tag": "x"}) {
		t.Fatalf("struct call's answer: %#v, %v", v, err)
	}
	rep = engine.Reply{}
	h.Call(7, nil, nil, &rep)
	if rep.Kind != engine.ReplyError || rep.Value != TextUnknown {
		t.Fatalf("unknown function: %+v", rep)
	}
	if !h.Stop(nil) || h.Stop(nil) {
		t.Fatal("Stop did not report the first stop alone")
	}
	for id := range 2 {
		rep = engine.Reply{}
		h.Call(id, []engine.Arg{num(1)}, nil, &rep)
		if rep.Kind != engine.ReplyError || rep.Value != TextStopped {
			t.Fatalf("call %d after the stop: %+v", id, rep)
		}
	}
	if out, msg := h.Answer(0, encode(t, []any{1.0})); out != nil || msg != TextStopped {
		t.Fatalf("a worker's call after the stop: %q, %q", out, msg)
	}
}

// Every crossing is paid from one budget: a call's arguments and answer,
// a console call's arguments (16 bytes more), a worker's call; what the
// budget cannot pay for is refused with the owner's error, or, for the
// console, told to the sink.
func TestHostBudget(t *testing.T) {
	h, sink := testHost(t, 100, func(s string) string { return s })
	var rep engine.Reply
	h.Call(0, []engine.Arg{str("0123456789")}, nil, &rep) // 8 + 10, the answer 8 + 10
	if rep.Kind != engine.ReplyArg || h.Budget.Take(1<<20) != 100-36 {
		t.Fatalf("a string call: %+v", rep)
	}
	list := encode(t, []any{"x"})
	cost := 16 + codec.BinaryCost(list)
	h.Budget.Init(cost + cost/2)
	h.Log(0, list)
	sink.skip = 1
	h.Log(1, list) // a level the sink does not want costs nothing
	if len(sink.calls) != 1 || sink.spent != 0 {
		t.Fatalf("console calls: %v, %d spent", sink.calls, sink.spent)
	}
	h.Log(0, list) // cost/2 left
	if len(sink.calls) != 1 || sink.spent != 1 {
		t.Fatalf("a console call past the budget: %v, %d spent", sink.calls, sink.spent)
	}
	if left := h.Budget.Take(1 << 20); left != cost/2 {
		t.Fatalf("%d left after the console calls, want %d", left, cost/2)
	}
	h.Budget.Init(10)
	rep = engine.Reply{}
	h.Call(0, []engine.Arg{str("x")}, nil, &rep)
	if rep.Kind != engine.ReplyError || rep.Value != "spent" {
		t.Fatalf("a call past the budget: %+v", rep)
	}
	if _, msg := h.Answer(0, encode(t, []any{"x"})); msg != "spent" {
		t.Fatalf("a worker's call past the budget: %q", msg)
	}
}

// A stop that finds a synchronous call under way abandons it: the owner
// is told at once (Abandon), without waiting for the call, and the call's
// answer, when it comes, is discarded.
func TestHostStopAbandonsACall(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{})
	h, _ := testHost(t, 1<<20, func() int { close(entered); <-release; return 1 })
	abandoned := make(chan struct{})
	h.Abandon = func() { close(abandoned) }
	done := make(chan engine.Reply)
	go func() {
		var rep engine.Reply
		h.Call(0, nil, nil, &rep)
		done <- rep
	}()
	<-entered
	h.Stop(nil)
	select {
	case <-abandoned:
	case <-time.After(time.Minute):
		t.Fatal("the stop waited for the call")
	}
	close(release)
	if rep := <-done; rep.Kind != engine.ReplyError || rep.Value != TextStopped {
		t.Fatalf("the abandoned call's answer: %+v", rep)
	}
}

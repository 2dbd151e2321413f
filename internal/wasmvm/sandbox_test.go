package wasmvm

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestSnapshotIsolation: writes, prototype pollution and global state of
// one sandbox never reach the next sandbox from the same image, nor the
// same sandbox once rewound.
func TestSnapshotIsolation(t *testing.T) {
	const dirty = `
		globalThis.leak = 'secret';
		var topLevel = 1;
		Object.prototype.polluted = true;
		Array.prototype.push = function () { return 'hijacked' };
		JSON.stringify = () => '"hijacked"';
		Math.random = () => 4;
		delete globalThis.structuredClone;
		Object.freeze(Object.prototype);
		undefined`
	const probe = `[typeof leak, typeof topLevel, ({}).polluted, [].push(1), JSON.stringify(1), Math.random() === 4, typeof structuredClone, Object.isFrozen(Object.prototype)]`
	const clean = `["undefined","undefined",null,1,"1",false,"function",false]`

	a := newSandbox(t, nil)
	evalJSON(t, a, dirty)
	b := newSandbox(t, nil)
	if got := evalJSON(t, b, probe); got != clean {
		t.Errorf("next sandbox from the image: %s, want %s", got, clean)
	}
	if !a.Reset() {
		t.Fatal("Reset failed")
	}
	if got := evalJSON(t, a, probe); got != clean {
		t.Errorf("rewound sandbox: %s, want %s", got, clean)
	}
	// module state too
	if _, err := a.Eval(context.Background(), "globalThis.m = 1; export let x = 1", "m.js", Module); err != nil {
		t.Fatal(err)
	}
	a.Reset()
	if got := evalJSON(t, a, "typeof m"); got != `"undefined"` {
		t.Errorf("after Reset: typeof m = %s", got)
	}
}

// TestResetAfterGrowth: a sandbox whose memory grew beyond the image cannot
// be rewound (its allocator would see memory the image does not know of).
func TestResetAfterGrowth(t *testing.T) {
	s := newSandbox(t, nil)
	evalJSON(t, s, "globalThis.big = new Uint8Array(32 << 20); big.length")
	if s.Reset() {
		t.Error("Reset of a grown sandbox succeeded")
	}
}

// TestTrap: an engine fault ends that sandbox with a *TrapError and
// leaves the host, the snapshot and a sandbox running at the same time
// intact.
func TestTrap(t *testing.T) {
	other := newSandbox(t, nil)
	started := make(chan struct{})
	release := make(chan struct{})
	if err := other.DefineFunc(context.Background(), "wait", func(context.Context, []Value) (Value, error) {
		close(started)
		<-release
		return Value{Kind: Number, Number: 1}, nil
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var otherRes string
	var otherErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		r, err := other.Eval(context.Background(), "let n = 0; for (let i = 0; i < 1e5; i++) n += i; wait() + n", "other.js", Script)
		otherRes, otherErr = r.Value.Text, err
	}()
	<-started

	s := newSandbox(t, nil)
	s.mod.setSP(0) // the C stack pointer at address 0: the next frame is out of bounds
	_, err := s.Eval(context.Background(), "1+1", "x.js", Script)
	var trap *TrapError
	if !errors.As(err, &trap) {
		t.Fatalf("err = %v, want a TrapError", err)
	}
	if _, err := s.Eval(context.Background(), "1", "x.js", Script); !errors.Is(err, ErrSpent) {
		t.Errorf("after the trap: %v, want ErrSpent", err)
	}
	if s.Reset() {
		if got := evalJSON(t, s, "6*7"); got != "42" {
			t.Errorf("rewound after the trap: %s", got)
		}
	}

	close(release)
	wg.Wait()
	if otherErr != nil || otherRes != "4999950001" {
		t.Errorf("concurrent sandbox: %s %v", otherRes, otherErr)
	}
	if got := evalJSON(t, newSandbox(t, nil), "1+1"); got != "2" {
		t.Errorf("a new sandbox after the trap: %s", got)
	}
}

func TestHostCall(t *testing.T) {
	s := newSandbox(t, nil)
	ctx := context.Background()
	var got []Value
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.DefineFunc(ctx, "record", func(_ context.Context, args []Value) (Value, error) {
		got = append([]Value(nil), args...)
		return Value{Kind: JSON, Text: `{"ok":[1,"two"]}`}, nil
	}))
	must(s.DefineFunc(ctx, "echo", func(_ context.Context, args []Value) (Value, error) {
		if len(args) == 0 {
			return Value{}, nil
		}
		return args[0], nil
	}))
	must(s.DefineFunc(ctx, "fail", func(context.Context, []Value) (Value, error) {
		return Value{}, errors.New("no such file")
	}))
	must(s.DefineFunc(ctx, "boom", func(context.Context, []Value) (Value, error) {
		panic("host bug")
	}))

	if r := evalJSON(t, s, `JSON.stringify(record(undefined, null, true, false, 1.5, 'héllo', {a: [1]}, [2], () => 1))`); r != `"{\"ok\":[1,\"two\"]}"` {
		t.Errorf("record returned %s", r)
	}
	want := []Value{{}, {Kind: Null}, {Kind: Bool, Bool: true}, {Kind: Bool}, {Kind: Number, Number: 1.5},
		{Kind: String, Text: "héllo"}, {Kind: JSON, Text: `{"a":[1]}`}, {Kind: JSON, Text: "[2]"}, {}}
	if len(got) != len(want) {
		t.Fatalf("args %+v", got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("arg %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, c := range []struct{ src, want string }{
		{"echo(42)", "42"},
		{"echo('x'.repeat(100000)).length", "100000"},
		{"echo(null)", "null"},
		{"echo(true)", "true"},
		{"typeof echo()", `"undefined"`},
		{"try { fail() } catch (e) { [e instanceof Error, e.message] }", `[true,"no such file"]`},
		{"echo(...Array(16).fill(7))", "7"},
		{"try { echo(...Array(17).fill(7)) } catch (e) { e instanceof RangeError }", "true"},
	} {
		if r := evalJSON(t, s, c.src); r != c.want {
			t.Errorf("%s = %s, want %s", c.src, r, c.want)
		}
	}
	_, err := s.Eval(ctx, "try { boom() } catch (e) { 'caught' }", "x.js", Script)
	var hp *HostPanicError
	if !errors.As(err, &hp) || !strings.Contains(hp.Error(), "host bug") {
		t.Errorf("panic: %v, want a HostPanicError", err)
	}
}

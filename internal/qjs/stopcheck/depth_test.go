package main

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// recursionModule has two recursive functions, each returning n after n
// recursive calls (n+1 activations): rec calls itself directly and ends
// in an if/else of results; ind calls itself through the table
// (call_indirect), leaves its base case by return and its recursive case
// by a branch out of a block and the body's end. JS_CallInternal is a
// leaf, on no cycle.
func recursionModule() []byte {
	const i32 = 0x7F
	funcType := []byte{0x60, 1, i32, 1, i32} // (i32) -> i32
	tickType := []byte{0x60, 0, 1, i32}      // () -> i32
	body := func(code ...byte) []byte {
		b := append([]byte{0}, code...)
		return append(binary.AppendUvarint(nil, uint64(len(b))), b...)
	}
	rec := body(0x20, 0, 0x45, 0x04, i32, 0x41, 0, 0x05, 0x20, 0, 0x41, 1, 0x6B, 0x10, 1, 0x41, 1, 0x6A, 0x0B, 0x0B)
	ind := body(0x02, 0x40, 0x20, 0, 0x0D, 0, 0x41, 0, 0x0F, 0x0B, 0x20, 0, 0x41, 1, 0x6B, 0x41, 0, 0x11, 0, 0, 0x41, 1, 0x6A, 0x0B)
	leaf := body(0x20, 0, 0x0B)
	names := []string{"rec", "ind", "JS_CallInternal"}
	exports, nameSec := namedFuncs(names)
	return cat([]byte("\x00asm\x01\x00\x00\x00"),
		sect(1, vec(funcType, tickType)...),
		sect(2, vec(cat(str("env"), str("tick"), []byte{0x00, 1}))...),
		sect(3, vec([]byte{0}, []byte{0}, []byte{0})...),
		sect(4, vec([]byte{0x70, 0x00, 1})...),
		sect(6, vec([]byte{i32, 1, 0x41, 0, 0x0B})...),
		exports,
		sect(9, vec(cat([]byte{0, 0x41, 0, 0x0B}, vec([]byte{2})))...),
		sect(10, vec(rec, ind, leaf)...),
		nameSec,
	)
}

// TestDepthChecks: with -depth, every function on a cycle of the call
// graph (direct and indirect calls) counts its activations in qjs_depth,
// which every way out of the function (the body's end, return, a branch
// out of the body) gives back; an activation beyond the bound traps. A
// function on no cycle is left alone.
func TestDepthChecks(t *testing.T) {
	maxDepth = 100
	defer func() { maxDepth = 0 }()
	out, _, err := instrument(recursionModule())
	if err != nil {
		t.Fatal(err)
	}
	if depthChecked != 2 {
		t.Errorf("%d functions checked, want 2 (rec, ind)", depthChecked)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) { stack[0] = 0 }),
			nil, []api.ValueType{api.ValueTypeI32}).Export("tick").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	depth := mod.ExportedGlobal(depthName).(api.MutableGlobal)
	for _, fn := range []string{"rec", "ind"} {
		for _, n := range []uint64{0, 1, 50, 99} {
			r, err := mod.ExportedFunction(fn).Call(ctx, n)
			if err != nil || r[0] != n {
				t.Fatalf("%s(%d) = %v, %v", fn, n, r, err)
			}
			if d := depth.Get(); d != 0 {
				t.Errorf("%s(%d): depth %d after the return, want 0", fn, n, d)
			}
		}
		if _, err := mod.ExportedFunction(fn).Call(ctx, 100); err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("%s(100), 101 activations: %v, want the unreachable trap", fn, err)
		}
		if d := depth.Get(); d != 101 {
			t.Errorf("%s: depth %d after the trap, want 101", fn, d)
		}
		depth.Set(0)
	}
	if r, err := mod.ExportedFunction("JS_CallInternal").Call(ctx, 7); err != nil || r[0] != 7 || depth.Get() != 0 {
		t.Errorf("the leaf: %v, %v, depth %d", r, err, depth.Get())
	}
}

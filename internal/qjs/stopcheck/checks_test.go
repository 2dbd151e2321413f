package main

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// section is a module section: id, then its payload's length and payload.
func sect(id byte, payload ...byte) []byte {
	return append(binary.AppendUvarint([]byte{id}, uint64(len(payload))), payload...)
}

// vec is a vector: its count, then its items.
func vec(items ...[]byte) []byte {
	out := binary.AppendUvarint(nil, uint64(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func str(s string) []byte { return append(binary.AppendUvarint(nil, uint64(len(s))), s...) }

// namedFuncs is the export section and the name section of a module whose
// function 0 is the import tick and whose functions 1.. are names, each
// exported under its name.
func namedFuncs(names []string) (exports, nameSec []byte) {
	var exps, nameMap [][]byte
	for i, n := range names {
		exps = append(exps, cat(str(n), []byte{0x00, byte(i + 1)}))
		nameMap = append(nameMap, cat([]byte{byte(i + 1)}, str(n)))
	}
	nameMap = append([][]byte{cat([]byte{0}, str("tick"))}, nameMap...)
	sub := vec(nameMap...)
	names1 := cat([]byte{1}, binary.AppendUvarint(nil, uint64(len(sub))), sub)
	return sect(7, vec(exps...)...), sect(0, cat(str("name"), names1)...)
}

// loopModule is a module with the loop forms stopcheck meets in compiled C.
// Each function takes n and loops until it is zero:
//   - brif: the loop repeats with br_if (n-1 back edges);
//   - br: the loop exits with br_if to an outer block and repeats with br
//     (n back edges);
//   - table: the loop repeats with br_table (checked at its header: n
//     entries);
//   - JS_CallInternal: as brif, in the function stopcheck leaves unchecked.
func loopModule() []byte {
	const i32 = 0x7F
	funcType := []byte{0x60, 1, i32, 1, i32}       // (i32) -> i32
	tickType := []byte{0x60, 0, 1, i32}            // () -> i32
	dec := []byte{0x20, 0, 0x41, 1, 0x6B, 0x22, 0} // local.get 0; i32.const 1; i32.sub; local.tee 0
	body := func(code ...byte) []byte {
		b := append([]byte{0}, code...) // no locals
		b = append(b, 0x41, 0, 0x0B)    // i32.const 0; end
		return append(binary.AppendUvarint(nil, uint64(len(b))), b...)
	}
	brif := body(cat([]byte{0x03, 0x40}, dec, []byte{0x0D, 0, 0x0B})...)
	br := body(cat([]byte{0x02, 0x40, 0x03, 0x40, 0x20, 0, 0x45, 0x0D, 1}, dec, []byte{0x1A, 0x0C, 0, 0x0B, 0x0B})...)
	table := body(cat([]byte{0x02, 0x40, 0x03, 0x40}, dec, []byte{0x45, 0x0E, 1, 0, 1, 0x0B, 0x0B})...)
	names := []string{"brif", "br", "table", "JS_CallInternal"}
	exports, nameSec := namedFuncs(names)
	return cat([]byte("\x00asm\x01\x00\x00\x00"),
		sect(1, vec(funcType, tickType)...),
		sect(2, vec(cat(str("env"), str("tick"), []byte{0x00, 1}))...),
		sect(3, vec([]byte{0}, []byte{0}, []byte{0}, []byte{0})...),
		sect(6, vec([]byte{i32, 1, 0x41, 0, 0x0B})...), // the stack pointer: the one mutable global
		exports,
		sect(10, vec(brif, br, table, brif)...),
		nameSec,
	)
}

// The stop check runs where a loop repeats: before each branch back to its
// header (br, br_if), so a loop that runs once runs none, and at the
// header of a loop that br_table branches back to. Every check calls the
// host once the counter is spent, and the host's non-zero answer traps.
func TestChecksWhereLoopsRepeat(t *testing.T) {
	out, checks, err := instrument(loopModule())
	if err != nil {
		t.Fatal(err)
	}
	if checks != 3 { // brif's and br's back edges, table's header
		t.Errorf("%d checks added, want 3", checks)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	ticks, stop := 0, false
	if _, err := rt.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, m api.Module, stack []uint64) {
			ticks++
			m.ExportedGlobal(tickName).(api.MutableGlobal).Set(1) // the next check calls again
			stack[0] = 0
			if stop {
				stack[0] = 1
			}
		}), nil, []api.ValueType{api.ValueTypeI32}).Export("tick").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Instantiate(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	mod.ExportedGlobal(tickName).(api.MutableGlobal).Set(1)
	for _, c := range []struct {
		fn        string
		n, checks int
	}{
		{"brif", 1, 0}, {"brif", 5, 4},
		{"br", 1, 1}, {"br", 5, 5},
		{"table", 1, 1}, {"table", 5, 5},
		{"JS_CallInternal", 5, 0},
	} {
		ticks = 0
		if _, err := mod.ExportedFunction(c.fn).Call(ctx, uint64(c.n)); err != nil {
			t.Fatalf("%s(%d): %v", c.fn, c.n, err)
		}
		if ticks != c.checks {
			t.Errorf("%s(%d): %d checks ran, want %d", c.fn, c.n, ticks, c.checks)
		}
	}
	stop = true
	for _, fn := range []string{"brif", "br", "table"} {
		_, err := mod.ExportedFunction(fn).Call(ctx, 1<<30)
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("%s: stopped with %v, want the unreachable trap", fn, err)
		}
	}
}

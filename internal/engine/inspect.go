package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// InspectKind is what an item of an Inspection is.
type InspectKind int

// The kinds of items (JS_INSPECT_* of patch 0008).
const (
	GlobalRef  InspectKind = iota // a global the step names and does not declare, at its first use
	GlobalDecl                    // a global the step declares (let, const, class, var, function)
	Local                         // a local binding: parameter, variable, function name
	ImportCall                    // an import() call
)

// InspectItem is one thing the engine found in a step. Line and Column
// are 1-based (the column counts characters), 0 when the engine keeps no
// position for it (a local variable, a declaration).
type InspectItem struct {
	Kind InspectKind
	// Name is the binding's name, or an import() call's specifier; Literal
	// is false for an import() whose specifier is not a string literal.
	Name         string
	Literal      bool
	Line, Column int
}

// Inspection is what the engine reports of a step it compiled without
// running it: a syntax error, or the step's items.
type Inspection struct {
	// Err is the compiler's message ("" when the step compiles), at Line
	// and Column (0 when the error has no place).
	Err          string
	Line, Column int
	// ImportModule is the module of a static import, which a step, a
	// script, may not have (Err then says so); Import reports one.
	ImportModule string
	Import       bool
	Items        []InspectItem
}

// InspectStep compiles script as Step would, without running it, and
// reports what it declares and refers to. Nothing of the realm runs or is
// read: the report is the compiler's, so a step of a session inspects
// the next step as it inspects the first.
func (v *VM) InspectStep(script string) (*Inspection, error) {
	return v.inspect(context.Background(), script, 0)
}

// PrepareStep inspects script as InspectStep does and keeps what it
// compiled: the next Step of the same script, with a budget as ops says
// (ops < 0: none) and sloppy as the job's, runs it without compiling it
// again. A done ctx stops the compile for good (the VM is then spent).
func (v *VM) PrepareStep(ctx context.Context, script string, ops int, sloppy bool) (*Inspection, error) {
	flags := stepFlags(ops >= 0, sloppy)
	v.kept = ""
	in, err := v.inspect(ctx, script, flags|wasmvm.StepKeep)
	if err == nil && in.Err == "" {
		v.kept, v.keptFlags = script, flags
	}
	return in, err
}

// stepFlags are a step's wasmvm flags.
func stepFlags(budget, sloppy bool) int {
	f := 0
	if budget {
		f |= wasmvm.StepBudget
	}
	if sloppy {
		f |= wasmvm.StepSloppy
	}
	return f
}

func (v *VM) inspect(ctx context.Context, script string, flags int) (*Inspection, error) {
	text, err := v.sb.InspectStep(ctx, script, "<eval>", flags)
	if err != nil {
		return nil, err
	}
	var r struct {
		OK           bool     `json:"ok"`
		Items        [][4]any `json:"items"`
		Message      *string  `json:"message"`
		Line         int      `json:"line"`
		Column       int      `json:"column"`
		ImportModule *string  `json:"importModule"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return nil, fmt.Errorf("airlock: the engine's inspection does not read: %w", err)
	}
	in := &Inspection{}
	if !r.OK {
		in.Err, in.Line, in.Column = "the code does not compile", max(r.Line, 0), max(r.Column, 0)
		if r.Message != nil {
			in.Err = *r.Message
		}
		if r.ImportModule != nil {
			in.ImportModule, in.Import = *r.ImportModule, true
		}
		return in, nil
	}
	in.Items = make([]InspectItem, 0, len(r.Items))
	for _, it := range r.Items {
		k, _ := it[0].(float64)
		name, lit := it[1].(string)
		line, _ := it[2].(float64)
		col, _ := it[3].(float64)
		in.Items = append(in.Items, InspectItem{Kind: InspectKind(k), Name: name, Literal: lit, Line: int(line), Column: int(col)})
	}
	return in, nil
}

// InspectStep inspects script, strict or sloppy, on a VM of its own, taken
// from the pool and given back: for a validation with no session at hand.
func InspectStep(script string, sloppy bool) (*Inspection, error) {
	return InspectStepContext(context.Background(), script, sloppy)
}

// InspectStepContext is InspectStep, stopped when ctx is done: the
// engine's compile of a step can take long (it grows faster than the
// step), and a validation has the step's time.
func InspectStepContext(ctx context.Context, script string, sloppy bool) (*Inspection, error) {
	v, err := New()
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return v.inspect(ctx, script, stepFlags(false, sloppy))
}

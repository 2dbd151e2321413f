package source

import (
	"strings"

	"github.com/airlockrun/airlock/internal/hostwork"
	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"
)

// A step of the executor is not a module: it is the body of an async
// script, with top-level await and return, which esbuild takes only in a
// function. The step is erased inside stepHead ... stepTail, and the
// function's first and last lines are cut from the output.
const (
	stepHead = "async function step() {\n"
	stepTail = "\n}"
	// strictHead is a strict step's head: esbuild then reports what
	// strict mode forbids (a reserved word as a name, a legacy octal
	// literal) instead of printing code that runs (a renamed variable, the
	// number in decimal). Its output has the directive on a line of its
	// own: the step's body starts one line further down.
	strictHead = `"use strict"; ` + stepHead
)

// StepMap maps positions in erased code to its source.
type StepMap struct {
	smap *sourcemap.Consumer
	// in and out are how many lines down the step's source and the erased
	// step are in esbuild's input and output: 1 and 1 in the step's
	// function, 1 and 2 in a strict one's, 0 and 0 for a module.
	in, out int
}

// EraseStep erases the TypeScript of an executor step: type annotations,
// interfaces, enums, namespaces, `as` and `satisfies`, with esbuild, as
// airlock.Run does for modules. Imports stay. A step esbuild cannot read
// gives the failure, its position in the step; so does a step past
// MaxBytes, or one that nests too deep. The work runs through hostwork.
func EraseStep(code string) (string, *StepMap, *LinkFailure) {
	return erase(nil, code, sloppyStep)
}

// EraseStepUntil is EraseStep, abandoned when stop closes: it then
// returns the failure Stopped at once, and the erasure runs on, abandoned
// (see hostwork). A strict step's erasure fails, as the engine would, for
// what strict mode forbids; EraseStep's reads the step as sloppy code.
func EraseStepUntil(stop <-chan struct{}, code string, strict bool) (string, *StepMap, *LinkFailure) {
	if strict {
		return erase(stop, code, strictStep)
	}
	return erase(stop, code, sloppyStep)
}

// EraseModule erases the TypeScript of an ES module's code, as EraseStep
// does a step's.
func EraseModule(code string) (string, *StepMap, *LinkFailure) {
	return erase(nil, code, module)
}

// What erase erases.
type erasing int

const (
	module erasing = iota
	sloppyStep
	strictStep
)

// Stopped is the failure of an erasure abandoned at its stop.
var Stopped = &LinkFailure{Message: "stopped"}

func erase(stop <-chan struct{}, code string, what erasing) (string, *StepMap, *LinkFailure) {
	kind, head, tail, format, in, outShift := "\x00module", "", "", api.FormatESModule, 0, 0
	switch what {
	case sloppyStep:
		kind, head, tail, format, in, outShift = "\x00step", stepHead, stepTail, api.FormatDefault, 1, 1
	case strictStep:
		kind, head, tail, format, in, outShift = "\x00strict step", strictHead, stepTail, api.FormatDefault, 1, 2
	}
	if len(code) > MaxBytes {
		return "", nil, &LinkFailure{Message: TooLarge("the code", len(code)), Display: "<code>", Line: 1, Col: 1}
	}
	key := cacheKey(kind, code)
	if t, ok := transforms.get(key); ok {
		return t.code, &StepMap{t.smap, in, outShift}, nil
	}
	var (
		nest *nesting.Error
		out  string
		smap *sourcemap.Consumer
		m    *api.Message
	)
	if !hostwork.Do(stop, "erase", len(code), func() {
		// esbuild recurses on the Go stack: code that nests deeper than
		// any real program is refused before it sees it.
		if nest = nesting.Check(code); nest != nil {
			return
		}
		if out, smap, m = esbuildTS(head+code+tail, "<code>", format, true); m != nil {
			return
		}
		if what != module {
			// ["use strict";\n] "async function step() {\n" ... "}\n":
			// the body, outShift lines up.
			for range outShift {
				if i := strings.IndexByte(out, '\n'); i >= 0 {
					out = out[i+1:]
				}
			}
			out = strings.TrimRight(out, "\n")
			out = strings.TrimSuffix(out, "}")
		}
		// Cached here, so that an erasure abandoned at a stop still
		// serves the same code's next step.
		transforms.add(key, transformed{out, smap})
	}) {
		return "", nil, Stopped
	}
	if nest != nil {
		return "", nil, &LinkFailure{Message: nest.Error(), Display: "<code>", Line: nest.Line, Col: nest.Column}
	}
	if m != nil {
		lf := &LinkFailure{Message: m.Text, Display: "<code>"}
		if m.Location != nil {
			lf.Line, lf.Col = m.Location.Line, m.Location.Column+1
			lf.Line -= in // the head's line
			if lf.Line < 1 {
				lf.Line, lf.Col = 1, 1
			}
		}
		return "", nil, lf
	}
	return out, &StepMap{smap, in, outShift}, nil
}

// Position maps a 1-based line and column of the erased step to the step's
// source; it returns them unchanged when it knows no better.
func (m *StepMap) Position(line, col int) (int, int) {
	if m == nil || m.smap == nil || line < 1 {
		return line, col
	}
	// The erased step's line n is the output's line n+m.out, and the
	// source's line n is the input's line n+m.in.
	if _, _, ol, oc, ok := m.smap.Source(line+m.out, max(col-1, 0)); ok && ol > m.in {
		return ol - m.in, oc + 1
	}
	return line, col
}

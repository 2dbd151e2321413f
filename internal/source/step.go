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
)

// StepMap maps positions in erased code to its source.
type StepMap struct {
	smap *sourcemap.Consumer
	step bool // erased in the step's function: one line down
}

// EraseStep erases the TypeScript of an executor step: type annotations,
// interfaces, enums, namespaces, `as` and `satisfies`, with esbuild, as
// airlock.Run does for modules. Imports stay. A step esbuild cannot read
// gives the failure, its position in the step; so does a step past
// MaxBytes, or one that nests too deep. The work runs through hostwork.
func EraseStep(code string) (string, *StepMap, *LinkFailure) {
	return erase(nil, code, true)
}

// EraseStepUntil is EraseStep, abandoned when stop closes: it then
// returns the failure Stopped at once, and the erasure runs on, abandoned
// (see hostwork).
func EraseStepUntil(stop <-chan struct{}, code string) (string, *StepMap, *LinkFailure) {
	return erase(stop, code, true)
}

// EraseModule erases the TypeScript of an ES module's code, as EraseStep
// does a step's.
func EraseModule(code string) (string, *StepMap, *LinkFailure) {
	return erase(nil, code, false)
}

// Stopped is the failure of an erasure abandoned at its stop.
var Stopped = &LinkFailure{Message: "stopped"}

func erase(stop <-chan struct{}, code string, step bool) (string, *StepMap, *LinkFailure) {
	kind, head, tail, format := "\x00module", "", "", api.FormatESModule
	if step {
		kind, head, tail, format = "\x00step", stepHead, stepTail, api.FormatDefault
	}
	if len(code) > MaxBytes {
		return "", nil, &LinkFailure{Message: TooLarge("the code", len(code)), Display: "<code>", Line: 1, Col: 1}
	}
	key := cacheKey(kind, code)
	if t, ok := transforms.get(key); ok {
		return t.code, &StepMap{t.smap, step}, nil
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
		if step {
			// "async function step() {\n" ... "}\n": the body, one line up.
			if i := strings.IndexByte(out, '\n'); i >= 0 {
				out = out[i+1:]
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
			if step {
				lf.Line-- // the head's line
			}
			if lf.Line < 1 {
				lf.Line, lf.Col = 1, 1
			}
		}
		return "", nil, lf
	}
	return out, &StepMap{smap, step}, nil
}

// Position maps a 1-based line and column of the erased step to the step's
// source; it returns them unchanged when it knows no better.
func (m *StepMap) Position(line, col int) (int, int) {
	if m == nil || m.smap == nil || line < 1 {
		return line, col
	}
	shift := 0
	if m.step {
		// The erased step's line n is the output's line n+1, and the
		// source's line n is the input's line n+1.
		shift = 1
	}
	if _, _, ol, oc, ok := m.smap.Source(line+shift, max(col-1, 0)); ok && ol > shift {
		return ol - shift, oc + 1
	}
	return line, col
}

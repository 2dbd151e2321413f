package source

import (
	"strings"

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
// gives the failure, its position in the step.
func EraseStep(code string) (string, *StepMap, *LinkFailure) {
	return erase(code, true)
}

// EraseModule erases the TypeScript of an ES module's code, as EraseStep
// does a step's.
func EraseModule(code string) (string, *StepMap, *LinkFailure) {
	return erase(code, false)
}

func erase(code string, step bool) (string, *StepMap, *LinkFailure) {
	kind, head, tail, format := "\x00module", "", "", api.FormatESModule
	if step {
		kind, head, tail, format = "\x00step", stepHead, stepTail, api.FormatDefault
	}
	// esbuild recurses on the Go stack: code that nests deeper than any
	// real program is refused before it sees it.
	if e := nesting.Check(code); e != nil {
		return "", nil, &LinkFailure{Message: e.Error(), Display: "<code>", Line: e.Line, Col: e.Column}
	}
	key := cacheKey(kind, code)
	if t, ok := transforms.get(key); ok {
		return t.code, &StepMap{t.smap, step}, nil
	}
	out, smap, m := esbuildTS(head+code+tail, "<code>", format, true)
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
	if step {
		// "async function step() {\n" ... "}\n": the body, one line up.
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
		out = strings.TrimRight(out, "\n")
		out = strings.TrimSuffix(out, "}")
	}
	transforms.add(key, transformed{out, smap})
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

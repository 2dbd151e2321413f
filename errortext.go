package airlock

import (
	"github.com/airlockrun/airlock/internal/clip"
	"github.com/airlockrun/airlock/internal/hostcall"
)

// A failure's texts (a ScriptError's, an executor's exception) are bounded
// twice: each to MaxErrorText characters, and all of a run's together by
// what is left of its crossing budget, with internal/clip's marker saying
// how much was cut.

// clipError bounds each text of e to MaxErrorText characters. The
// sandbox cuts what it reports; this bounds what the host made of it (a
// mapped stack, a link error's names) and what a worker process sends.
func clipError(e *ScriptError) {
	if e == nil {
		return
	}
	for _, p := range []*string{&e.Name, &e.Message, &e.Stack, &e.Specifier, &e.Filename} {
		if len(*p) > MaxErrorText {
			*p = clip.Chars(*p, MaxErrorText)
		}
	}
}

// payError bounds e (clipError) and charges its texts that come from the
// sandbox (Name, Message, Stack) to b, in that order, each cut to what b
// has left when it cannot pay for all of it.
func payError(b *hostcall.Budget, e *ScriptError) {
	clipError(e)
	e.Name = b.PayText(e.Name)
	e.Message = b.PayText(e.Message)
	e.Stack = b.PayText(e.Stack)
}

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

// payText charges the bytes of a text that crossed from the sandbox to b,
// and cuts it to what b had left if that is less.
func payText(b *hostcall.Budget, s string) string {
	if k := b.Take(len(s)); k < len(s) {
		return clip.Bytes(s, k)
	}
	return s
}

// payError bounds e (clipError) and charges its texts that come from the
// sandbox (Name, Message, Stack) to b, in that order, each cut to what b
// has left when it cannot pay for all of it.
func payError(b *hostcall.Budget, e *ScriptError) {
	clipError(e)
	e.Name = payText(b, e.Name)
	e.Message = payText(b, e.Message)
	e.Stack = payText(b, e.Stack)
}

// clipChars bounds s to max characters as internal/clip's Chars does.
func clipChars(s string, max int) string { return clip.Chars(s, max) }

package service

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/airlockrun/airlock"
)

// The output caps (Config.MaxOutput, Config.JSMaxOutput) count what a text
// costs the response: its bytes, except that a character whose JSON escape
// is longer than two bytes counts at the escape's length (capLen). A text
// within a cap is then at most twice the cap in the response's JSON (a
// quote, a backslash or a line break is escaped in two bytes).

// capLen is what s counts against an output cap: its bytes, a control
// character other than \n, \r and \t, U+2028, U+2029 and a byte that is
// not UTF-8 (sent as \ufffd) counted at six, their escape's length.
func capLen(s string) int {
	_, n, _ := capPrefix(s, math.MaxInt)
	return n
}

// asciiLen is capLen of an ASCII byte.
func asciiLen(c byte) int {
	if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
		return 6
	}
	return 1
}

// runeLen is capLen of a rune of size bytes that is not ASCII.
func runeLen(r rune, size int) int {
	if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
		return 6
	}
	return size
}

// capPrefix is how many bytes of s fit limit, a whole character at a time,
// their capLen, and whether that is all of s.
func capPrefix[T string | []byte](s T, limit int) (int, int, bool) {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		k, size := 0, 1
		if c < utf8.RuneSelf {
			k = asciiLen(c)
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			k = runeLen(r, size)
		}
		if n+k > limit {
			return i, n, false
		}
		n += k
		i += size
	}
	return len(s), n, true
}

// capJSON cuts s to its head that fits limit (capLen), with the marker that
// says how many bytes were cut.
func capJSON(s string, limit int) string {
	i, _, all := capPrefix(s, max(limit, 0))
	if all {
		return s
	}
	return s[:i] + cutMarker(int64(len(s)-i))
}

// capError bounds a javascript/typescript execution's error: its text for
// the response's error ("Name: message (file:line:col)") and the
// scriptError of /v1/execute, which repeats the name and the message,
// together within limit (capLen, markers aside). The name, the file and the
// specifier get a sixteenth of it at most, the stack a quarter, the
// message what is left, counted once for each copy.
func capError(e *airlock.ScriptError, limit int) (string, *airlock.ScriptError) {
	se := *e
	se.Name = capJSON(se.Name, limit/16)
	se.Filename = capJSON(se.Filename, limit/16)
	se.Specifier = capJSON(se.Specifier, limit/16)
	se.Stack = capJSON(se.Stack, limit/4)
	pos := ""
	if se.Line > 0 {
		pos = fmt.Sprintf(" (%s:%d:%d)", se.Filename, se.Line, se.Column)
	}
	room := limit - 2*capLen(se.Name) - len(": ") - capLen(pos) - capLen(se.Filename) - capLen(se.Specifier) - capLen(se.Stack)
	se.Message = capJSON(se.Message, room/2)
	return se.Error() + pos, &se
}

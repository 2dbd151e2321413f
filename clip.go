package airlock

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/hostcall"
)

// DefaultMaxOutput is the bound, in characters, that the agent layer and
// the MCP server put on the text that goes back to a model from one run
// (run_code's text, a CodeAgent's observation), as smolagents cuts its
// observations at about 20,000 characters: enough for a page of data, far
// below a context window.
const DefaultMaxOutput = 20000

// ClipText bounds s to max characters (Unicode code points), the marker
// included: a longer s keeps its head and its tail, half of the room each,
// with a line between them that says how much was cut:
//
//	... [truncated 1,234,567 characters] ...
//
// The head holds what a run's text starts with (the status, the start of
// the result or the error) and the tail what it ends with (the last
// console lines, a CodeAgent's value), which is what a model needs to go
// on. A negative max means no bound.
func ClipText(s string, max int) string {
	if max < 0 || len(s) <= max {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	marker := ""
	keep := max
	for range 3 { // the marker's length depends on the count it states
		marker = "\n... [truncated " + groupDigits(n-keep) + " characters] ...\n"
		keep = max - utf8.RuneCountInString(marker)
	}
	if keep < 2 {
		return string([]rune(s[:min(len(s), 4*max)])[:max])
	}
	head := keep / 2
	tail := keep - head
	i := 0
	for k := 0; k < head; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	j := len(s)
	for k := 0; k < tail; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
	}
	marker = "\n... [truncated " + groupDigits(n-head-tail) + " characters] ...\n"
	return s[:i] + marker + s[j:]
}

// groupDigits writes n with commas between groups of three digits.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// cutMarkerRE matches ClipText's marker, on a line of its own or inside a
// line (as the sandbox cuts a stack's frame), and captures the count.
var cutMarkerRE = regexp.MustCompile(`\n?\.\.\. \[truncated ([0-9,]+) characters\] \.\.\.\n?`)

// cutCount is how many characters cutting mid from a text removes: its
// own, less a marker's in it, plus the count the marker states (what the
// sandbox cut before).
func cutCount(mid string) int {
	n := utf8.RuneCountInString(mid)
	for _, m := range cutMarkerRE.FindAllStringSubmatch(mid, -1) {
		k, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		n += k - utf8.RuneCountInString(m[0])
	}
	return n
}

// clipBytes bounds s to n bytes of its own text, keeping its head and its
// tail, half of n each, around ClipText's marker (not counted in n), which
// states how many characters were cut, with what a marker already in the
// cut part stated.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	j := len(s) - (n - n/2)
	for j < len(s) && !utf8.RuneStart(s[j]) {
		j++
	}
	return s[:i] + "\n... [truncated " + groupDigits(cutCount(s[i:j])) + " characters] ...\n" + s[j:]
}

// clipError bounds each text of e to MaxErrorText characters. The
// sandbox cuts what it reports; this bounds what the host made of it (a
// mapped stack, a link error's names) and what a worker process sends.
func clipError(e *ScriptError) {
	if e == nil {
		return
	}
	for _, p := range []*string{&e.Name, &e.Message, &e.Stack, &e.Specifier, &e.Filename} {
		if len(*p) > MaxErrorText {
			*p = clipChars(*p, MaxErrorText)
		}
	}
}

// clipChars bounds s to max characters (max > 64) as ClipText does, its
// marker's count including what a marker in the cut part stated; it keeps
// a few characters less than ClipText, room for the widest count.
func clipChars(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	keep := max - len("\n... [truncated  characters] ...\n") - len("9,223,372,036,854,775,807")
	i := 0
	for k := 0; k < keep/2; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	j := len(s)
	for k := 0; k < keep-keep/2; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
	}
	return s[:i] + "\n... [truncated " + groupDigits(cutCount(s[i:j])) + " characters] ...\n" + s[j:]
}

// payText charges the bytes of a text that crossed from the sandbox to b,
// and cuts it to what b had left if that is less.
func payText(b *hostcall.Budget, s string) string {
	if k := b.Take(len(s)); k < len(s) {
		return clipBytes(s, k)
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

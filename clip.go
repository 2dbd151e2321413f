package airlock

import (
	"strconv"
	"unicode/utf8"
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

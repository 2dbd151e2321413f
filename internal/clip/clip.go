// Package clip cuts a text that is too long for its reader: it keeps the
// head and the tail, and puts between them a line that says how many
// characters were cut:
//
//	... [truncated 1,234,567 characters] ...
//
// The sandbox writes the same marker when it cuts a failure's texts, so a
// text cut twice states in its marker all that was cut, in both places.
// [Text] is agent.ClipText, the bound on what a model reads; [Chars] and
// [Bytes] are the root's bounds on a failure's texts (MaxErrorText, and
// what is left of a run's crossing budget).
//
// # Concurrency
//
// Every function may be called from any goroutine.
package clip

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text bounds s to max characters (Unicode code points), the marker
// included: a longer s keeps its head and its tail, half of the room each,
// around the marker. A negative max means no bound. It is agent.ClipText.
func Text(s string, max int) string {
	if max < 0 || len(s) <= max {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	keep := max
	for range 3 { // the marker's length depends on the count it states
		keep = max - utf8.RuneCountInString(marker(n-keep))
	}
	if keep < 2 {
		return string([]rune(s[:min(len(s), 4*max)])[:max])
	}
	head := keep / 2
	tail := keep - head
	i, j := around(s, head, tail)
	return s[:i] + marker(n-head-tail) + s[j:]
}

// marker is the line that says n characters were cut.
func marker(n int) string {
	return "\n... [truncated " + groupDigits(n) + " characters] ...\n"
}

// around returns the byte offsets in s after its first head characters
// and before its last tail.
func around(s string, head, tail int) (i, j int) {
	for k := 0; k < head; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	j = len(s)
	for k := 0; k < tail; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
	}
	return i, j
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

// cutMarkerRE matches the marker, on a line of its own or inside a
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

// Bytes bounds s to n bytes of its own text, keeping its head and its
// tail, half of n each, around the marker (not counted in n), which states
// how many characters were cut, with what a marker already in the cut part
// stated.
func Bytes(s string, n int) string {
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
	return s[:i] + marker(cutCount(s[i:j])) + s[j:]
}

// Chars bounds s to max characters (max > 64) as [Text] does, its
// marker's count including what a marker in the cut part stated; it keeps
// a few characters less than Text, room for the widest count.
func Chars(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	keep := max - len("\n... [truncated  characters] ...\n") - len("9,223,372,036,854,775,807")
	i, j := around(s, keep/2, keep-keep/2)
	return s[:i] + marker(cutCount(s[i:j])) + s[j:]
}

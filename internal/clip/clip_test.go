package clip_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/clip"
)

var marker = regexp.MustCompile(`\n\.\.\. \[truncated ([0-9,]+) characters\] \.\.\.\n`)

// stated is the count s's one marker states.
func stated(t *testing.T, s string) int {
	t.Helper()
	m := marker.FindAllStringSubmatch(s, -1)
	if len(m) != 1 {
		t.Fatalf("%d markers in %q", len(m), s)
	}
	n, _ := strconv.Atoi(strings.ReplaceAll(m[0][1], ",", ""))
	return n
}

// A text the sandbox already cut, cut again by the host: the one marker
// left states all that was cut, in both places, so the count a model
// reads is true.
func TestBytesCountsWhatWasCutBefore(t *testing.T) {
	s := strings.Repeat("a", 100) + "\n... [truncated 1,000 characters] ...\n" + strings.Repeat("b", 100)
	got := clip.Bytes(s, 20)
	if want := strings.Repeat("a", 10) + "\n... [truncated 1,180 characters] ...\n" + strings.Repeat("b", 10); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := clip.Bytes(s, len(s)); got != s {
		t.Fatalf("a text within the bound was cut: %q", got)
	}
}

// Chars keeps at most max characters, at character boundaries, its head
// and its tail, and states how many characters it cut.
func TestChars(t *testing.T) {
	s := "<" + strings.Repeat("é", 5000) + ">"
	got := clip.Chars(s, 200)
	if n := utf8.RuneCountInString(got); n > 200 || !utf8.ValidString(got) {
		t.Fatalf("%d characters, valid %v", n, utf8.ValidString(got))
	}
	if !strings.HasPrefix(got, "<é") || !strings.HasSuffix(got, "é>") {
		t.Fatalf("head or tail lost: %q", got)
	}
	kept := utf8.RuneCountInString(marker.ReplaceAllString(got, ""))
	if n := stated(t, got); n != 5002-kept {
		t.Fatalf("states %d characters cut, %d were", n, 5002-kept)
	}
	if got := clip.Chars("short", 100); got != "short" {
		t.Fatalf("short: %q", got)
	}
}

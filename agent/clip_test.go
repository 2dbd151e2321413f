package agent_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/airlockrun/airlock/agent"
)

func TestClipText(t *testing.T) {
	if got := agent.ClipText("short", 10); got != "short" {
		t.Errorf("short: %q", got)
	}
	if got := agent.ClipText("ééé", 3); got != "ééé" {
		t.Errorf("three characters in six bytes: %q", got)
	}
	s := "HEAD" + strings.Repeat("x", 2_000_000) + "TAIL"
	got := agent.ClipText(s, 1000)
	if n := utf8.RuneCountInString(got); n != 1000 {
		t.Errorf("%d characters, want 1000", n)
	}
	if !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") {
		t.Errorf("head or tail lost: %q...%q", got[:10], got[len(got)-10:])
	}
	cut := 2_000_008 - (1000 - len("\n... [truncated 1,999,050 characters] ...\n"))
	if want := "\n... [truncated 1,999,050 characters] ...\n"; cut != 1_999_050 || !strings.Contains(got, want) {
		t.Errorf("marker: want %q (cut %d) in %q", want, cut, got[480:560])
	}
	// Cut at character boundaries.
	got = agent.ClipText(strings.Repeat("é", 500), 100)
	if !utf8.ValidString(got) || utf8.RuneCountInString(got) != 100 || !strings.Contains(got, "[truncated 436 characters]") {
		t.Errorf("runes: %q", got)
	}
	if got := agent.ClipText(strings.Repeat("a", 50), 5); got != "aaaaa" {
		t.Errorf("tiny bound: %q", got)
	}
	if got := agent.ClipText(s, -1); got != s {
		t.Error("negative bound cut")
	}
}

package session

import (
	"strings"
	"testing"
)

// A step's stack keeps the frames of the step's code, with positions
// mapped to the step (the erased TypeScript's to the code as written), and
// the line that says the sandbox cut frames; the kernel's and other
// modules' frames are left out.
func TestMapStepStack(t *testing.T) {
	shift := func(l, c int) (int, int) { return l + 1, c + 2 }
	stack := "    at f (<eval>:3:5)\n    at <internal>:1:1\n    at <eval>:7\n    ... [truncated 99 characters] ..."
	got, line, col := mapStepStack(stack, shift)
	want := "    at f (<code>:4:7)\n    at <code>:8:3\n    ... [truncated 99 characters] ..."
	if got != want || line != 4 || col != 7 {
		t.Fatalf("mapStepStack = %q, %d, %d; want %q, 4, 7", got, line, col, want)
	}
}

// A step's logs are cut at MaxLogBytes on a character boundary, marked
// once, and a call after the cut is not kept; console.debug counts as log,
// and only the collected levels are kept.
func TestStepLogs(t *testing.T) {
	st := &step{opts: &Step{MaxLogBytes: 10, Levels: []string{"log"}}}
	l := (*stepLogs)(st)
	if l.Wants(1) || !l.Wants(4) {
		t.Fatalf("Wants(info) = %v, Wants(debug) = %v; want false, true", l.Wants(1), l.Wants(4))
	}
	l.Log(0, []any{"abc"})
	l.Log(4, []any{"défghi"}) // 3 + 1 + 7 bytes: é may not be split
	if got, want := st.logText(), "abc\ndéfgh"+TruncatedMark; got != want {
		t.Fatalf("logs = %q, want %q", got, want)
	}
	if l.Wants(0) {
		t.Fatal("a call after the cut is still wanted")
	}
	if n := len(st.logEntries()); n != 2 || st.entries[1].Level != "log" {
		t.Fatalf("entries = %+v", st.entries)
	}
	if !strings.HasSuffix(cutUTF8("aé", 2), "a") {
		t.Fatalf("cutUTF8 split a character: %q", cutUTF8("aé", 2))
	}
}

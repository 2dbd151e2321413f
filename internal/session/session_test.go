package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/engine"
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

// An Interrupt while a step is being prepared (validated and compiled,
// before it runs) stops it: the step does not run, fails as interrupted,
// and the session stays usable. It was lost: Interrupt reported that no
// step was running, and the step then ran to its end (the REPL's Ctrl-C
// right after a line was entered did nothing).
func TestInterruptWhilePreparing(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, Config{MemoryLimitBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	step := func(code string, prepare func()) *Step {
		return &Step{MaxOperations: -1, Timeout: time.Minute, ValueBytes: 1 << 20,
			Prepare: func(stop <-chan struct{}, inspect func(string, bool) (*engine.Inspection, error)) (string, func(int, int) (int, int), error) {
				prepare()
				if _, err := inspect(code, false); err != nil {
					return "", nil, err
				}
				return code, nil, nil
			}}
	}
	if s.Interrupt() {
		t.Fatal("Interrupt with no step reported one")
	}
	preparing, release := make(chan struct{}), make(chan struct{})
	type result struct {
		dirty bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		_, dirty, err := s.Run(ctx, step("globalThis.ran = 1; 2", func() { close(preparing); <-release }))
		done <- result{dirty, err}
	}()
	<-preparing
	interrupted := s.Interrupt()
	close(release)
	if !interrupted {
		t.Fatal("Interrupt while the step was prepared reported no step")
	}
	r := <-done
	var e *Error
	if !errors.As(r.err, &e) || e.Code != CodeInterrupted || r.dirty {
		t.Fatalf("Run = dirty %v, %v; want an interrupted step, not dirty", r.dirty, r.err)
	}
	out, _, err := s.Run(ctx, step("typeof ran", func() {}))
	if err != nil || out.Value != "undefined" {
		t.Fatalf("the next step = %v, %v; want \"undefined\" (the interrupted step did not run)", out, err)
	}
	if s.Interrupt() {
		t.Fatal("Interrupt after the steps reported one")
	}
}

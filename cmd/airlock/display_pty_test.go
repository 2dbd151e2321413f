//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// agentOnTerminal runs `airlock agent ARGS... count` against a scripted
// model with its standard output on a pseudo-terminal (standard error too
// if bothOnTerminal, else a buffer), and returns what the terminal showed.
func agentOnTerminal(t *testing.T, bothOnTerminal bool, args ...string) string {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&shown, master) // until the slave side is closed (EIO)
	}()
	srv := gatedModel(t, &syncBuffer{}, []string{"", ""}, []any{
		"Thought: add.\n```js\nconst n = 1 + 1; console.log(n)\n```<end_code>", "```js\nfinal_answer(n)\n```<end_code>"})
	var stderr io.Writer = &syncBuffer{}
	if bothOnTerminal {
		stderr = slave
	}
	args = append(append([]string{"agent", "--base-url", srv.URL + "/v1"}, args...), "count")
	code := run(context.Background(), args, strings.NewReader(""), slave, stderr)
	slave.Close()
	<-done
	if code != 0 {
		t.Fatalf("%v: exit %d\n%q\n%s", args, code, shown.String(), stderr)
	}
	if !strings.Contains(shown.String(), "Final answer:") {
		t.Fatalf("%v: the terminal lacks the answer:\n%q", args, shown.String())
	}
	return shown.String()
}

// sgr is a colour (Select Graphic Rendition) escape sequence.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// On a terminal the display is in colour: the step's heading, the code's
// keywords, the final answer. With --no-color or NO_COLOR there is none,
// and standard output has no escape sequence at all; the live indicator on
// a terminal's standard error only moves the cursor.
func TestAgentDisplay_Colour(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("NO_COLOR", "")
	out := agentOnTerminal(t, true)
	for _, want := range []string{"\x1b[1;36m━━ step 1 ━━\x1b[0m", "\x1b[35mconst\x1b[0m n = 1 + 1", "\x1b[1;32mFinal answer:\x1b[0m 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal lacks %q:\n%q", want, out)
		}
	}

	if out := agentOnTerminal(t, false, "--no-color"); strings.Contains(out, "\x1b") {
		t.Errorf("--no-color: escape sequences on standard output:\n%q", out)
	}
	if out := agentOnTerminal(t, true, "--no-color"); sgr.MatchString(out) {
		t.Errorf("--no-color: colour on the terminal:\n%q", out)
	}
	t.Setenv("NO_COLOR", "1")
	if out := agentOnTerminal(t, false); strings.Contains(out, "\x1b") {
		t.Errorf("NO_COLOR=1: escape sequences on standard output:\n%q", out)
	}
	if out := agentOnTerminal(t, true); sgr.MatchString(out) {
		t.Errorf("NO_COLOR=1: colour on the terminal:\n%q", out)
	}
}

// Standard output that is not a terminal (a pipe) gets no escape sequence,
// though standard error is one.
func TestAgentDisplay_NoColourOffTerminal(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("NO_COLOR", "")
	master, slave := openPTY(t)
	defer master.Close()
	go io.Copy(io.Discard, master)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var piped bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(&piped, r)
	}()
	srv := gatedModel(t, &syncBuffer{}, []string{"", ""}, []any{
		"```js\nconst n = 1 + 1; console.log(n)\n```<end_code>", "```js\nfinal_answer(n)\n```<end_code>"})
	code := run(context.Background(), []string{"agent", "--base-url", srv.URL + "/v1", "count"}, strings.NewReader(""), w, slave)
	w.Close()
	slave.Close()
	<-done
	out := piped.String()
	if code != 0 || !strings.Contains(out, "━━ step 1 ━━") || !strings.Contains(out, "  │ const n = 1 + 1") || !strings.Contains(out, "Final answer: 2") {
		t.Fatalf("exit %d:\n%q", code, out)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape sequences in a pipe:\n%q", out)
	}
}

//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	var unlock int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120})
	return master, slave
}

// The REPL in a terminal: expression values, state, continuation of an
// incomplete line, Ctrl-C interrupting a step waiting in a tool with the
// session's state kept (it was lost: the step's context was cancelled,
// which resets the executor), Ctrl-C stopping a step that runs
// JavaScript with the state kept too, console lines printed as they are
// written, history kept in its file, Ctrl-D quitting.
func TestReplTerminal(t *testing.T) { replTerminal(t, true) }

// The REPL hung on terminals that never answer a cursor-position query
// (ESC [ 6 n): the line editor asked before each prompt and waited for the
// answer with no bound, so no prompt ever came. The REPL now never asks
// (its prompt always starts a line: the editor is given that answer), on
// a terminal that answers as on one that does not. This one quits with
// Ctrl-C twice at an empty prompt.
func TestReplTerminal_NoCursorAnswers(t *testing.T) { replTerminal(t, false) }

// replTerminal runs the REPL in a pseudo-terminal that answers cursor
// queries, if answers, or never does.
func replTerminal(t *testing.T, answers bool) {
	master, slave := openPTY(t)
	defer master.Close()
	history := filepath.Join(t.TempDir(), "history")
	cmd := command(t, "repl", "--history", history, "--timeout", "1h", "--max-ops", "1000000000")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// probe reads the terminal's mode: cooked (ISIG set) once the line
	// editor has returned a line, so that a Ctrl-C then is a SIGINT to
	// the step, not a key for the editor.
	probe, err := unix.Dup(int(slave.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(probe)
	slave.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()

	var mu sync.Mutex
	var out bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			// The line editor asks where the cursor is, as a terminal
			// would be asked; answer as one.
			for range bytes.Count(buf[:n], []byte("\x1b[6n")) {
				if answers {
					master.WriteString("\x1b[1;1R")
				}
			}
			if err != nil {
				return
			}
		}
	}()
	mark := 0
	// expect waits for want in the output since the last expectation; poke
	// is sent again while waiting, if set.
	expect := func(want string, poke string) {
		t.Helper()
		guard := time.After(time.Minute) // a hang guard, not a speed bound
		for {
			mu.Lock()
			s := out.String()
			mu.Unlock()
			if i := strings.Index(s[mark:], want); i >= 0 {
				mark += i + len(want)
				return
			}
			select {
			case <-guard:
				t.Fatalf("no %q in the terminal:\n%s", want, s)
			case err := <-exited:
				t.Fatalf("the repl exited (%v) before %q:\n%s", err, want, s)
			case <-time.After(50 * time.Millisecond):
			}
			if poke != "" {
				master.WriteString(poke)
			}
		}
	}
	send := func(s string) { master.WriteString(s) }
	// interrupt sends Ctrl-C once the editor has returned the line sent
	// last (it was in raw mode at the prompt before the line was sent).
	interrupt := func() {
		t.Helper()
		guard := time.After(time.Minute) // a hang guard, not a speed bound
		for {
			tio, err := unix.IoctlGetTermios(probe, unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if tio.Lflag&unix.ISIG != 0 {
				send("\x03")
				return
			}
			select {
			case <-guard:
				t.Fatal("the terminal stayed in raw mode")
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	// upTo is the output from from to the last expectation.
	upTo := func(from int) string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()[from:mark]
	}

	expect("> ", "")
	send("const a = 20\r")
	expect("> ", "")
	send("a + 1\r")
	expect("21\r\n", "")
	expect("> ", "")
	send("let q = a +\r")
	expect("... ", "")
	send("2\r")
	expect("> ", "")
	send("q * 2\r")
	expect("44\r\n", "")
	expect("> ", "")
	send("'x'.repeat(3)\r")
	expect("'xxx'\r\n", "")
	expect("> ", "")

	// Ctrl-C while a step waits in a tool interrupts the step and keeps
	// the session's state: what earlier steps declared is still there.
	send("const x = 7\r")
	expect("> ", "")
	send("await sleep(30000)\r")
	interrupt()
	expect("interrupted (Ctrl-C)", "")
	from := mark
	expect("> ", "")
	if s := upTo(from); strings.Contains(s, "reset") {
		t.Fatalf("the state was lost: %q", s)
	}
	send("x * 6\r")
	expect("42\r\n", "")
	expect("> ", "")

	// Ctrl-C while a step runs JavaScript stops the step, and the prompt
	// is back with the session's state (the sandbox was reset: the
	// executor could not stop a step and keep it). The step's console
	// line was printed as it was written, before the interrupt.
	send("let y = 5; console.log('looping'); for (;;) {}\r")
	expect("looping\r\n", "")
	interrupt()
	expect("interrupted (Ctrl-C)", "")
	from = mark
	expect("> ", "")
	if s := upTo(from); strings.Contains(s, "reset") {
		t.Fatalf("the state was lost: %q", s)
	}
	send("x * y\r")
	expect("35\r\n", "")
	expect("> ", "")
	// Ctrl-C at the prompt drops the line being typed.
	send("this is not code\x03")
	expect("> ", "")
	send("3 * 3\r")
	expect("9\r\n", "")
	expect("> ", "")

	if answers {
		send("\x04") // Ctrl-D
	} else {
		// Ctrl-C twice at an empty prompt quits, as in Node's REPL.
		send("\x03")
		expect("(Ctrl-C again, Ctrl-D or .exit quits)", "")
		expect("> ", "")
		send("\x03")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Ctrl-D did not end the repl")
	}
	mu.Lock()
	if bytes.Contains(out.Bytes(), []byte("\x1b[6n")) {
		t.Error("the terminal was asked where the cursor is")
	}
	mu.Unlock()
	h, _ := os.ReadFile(history)
	if !strings.Contains(string(h), "a + 1\n") || !strings.Contains(string(h), "q * 2\n") {
		t.Fatalf("history file: %q", h)
	}
}

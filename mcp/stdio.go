package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stopGrace is how long an upstream command has to exit after its input is
// closed before it is killed.
const stopGrace = 2 * time.Second

// stderrTail is how much of an upstream command's standard error is kept,
// its last bytes, to say why it exited.
const stderrTail = 2048

// A stdioTransport runs an upstream command and speaks to it over its
// standard input and output, as sdk.CommandTransport does, but owns the
// process so that nothing the command does can hold the server: a message
// the command does not read within writeTimeout fails and the command is
// killed (a pipe write otherwise blocks, ignoring every context, with the
// SDK's write lock held), closing kills it after stopGrace, and its exit
// status and the tail of its standard error say why it went away.
type stdioTransport struct {
	cmd          *exec.Cmd
	writeTimeout time.Duration

	// ready is set once the upstream has answered initialize and
	// tools/list: from then on closing gives it stopGrace to exit; before,
	// a failed attempt kills it at once.
	ready atomic.Bool

	stderr  tail
	exited  chan struct{}          // closed when the process has exited
	status  error                  // set before exited is closed
	stopped atomic.Pointer[string] // why we killed it, if we did for a reason
}

func newStdioTransport(cmd *exec.Cmd, writeTimeout time.Duration) *stdioTransport {
	return &stdioTransport{cmd: cmd, writeTimeout: writeTimeout, exited: make(chan struct{})}
}

// Connect starts the command.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	t.cmd.Stdin, t.cmd.Stdout, t.cmd.Stderr = inR, outW, &t.stderr
	// A descendant that keeps standard error open must not keep Wait.
	t.cmd.WaitDelay = stopGrace
	err = t.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go func() {
		t.status = t.cmd.Wait()
		close(t.exited)
	}()
	w := &stdinWriter{t: t, f: inW}
	return (&sdk.IOTransport{Reader: outR, Writer: w}).Connect(ctx)
}

// exit says how the command ended, waiting up to d for it to end: "" while
// it runs.
func (t *stdioTransport) exit(d time.Duration) string {
	if t.cmd.Process == nil {
		return "" // never started
	}
	select {
	case <-t.exited:
	case <-time.After(d):
		return ""
	}
	var b strings.Builder
	b.WriteString("exited")
	if why := t.stopped.Load(); why != nil {
		b.WriteString(" (killed: " + *why + ")")
	} else if t.status != nil {
		b.WriteString(": " + t.status.Error())
	} else {
		b.WriteString(" with status 0")
	}
	if last := t.stderr.last(); last != "" {
		fmt.Fprintf(&b, "; its standard error ends: %q", last)
	}
	return b.String()
}

// kill ends the process now.
func (t *stdioTransport) kill() {
	if t.cmd.Process != nil {
		t.cmd.Process.Kill()
	}
}

// stdinWriter writes to the command's standard input, each write bounded
// by writeTimeout; closing it closes the input, then waits up to stopGrace
// for the command to exit and kills it.
type stdinWriter struct {
	t    *stdioTransport
	f    *os.File
	once sync.Once
}

var errNotReading = errors.New("the upstream does not read its input")

func (w *stdinWriter) Write(p []byte) (int, error) {
	if w.t.writeTimeout > 0 {
		w.f.SetWriteDeadline(time.Now().Add(w.t.writeTimeout))
	}
	n, err := w.f.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// It is stuck: its session ends, and it is connected again.
		why := fmt.Sprintf("it did not read a message of ours for %s", w.t.writeTimeout)
		w.t.stopped.CompareAndSwap(nil, &why)
		w.t.kill()
		return n, fmt.Errorf("%w: %s", errNotReading, why)
	}
	return n, err
}

func (w *stdinWriter) Close() error {
	w.once.Do(func() {
		w.f.Close()
		if !w.t.ready.Load() {
			w.t.kill()
		}
		select {
		case <-w.t.exited:
		case <-time.After(stopGrace):
			w.t.kill()
		}
	})
	return nil
}

// A tail keeps the last stderrTail bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= stderrTail {
		p = p[len(p)-stderrTail:]
		t.buf = t.buf[:0]
	}
	if over := len(t.buf) + len(p) - stderrTail; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// last is the last non-empty line written, at most 300 bytes of it.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimRight(string(t.buf), "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return strings.ToValidUTF8(s, "�")
}

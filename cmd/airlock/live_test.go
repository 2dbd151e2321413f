package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// `airlock run` printed a program's console lines only when it ended, so a
// long run showed nothing until then. Now each line reaches standard error
// as it is written: the program below logs, reports, then never ends; the
// test reads the command's standard error until both lines have come, and
// only then interrupts it, so the lines came while it ran. Printed once,
// with the stop after them.
func TestRunCommand_LinesAsWritten(t *testing.T) {
	file := filepath.Join(t.TempDir(), "forever.js")
	os.WriteFile(file, []byte(`console.log("started", 1); report({ step: 1 }); while (true) {}`), 0o644)
	cmd := command(t, "run", "--timeout", "1h", file)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }) // a hang guard only
	defer guard.Stop()
	var got []string
	sc := bufio.NewScanner(stderr)
	for len(got) < 2 && sc.Scan() {
		got = append(got, sc.Text())
	}
	if len(got) < 2 || got[0] != "[log] started 1" || got[1] != "[report] { step: 1 }" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("standard error while the program runs: %q", got)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	if !strings.HasPrefix(rest.String(), "terminated:") || strings.Contains(rest.String(), "started") || stdout.Len() != 0 {
		t.Fatalf("after the interrupt: stderr %q, stdout %q", rest.String(), stdout.String())
	}
}

// The lines and reports come in the order they were made, and the value
// after them: through one writer for both streams.
func TestRunCommand_ValueAfterLines(t *testing.T) {
	var both bytes.Buffer
	code := run(context.Background(), []string{"run", "-"},
		strings.NewReader(`console.log("a"); report(2); console.warn("b", { c: 1 }); export default "done"`), &both, &both)
	if want := "[log] a\n[report] 2\n[warn] b { c: 1 }\n'done'\n"; code != 0 || both.String() != want {
		t.Fatalf("%d %q, want %q", code, both.String(), want)
	}
}

// `airlock mcp` over stdio, as a client starts it: a call with a progress
// token receives the program's console line as a progress notification
// while the program still runs (it never ends by itself; the test cancels
// the call only after the line came).
func TestMCPCommand_ProgressWhileRunning(t *testing.T) {
	got := make(chan string, 100)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			if req.Params.ProgressToken == "tok" {
				got <- req.Params.Message
			}
		},
	}).Connect(context.Background(), &sdk.CommandTransport{Command: command(t, "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	guard := time.AfterFunc(time.Minute, cancel) // a hang guard only
	defer guard.Stop()
	seen := make(chan string, 1)
	go func() {
		msg := <-got
		seen <- msg
		cancel() // the program is still looping: only this ends it
	}()
	params := &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": `console.log("working on it"); while (true) {}`, "timeout_ms": 3600000}}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, params); err == nil {
		t.Fatal("the endless program returned")
	}
	select {
	case msg := <-seen:
		if !strings.HasPrefix(msg, "log: working on it") {
			t.Fatalf("progress message %q", msg)
		}
	default:
		t.Fatal("the call ended without a progress notification (the hang guard stopped it)")
	}
}

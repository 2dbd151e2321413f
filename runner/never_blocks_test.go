package runner_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// guarded is a runner whose requests give up after a minute: a server that
// blocks fails the test instead of hanging it. It does not retry, and is
// closed at the test's end.
func guarded(t testing.TB, url string) *runner.HTTPRunner {
	r := runner.NewHTTPRunner(url, runner.WithHTTPClient(&http.Client{Timeout: time.Minute}), runner.WithMaxRetries(1))
	t.Cleanup(func() { r.Close() })
	return r
}

// Issue 15 item 7: the service never blocks on a file. Python leaves a
// FIFO, a Unix socket and a link out of the workspace in its session;
// javascript's readFile and writeFile of each fail at once with a clear
// error, as do an input file written onto them and a declared output file,
// and the one execution slot is free again after each (no 503).
func TestWorkspaceNeverBlocks(t *testing.T) {
	needRuntime(t, "python")
	_, url := serve(t, service.Config{MaxConcurrent: 1})
	r := guarded(t, url)
	ctx := context.Background()
	res, err := r.Run(ctx, runner.CodeRequest{Runtime: "python", SessionID: "fifo", Code: "import os, socket\nos.mkfifo('pipe')\ns = socket.socket(socket.AF_UNIX)\ns.bind('sock')\nos.symlink('/etc/hostname', 'out')\nos.mkdir('dir')\nset_result(sorted(os.listdir('.')))"}, nil)
	if err != nil || res.Error != "" || !strings.Contains(res.Output, "pipe") {
		t.Fatalf("setup: %+v, %v", res, err)
	}
	for _, c := range []struct{ name, want string }{{"pipe", "FIFO"}, {"sock", ""}, {"out", ""}, {"dir", "directory"}} {
		for _, code := range []string{
			"readFile('" + c.name + "')",
			"writeFile('" + c.name + "', 'x')",
			"setResult(1, ['" + c.name + "'])",
		} {
			for i := 0; i < 3; i++ { // more requests than execution slots
				res, err := r.Run(ctx, runner.CodeRequest{Runtime: "javascript", SessionID: "fifo", Code: code, Timeout: 5 * time.Second}, nil)
				if err != nil {
					t.Fatalf("%s: %v", code, err)
				}
				if res.Error == "" || strings.Contains(res.Error, "timed out") || !strings.Contains(res.Error, c.want) {
					t.Fatalf("%s: %+v", code, res)
				}
			}
		}
		// An input file written onto it.
		_, err := r.Run(ctx, runner.CodeRequest{Runtime: "javascript", SessionID: "fifo", Code: "setResult(1)", Files: []runner.File{{Name: c.name, Data: []byte("x")}}}, nil)
		var se *runner.ServiceError
		if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
			t.Fatalf("input onto %s: %v", c.name, err)
		}
	}
	// The FIFO is still there, and a plain run still gets the slot.
	res, err = r.Run(ctx, runner.CodeRequest{Runtime: "python", SessionID: "fifo", Code: "import os, stat\nset_result(stat.S_ISFIFO(os.lstat('pipe').st_mode))"}, nil)
	if err != nil || res.Output != "true" {
		t.Fatalf("after: %+v, %v", res, err)
	}
}

// Issue 15 item 6: the javascript runtimes return at most JSMaxOutput
// (32 KiB by default) to the caller: logs are cut with a marker that says
// how much was cut, and a larger result fails the run at once with an
// error that says why (not a timeout).
func TestJSOutputCap(t *testing.T) {
	for _, c := range []struct {
		cfg   service.Config
		limit int
	}{{service.Config{}, 32 << 10}, {service.Config{JSMaxOutput: 1000}, 1000}} {
		_, url := serve(t, c.cfg)
		r := guarded(t, url)
		for _, rt := range []string{"javascript", "typescript"} {
			res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: rt, Code: "console.log('x'.repeat(2 << 20)); setResult(1)"}, nil)
			if err != nil || res.Output != "1" || len(res.Logs) > c.limit+64 || !cutMarker.MatchString(res.Logs) {
				t.Fatalf("%s, cap %d: %d bytes of logs, ends %q; %v", rt, c.limit, len(res.Logs), res.Logs[max(0, len(res.Logs)-60):], err)
			}
			want := (2<<20 + 1) - c.limit // the line and its newline, less what was kept
			if !strings.Contains(res.Logs, "truncated: "+strconv.Itoa(want)+" bytes cut") {
				t.Fatalf("%s: marker %q, want %d bytes cut", rt, res.Logs[max(0, len(res.Logs)-60):], want)
			}
			res, err = r.Run(context.Background(), runner.CodeRequest{Runtime: rt, Code: "setResult('y'.repeat(" + strconv.Itoa(c.limit) + ")); while (true) {}", Timeout: 30 * time.Second}, nil)
			if err != nil || res.Output != "" || res.ExitCode != 1 || !strings.Contains(res.Error, "over the output cap of "+strconv.Itoa(c.limit)+" bytes") {
				t.Fatalf("%s: a result over the cap: %+v, %v", rt, res, err)
			}
		}
	}
}

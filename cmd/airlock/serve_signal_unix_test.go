//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServe starts `airlock serve` on a free loopback port (python and
// node without bubblewrap: the test is about the server's life) and
// returns its process, its base URL and its log so far.
func startServe(t *testing.T, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := command(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--workspace", t.TempDir(), "--insecure-no-bwrap"}, args...)...)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 600; i++ { // until it says where it listens
		if m := regexp.MustCompile(`"addr":"([^"]+)"`).FindStringSubmatch(logs.String()); m != nil {
			return cmd, "http://" + m[1], logs
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("serve did not start: %s", logs.String())
	return nil, "", nil
}

// On SIGTERM (a container's stop), serve stops taking connections, lets
// the execution in flight finish within --shutdown-grace, and exits 0;
// one that outlasts the grace is cancelled, and serve exits 0 all the same.
func TestServe_SIGTERM(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	for _, c := range []struct {
		name, grace, code string
		finishes          bool
	}{
		{"finishes", "2m", "import sys, time\nprint('started', file=sys.stderr, flush=True)\ntime.sleep(1)\nset_result('done')", true},
		{"cancelled", "1s", "import sys, time\nimport os\nprint('started', os.getpid(), file=sys.stderr, flush=True)\ntime.sleep(120)\nset_result('done')", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, url, logs := startServe(t, "--shutdown-grace", c.grace)
			type answer struct {
				body string
				err  error
			}
			answers := make(chan answer, 1)
			started := make(chan struct{})
			go func() { // streamed: the first line says the execution is under way
				body, _ := json.Marshal(map[string]any{"code": c.code, "runtime": "python", "timeout": 300})
				req, _ := http.NewRequest("POST", url+"/v1/execute", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/x-ndjson")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					close(started)
					answers <- answer{err: err}
					return
				}
				defer resp.Body.Close()
				r := bufio.NewReader(resp.Body)
				var all strings.Builder
				once := false
				for {
					line, err := r.ReadString('\n')
					all.WriteString(line)
					if !once && strings.Contains(line, `"text":"started`) {
						once = true
						close(started)
					}
					if err != nil {
						if !once {
							close(started)
						}
						answers <- answer{all.String(), nil}
						return
					}
				}
			}()
			<-started
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			a := <-answers
			if err != nil {
				t.Fatalf("exit: %v\n%s", err, logs.String())
			}
			if !strings.Contains(logs.String(), "shutting down") {
				t.Errorf("no shutdown in the log:\n%s", logs.String())
			}
			if c.finishes && (a.err != nil || !strings.Contains(a.body, `"type":"result"`) || !strings.Contains(a.body, `\"done\"`)) {
				t.Errorf("the execution in flight did not finish: %q %v", a.body, a.err)
			}
			if !c.finishes && (strings.Contains(a.body, `\"done\"`) || !strings.Contains(logs.String(), "grace period is over")) {
				t.Errorf("the execution past the grace was not cancelled: %q %v\n%s", a.body, a.err, logs.String())
			}
			// The cancelled execution's process is gone when serve has
			// exited: the shutdown waited for its cleanup.
			if !c.finishes {
				m := regexp.MustCompile(`started (\d+)`).FindStringSubmatch(a.body)
				if m == nil {
					t.Fatalf("no pid in %q", a.body)
				}
				pid, _ := strconv.Atoi(m[1])
				if syscall.Kill(pid, 0) == nil {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("the cancelled execution's python (pid %d) outlived serve", pid)
				}
			}
		})
	}
}

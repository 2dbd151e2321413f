package service_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/childtest"
	"github.com/airlockrun/airlock/service"
)

// newServer serves a service on loopback.
func newServer(t testing.TB, cfg service.Config) string {
	t.Helper()
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	cfg.Insecure = cfg.Insecure || os.Getenv("AIRLOCK_TEST_INSECURE") == "1"
	srv, err := service.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs.URL
}

// execute posts a request to /v1/execute and returns the response's body.
func execute(t testing.TB, url, runtime, code string) []byte {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"code": code, "runtime": runtime, "timeout": 120})
	resp, err := http.Post(url+"/v1/execute", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d: %.500s, %v", resp.StatusCode, body, err)
	}
	return body
}

// jsonLen is the length of s as the server writes it in JSON.
func jsonLen(s string) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return b.Len() - 1 // the newline
}

// The output cap of a javascript/typescript execution (JSMaxOutput, 32 KiB)
// had a side door: the logs and the result were capped, the error's text
// was not, and it was sent twice (in error and in scriptError's message),
// escaped as JSON: a 64 MiB heap gave one request a ~240 MB response.
// Escaping also multiplied what the caps let through (a control character
// takes six bytes), and each name a program declared brought its file's
// data again, as many times as it was declared. The error is now cut once,
// so that error and scriptError together fit the cap; each text (the
// result's JSON, the logs, the error) is cut at the cap counting a
// character at its escape's length when that is longer than two bytes
// (so that the response carries each in at most twice the cap); a file
// declared twice is returned once; the notes on declared files are within
// the caps too.
func TestJSResponseBounded(t *testing.T) {
	const limit = 32 << 10
	url := newServer(t, service.Config{})
	// Each case fills one text: within twice the cap, escaped, and 2 KiB
	// for the rest.
	const bound = 2*limit + 2<<10
	for _, tc := range []struct {
		name, code string
		bound      int // beyond bound
	}{
		{"error of control characters", `throw new Error("\u0001".repeat(24 << 20))`, 0},
		{"error of line separators", `throw "\u2028".repeat(8 << 20)`, 0},
		{"error with a huge name and stack", `const e = new Error("\u0001".repeat(1 << 20)); e.name = "\u0002".repeat(1 << 20); e.stack = "\u0003".repeat(1 << 20); throw e`, 0},
		{"error of quotes", `throw new Error('"'.repeat(24 << 20))`, 0},
		{"logs of control characters", `console.log("\u0001".repeat(8 << 20)); console.error("\u0002".repeat(1 << 20)); setResult(1)`, 0},
		{"logs of markup", `console.log("<&>".repeat(1 << 20)); setResult(1)`, 0},
		{"result of quotes", `setResult('"'.repeat(16000))`, 0},
		{"result of control characters", `setResult("\u0001".repeat(5000))`, 0},
		{"a file declared many times", `writeFile("a.txt", "z".repeat(1 << 20)); setResult(1, Array(100).fill("a.txt"))`, 1400 << 10},
		{"many missing files", `setResult(1, Array.from({ length: 20000 }, (_, i) => "missing-" + "\u0001".repeat(20) + i))`, 0},
		{"many bad names", `setResult(1, Array.from({ length: 20000 }, (_, i) => "../" + "\u0001".repeat(20) + i))`, 0},
	} {
		for _, rt := range []string{"javascript", "typescript"} {
			t.Run(rt+"/"+tc.name, func(t *testing.T) {
				body := execute(t, url, rt, tc.code)
				var resp struct {
					Output, Logs, Error string
					ScriptError         json.RawMessage `json:"scriptError"`
					Files               []json.RawMessage
				}
				if err := json.Unmarshal(body, &resp); err != nil {
					t.Fatalf("%v: %.300s", err, body)
				}
				t.Logf("%d bytes: output %d, logs %d, error %d, scriptError %d, %d files", len(body), len(resp.Output), len(resp.Logs), len(resp.Error), len(resp.ScriptError), len(resp.Files))
				if len(body) > bound+tc.bound {
					t.Errorf("the response is %d bytes, over %d", len(body), bound+tc.bound)
				}
				for _, f := range []struct{ name, text string }{{"output", resp.Output}, {"logs", resp.Logs}} {
					if n := jsonLen(f.text); n > 2*limit+100 {
						t.Errorf("the %s take %d bytes of the response", f.name, n)
					}
				}
				if resp.Error != "" {
					if n := jsonLen(resp.Error) + len(resp.ScriptError); n > 2*limit+1024 {
						t.Errorf("error and scriptError take %d bytes", n)
					}
				}
				if strings.HasPrefix(tc.name, "error") && (!strings.Contains(resp.Error, "truncated") || len(resp.ScriptError) == 0) {
					t.Errorf("error %.200q, scriptError %.200s: want them cut, with a marker", resp.Error, resp.ScriptError)
				}
				if tc.name == "a file declared many times" && len(resp.Files) != 1 {
					t.Errorf("%d files, want 1", len(resp.Files))
				}
			})
		}
	}
}

// Python and Node executions: their logs and result are capped at
// MaxOutput (512 KiB); their error is the end of the logs; each is within
// the cap as escaped in the response, and so are the notes on declared
// files.
func TestSubprocessResponseBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python and node")
	}
	const limit = 512 << 10
	url := newServer(t, service.Config{})
	const bound = 3*2*limit + 2<<10
	for _, tc := range []struct{ runtime, code string }{
		{"python", `import sys; sys.stdout.write("\x01" * (4 << 20)); sys.stdout.flush(); raise Exception("\x02" * (4 << 20))`},
		{"python", `open("a.txt", "w").write("z" * (1 << 20)); set_result(1, ["a.txt"] * 100)`},
		{"python", `set_result(1, ["missing-" + "\x01" * 20 + str(i) for i in range(20000)])`},
		{"node", `process.stdout.write("\u0001".repeat(4 << 20)); throw new Error("\u0002".repeat(4 << 20))`},
		{"node", `require("fs").writeFileSync("a.txt", "z".repeat(1 << 20)); setResult(1, Array(100).fill("a.txt"))`},
	} {
		bin := map[string]string{"python": "python3", "node": "node"}[tc.runtime]
		if _, err := exec.LookPath(bin); err != nil {
			t.Logf("%s is not installed", bin)
			continue
		}
		t.Run(tc.runtime, func(t *testing.T) {
			body := execute(t, url, tc.runtime, tc.code)
			var resp struct {
				Output, Logs, Error string
				Files               []json.RawMessage
			}
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatalf("%v: %.300s", err, body)
			}
			t.Logf("%d bytes: output %d, logs %d, error %d, %d files", len(body), len(resp.Output), len(resp.Logs), len(resp.Error), len(resp.Files))
			if len(body) > bound+1400<<10 {
				t.Errorf("the response is %d bytes, over %d", len(body), bound+1400<<10)
			}
			if len(resp.Files) > 1 {
				t.Errorf("%d files, want 1", len(resp.Files))
			}
		})
	}
}

// The server's memory for a request whose program throws an error as large
// as its heap allows: the error crossed whole, was copied and escaped
// twice, and the server's peak RSS grew by about 1 GiB for one request
// with a 64 MiB heap. Measured in a child process, the growth stays within
// the heap and a margin for the engine and Go.
func TestJSErrorServerMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the RSS of a child process")
	}
	if !childtest.InChild(t) {
		return
	}
	url := newServer(t, service.Config{})
	execute(t, url, "javascript", `setResult(1)`) // the engine's start-up
	runtime.GC()
	before := vmStatus(t, "VmRSS")
	resetHWM(t)
	for _, code := range []string{
		`throw new Error("\u0001".repeat(56 << 20))`,
		`throw "\u2028".repeat(24 << 20)`,
		`const e = new Error("m"); e.stack = "\u0001".repeat(56 << 20); throw e`,
	} {
		body := execute(t, url, "javascript", code)
		if len(body) > 200<<10 {
			t.Errorf("%d bytes of response", len(body))
		}
	}
	peak := vmStatus(t, "VmHWM")
	// The sandbox's heap (64 MiB) twice over, for its linear memory, and
	// 128 MiB for the engine's own and Go's garbage.
	const bound = 2*64<<20 + 128<<20
	t.Logf("RSS %d MiB before, peak %d MiB (growth %d MiB, bound %d MiB)", before>>20, peak>>20, (peak-before)>>20, bound>>20)
	if peak-before > bound {
		t.Errorf("the server's RSS grew by %d MiB, over %d MiB", (peak-before)>>20, bound>>20)
	}
}

// vmStatus reads a field of /proc/self/status, in bytes.
func vmStatus(t *testing.T, field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Skipf("no %s in /proc/self/status", field)
	return 0
}

// resetHWM resets the peak RSS the kernel reports (VmHWM) to the current
// RSS.
func resetHWM(t *testing.T) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
}

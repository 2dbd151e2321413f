package service_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/service"
)

// agent-sandbox's legacy python-runtime API, as its clients speak it (no
// token, the session named only by the router's X-Sandbox-ID, or by the
// server's default session): a file uploaded at a path is read by a
// command run in the jail, whose output, errors and exit code come back
// apart; list, exists and download see the workspace; the command runs in
// the workspace, and a path out of it is refused.
func TestLegacyRuntimeAPI(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bubblewrap: commands are refused")
	}
	for _, c := range []struct {
		name   string
		cfg    service.Config
		header map[string]string
	}{
		{"X-Sandbox-ID", service.Config{}, map[string]string{"X-Sandbox-ID": "claim-1"}},
		{"default session", service.Config{DefaultSession: "pod"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := newServer(t, c.cfg)
			send := func(req *http.Request) (int, string) {
				t.Helper()
				for k, v := range c.header {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			fw, _ := mw.CreateFormFile("file", "data/in.txt")
			io.WriteString(fw, "hello from the client\n")
			mw.Close()
			req, _ := http.NewRequest("POST", url+"/upload", &body)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			if code, out := send(req); code != 200 || !strings.Contains(out, "uploaded successfully") {
				t.Fatalf("upload: %d %s", code, out)
			}
			run := func(command string) map[string]any {
				t.Helper()
				b, _ := json.Marshal(map[string]string{"command": command})
				req, _ := http.NewRequest("POST", url+"/execute", bytes.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
				code, out := send(req)
				var m map[string]any
				if err := json.Unmarshal([]byte(out), &m); code != 200 || err != nil {
					t.Fatalf("execute %q: %d %s", command, code, out)
				}
				return m
			}
			m := run("cat data/in.txt; echo oops >&2; pwd; exit 3")
			if m["stdout"] != "hello from the client\n/workspace\n" || m["stderr"] != "oops\n" || m["exit_code"] != 3.0 {
				t.Errorf("command: %v", m)
			}
			if m := run("echo made > out.txt && ls data"); m["stdout"] != "in.txt\n" || m["exit_code"] != 0.0 {
				t.Errorf("second command: %v", m)
			}
			for path, want := range map[string]string{
				"/list/":               `"name":"out.txt"`,
				"/exists/out.txt":      `"exists":true`,
				"/exists/nothing":      `"exists":false`,
				"/download/out.txt":    "made\n",
				"/download/..%2Fx.txt": "Access denied",
			} {
				req, _ := http.NewRequest("GET", url+path, nil)
				if _, out := send(req); !strings.Contains(out, want) {
					t.Errorf("GET %s: %s, want %s", path, out, want)
				}
			}
		})
	}
	// With tokens, a session named by X-Sandbox-ID or given by default is
	// its first token's: another token gets 403 for its files and commands.
	owned := newServer(t, service.Config{Tokens: []string{"t1", "t2"}, DefaultSession: "pod"})
	for _, hdr := range []map[string]string{{"X-Sandbox-ID": "claim-9"}, {}} {
		do := func(token, method, path, body string) int {
			req, _ := http.NewRequest(method, owned+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if got := do("t1", "POST", "/execute", `{"command":"echo mine > f.txt"}`); got != 200 {
			t.Fatalf("%v: the owner's command: %d", hdr, got)
		}
		for _, c := range []struct{ method, path, body string }{{"GET", "/list/", ""}, {"GET", "/download/f.txt", ""}, {"POST", "/execute", `{"command":"cat f.txt"}`}} {
			if got := do("t2", c.method, c.path, c.body); got != 403 {
				t.Errorf("%v: another token's %s %s: %d, want 403", hdr, c.method, c.path, got)
			}
		}
	}
	// Without a session named or a default one, the files are refused; a
	// command runs in a workspace of its own.
	url := newServer(t, service.Config{})
	resp, err := http.Get(url + "/list/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("no session: %d", resp.StatusCode)
	}
	resp, err = http.Post(url+"/execute", "application/json", strings.NewReader(`{"command":"echo alone"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"stdout":"alone\n"`) {
		t.Errorf("a command without a session: %s", b)
	}
}

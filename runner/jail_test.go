package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// Issue 18 item 7: the jail shows nothing of the host. A 0600 file the
// test makes outside what the runtimes need, another session's file, the
// host's /etc and /root are not there; the code is not root; the workspace
// is at a fixed path, and /proc/1/cmdline names no host path of it (when
// there is a /proc: see TestJailMountTables).
func TestJailHidesHost(t *testing.T) {
	needJail(t)
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.txt")
	if err := os.WriteFile(secret, []byte("hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "other"), 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(ws, "other", "notes.txt")
	os.WriteFile(other, []byte("private"), 0o600)
	_, url := serve(t, service.Config{Workspace: ws})
	r := guarded(t, url)
	paths := []string{secret, secretDir, other, filepath.Join(ws, "other")}
	for _, p := range []string{"/etc/passwd", "/etc/hostname", "/home", "/var", "/boot"} {
		if _, err := os.Stat(p); err == nil { // only what the host has proves anything
			paths = append(paths, p)
		}
	}
	list, _ := json.Marshal(paths)
	code := map[string]string{
		"python": "import os, json\npaths = json.loads(" + quote(string(list)) + ")\nset_result({'seen': [p for p in paths if os.path.exists(p)], 'uid': os.getuid(), 'cwd': os.getcwd(), 'cmdline': open('/proc/1/cmdline').read() if os.path.exists('/proc/1/cmdline') else '', 'root': sorted(os.listdir('/'))})",
		"node":   "const fs = require('fs');\nconst paths = " + string(list) + ";\nsetResult({ seen: paths.filter((p) => fs.existsSync(p)), uid: process.getuid(), cwd: process.cwd(), cmdline: fs.existsSync('/proc/1/cmdline') ? fs.readFileSync('/proc/1/cmdline', 'utf8') : '', root: fs.readdirSync('/').sort() });",
	}
	for _, rt := range []string{"python", "node"} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, rt)
			res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: rt, SessionID: "mine", Code: code[rt]}, nil)
			if err != nil || res.Error != "" {
				t.Fatalf("%+v, %v", res, err)
			}
			var got struct {
				Seen    []string
				UID     int
				CWD     string
				Cmdline string
				Root    []string
			}
			if err := json.Unmarshal([]byte(res.Output), &got); err != nil {
				t.Fatal(err, res.Output)
			}
			if len(got.Seen) != 0 {
				t.Errorf("the jail shows host paths: %v", got.Seen)
			}
			if got.UID == 0 {
				t.Errorf("the code runs as root")
			}
			if got.CWD != "/workspace" {
				t.Errorf("workspace at %q", got.CWD)
			}
			if strings.Contains(got.Cmdline, ws) || strings.Contains(got.Cmdline, os.TempDir()+"/") {
				t.Errorf("/proc/1/cmdline names a host path: %q", got.Cmdline)
			}
			for _, e := range got.Root {
				switch e {
				case "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "run", "proc", "dev", "tmp", "workspace":
				case "root", "opt", "home": // only for an interpreter installed there (a pyenv under /root)
				default:
					t.Errorf("the jail's root has %q (%v)", e, got.Root)
				}
			}
		})
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

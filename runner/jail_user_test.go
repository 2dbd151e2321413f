//go:build unix

package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// Issue 18 item 3 (of the gaps): the code runs as an unprivileged user.
// Inside its user namespace it is 65534 (uid, gid, no groups) and cannot
// become root. When the test runs as root (the server then drops to
// Config.JailUID): a 0600 root file the test makes outside the workspace is
// not there, one it puts in the session's own workspace is there but cannot
// be read, and what the code writes belongs to 65534 on the host. When the
// test does not run as root: the 0600 file outside is not there, and the
// code's files belong to the server's user on the host (the namespace maps
// 65534 to it), which is what reads them back.
func TestJailUser(t *testing.T) {
	needJail(t)
	root := os.Geteuid() == 0
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	_, url := serve(t, service.Config{Workspace: ws})
	r := guarded(t, url)
	code := map[string]string{
		"python": "import os\nout = {'ids': [os.getuid(), os.geteuid(), os.getgid(), os.getegid()], 'groups': os.getgroups(), 'outside': os.path.exists(OUTSIDE)}\ntry:\n    os.setuid(0)\n    out['setuid'] = 'ok'\nexcept OSError as e:\n    out['setuid'] = e.strerror\ntry:\n    out['inside'] = open('root-only.txt').read()\nexcept OSError as e:\n    out['inside'] = e.strerror\nopen('mine.txt', 'w').write('x')\nset_result(out)",
		"node":   "const fs = require('fs');\nconst out = { ids: [process.getuid(), process.geteuid(), process.getgid(), process.getegid()], groups: process.getgroups(), outside: fs.existsSync(OUTSIDE) };\ntry { process.setuid(0); out.setuid = 'ok'; } catch (e) { out.setuid = e.code; }\ntry { out.inside = fs.readFileSync('root-only.txt', 'utf8'); } catch (e) { out.inside = e.code; }\nfs.writeFileSync('mine.txt', 'x');\nsetResult(out);",
	}
	for _, rt := range []string{"python", "node"} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, rt)
			session := "uid-" + rt
			ctx := context.Background()
			if res, err := r.Run(ctx, runner.CodeRequest{Runtime: rt, SessionID: session, Code: map[string]string{"python": "set_result(1)", "node": "setResult(1)"}[rt]}, nil); err != nil || res.Error != "" {
				t.Fatalf("the first run: %+v, %v", res, err)
			}
			dir := filepath.Join(ws, session)
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("the session's workspace: %v", err)
			}
			if err := os.WriteFile(filepath.Join(dir, "root-only.txt"), []byte("hunter2"), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(ctx, runner.CodeRequest{Runtime: rt, SessionID: session, Code: strings.ReplaceAll(code[rt], "OUTSIDE", quote(outside))}, nil)
			if err != nil || res.Error != "" {
				t.Fatalf("%+v, %v", res, err)
			}
			var got struct {
				IDs     []int
				Groups  []int
				Outside bool
				Setuid  string
				Inside  string
			}
			if err := json.Unmarshal([]byte(res.Output), &got); err != nil {
				t.Fatal(err, res.Output)
			}
			for _, id := range got.IDs {
				if id != 65534 {
					t.Errorf("the code's uid and gid are %v, want 65534", got.IDs)
					break
				}
			}
			if len(got.Groups) > 1 || len(got.Groups) == 1 && got.Groups[0] != 65534 {
				t.Errorf("the code's groups are %v", got.Groups)
			}
			if got.Setuid == "ok" {
				t.Errorf("the code became root with setuid(0)")
			}
			if got.Outside {
				t.Errorf("the code sees %s, a 0600 file outside the workspace", outside)
			}
			info, err := os.Stat(filepath.Join(dir, "mine.txt"))
			if err != nil {
				t.Fatal(err)
			}
			owner := info.Sys().(*syscall.Stat_t).Uid
			if root {
				if got.Inside == "hunter2" {
					t.Errorf("the code read a 0600 root file of its workspace")
				}
				if owner != 65534 {
					t.Errorf("the code's file belongs to uid %d on the host, want 65534", owner)
				}
			} else {
				if got.Inside != "hunter2" {
					t.Errorf("the code could not read a file of its workspace that the server's user owns: %s", got.Inside)
				}
				if owner != uint32(os.Geteuid()) {
					t.Errorf("the code's file belongs to uid %d on the host, want the server's %d", owner, os.Geteuid())
				}
			}
		})
	}
}

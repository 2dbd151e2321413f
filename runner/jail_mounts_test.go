package runner_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// Issue 18 item 1 (of the gaps): no mount table of the jail names the host
// workspace. Python and node read /proc/self/mountinfo and the other
// tables, and what else could name a path (the working directory, the
// code's file, the module paths, the environment, a stack): the host
// workspace root's path is nowhere. By default the jail has no /proc, as
// no bubblewrap option keeps a procfs from naming a bind mount's source;
// with Config.JailProc the tables are real (they list /workspace), which
// shows the probe reads what it should.
func TestJailMountTables(t *testing.T) {
	needJail(t)
	code := map[string]string{
		"python": "import os, sys, json\nseen = {}\nfor p in ['/proc/self/mountinfo', '/proc/self/mounts', '/proc/1/mountinfo', '/proc/thread-self/mountinfo', '/proc/mounts', '/proc/1/cmdline', '/proc/self/environ']:\n    try:\n        seen[p] = open(p, errors='replace').read()\n    except OSError as e:\n        seen[p] = None\nseen['where'] = json.dumps([os.getcwd(), __file__, sys.path, dict(os.environ), sorted(os.listdir('/'))])\ntry:\n    raise ValueError('x')\nexcept ValueError:\n    import traceback\n    seen['stack'] = traceback.format_exc()\nset_result(seen)",
		"node":   "const fs = require('fs');\nconst seen = {};\nfor (const p of ['/proc/self/mountinfo', '/proc/self/mounts', '/proc/1/mountinfo', '/proc/thread-self/mountinfo', '/proc/mounts', '/proc/1/cmdline', '/proc/self/environ']) {\n  try { seen[p] = fs.readFileSync(p, 'utf8'); } catch { seen[p] = null; }\n}\nseen.where = JSON.stringify([process.cwd(), __filename, __dirname, module.paths, require.resolve.paths('x'), process.env, fs.readdirSync('/').sort()]);\nseen.stack = new Error('x').stack;\nsetResult(seen);",
	}
	for _, proc := range []bool{false, true} {
		ws := t.TempDir()
		roots := []string{ws}
		if real, err := filepath.EvalSymlinks(ws); err == nil && real != ws {
			roots = append(roots, real)
		}
		_, url := serve(t, service.Config{Workspace: ws, JailProc: proc})
		r := guarded(t, url)
		for _, rt := range []string{"python", "node"} {
			t.Run(map[bool]string{false: "default", true: "JailProc"}[proc]+"/"+rt, func(t *testing.T) {
				needRuntime(t, rt)
				res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: rt, SessionID: "chat:42", Code: code[rt]}, nil)
				if err != nil || res.Error != "" {
					t.Fatalf("%+v, %v", res, err)
				}
				var seen map[string]*string
				if err := json.Unmarshal([]byte(res.Output), &seen); err != nil {
					t.Fatal(err, res.Output)
				}
				for what, text := range seen {
					if text == nil {
						continue
					}
					for _, root := range roots {
						if strings.Contains(*text, root) {
							if proc && strings.HasPrefix(what, "/proc/") && strings.Contains(what, "mount") {
								t.Logf("with JailProc, %s names the workspace root %s, as SECURITY.md says", what, root)
								continue
							}
							t.Errorf("%s names the host workspace root %s:\n%s", what, root, *text)
						}
					}
				}
				info := seen["/proc/self/mountinfo"]
				switch {
				case !proc && info != nil:
					t.Errorf("the jail has a /proc by default: %s", *info)
				case proc && (info == nil || !strings.Contains(*info, " /workspace ")):
					t.Errorf("with JailProc, /proc/self/mountinfo does not list /workspace: %v", info)
				}
			})
		}
	}
}

// What code commonly asks of /proc still answers in a jail without it:
// Node's process.memoryUsage (the prelude's fallback), process.execPath
// and a child process of it; Python's os.cpu_count and a subprocess.
func TestJailWithoutProc(t *testing.T) {
	needJail(t)
	_, url := serve(t, service.Config{})
	r := guarded(t, url)
	for rt, code := range map[string]string{
		"python": "import os, subprocess, sys\nout = subprocess.run([sys.executable, '-c', 'print(6 * 7)'], capture_output=True, text=True).stdout.strip()\nset_result([os.path.exists('/proc/self'), os.cpu_count() > 0, out])",
		"node":   "const m = process.memoryUsage();\nconst out = require('child_process').execFileSync(process.execPath, ['-e', 'console.log(6 * 7)'], { encoding: 'utf8' }).trim();\nsetResult([require('fs').existsSync('/proc/self'), m.rss > 0 && m.heapUsed > 0 && m.heapTotal >= m.heapUsed && process.memoryUsage.rss() > 0, out]);",
	} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, rt)
			res, err := r.Run(context.Background(), runner.CodeRequest{Runtime: rt, Code: code}, nil)
			if err != nil || res.Error != "" || strings.ReplaceAll(res.Output, " ", "") != `[false,true,"42"]` {
				t.Fatalf("%+v, %v", res, err)
			}
		})
	}
}

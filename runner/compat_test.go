package runner_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// Issue 18 items 1-3, 5 and 6: what the reference client relies on.
func TestReferenceCompat(t *testing.T) {
	ws := t.TempDir()
	_, url := serve(t, service.Config{Workspace: ws, MaxOutput: 64 << 10})
	r := guarded(t, url)
	ctx := context.Background()
	run := func(req runner.CodeRequest) runner.CodeResult {
		t.Helper()
		res, err := r.Run(ctx, req, tools)
		if err != nil {
			t.Fatalf("%s: %v", req.Code, err)
		}
		return res
	}
	t.Run("python", func(t *testing.T) {
		needRuntime(t, "python")
		// 1. Workspace modules import, and __file__ is the workspace's.
		res := run(runner.CodeRequest{SessionID: "chat:42", Code: "import os, helper\nset_result([helper.twice(21), os.path.dirname(__file__) == os.getcwd()])",
			Files: []runner.File{{Name: "helper.py", Data: []byte("def twice(x):\n    return 2 * x\n")}}})
		if res.Output != "[42, true]" || res.Error != "" {
			t.Fatalf("import: %+v", res)
		}
		// 2. No runtime means python; 3. "chat:42" kept its workspace.
		if res = run(runner.CodeRequest{SessionID: "chat:42", Code: "import helper\nset_result(helper.twice(1))"}); res.Output != "2" {
			t.Fatalf("omitted runtime / session: %+v", res)
		}
		// 6. set_result(None) is no output; a traceback names the code, not
		// the prelude, and the error carries it.
		if res = run(runner.CodeRequest{Code: "set_result(None)"}); res.Output != "" || res.Error != "" {
			t.Fatalf("set_result(None): %+v", res)
		}
		res = run(runner.CodeRequest{Code: "x = 1\nraise ValueError('bad value')"})
		if res.ExitCode != 1 || !strings.Contains(res.Error, "ValueError: bad value") || !strings.Contains(res.Error, "line 2") || strings.Contains(res.Error, "prelude") {
			t.Fatalf("traceback: %+v", res)
		}
		// 5. A result over the cap fails at once, not at the timeout.
		res = run(runner.CodeRequest{Code: "set_result('y' * (1 << 20))\nimport time\ntime.sleep(60)", Timeout: 60 * time.Second})
		if res.ExitCode == 0 || !strings.Contains(res.Error, "output cap") || strings.Contains(res.Error, "timed out") {
			t.Fatalf("big result: %+v", res)
		}
		// Writing past the cap without the prelude's check is stopped too.
		res = run(runner.CodeRequest{Code: "import os\nos.write(3, b'y' * (1 << 20))\nimport time\ntime.sleep(60)", Timeout: 60 * time.Second})
		if res.ExitCode == 0 || !strings.Contains(res.Error, "output cap") {
			t.Fatalf("raw pipe: %+v", res)
		}
		// 6. Files: base names; a missing one is a note, not an error; a name
		// given alone.
		res = run(runner.CodeRequest{Code: "import os\nos.makedirs('out', exist_ok=True)\nopen('out/r.csv', 'w').write('a,b')\nset_result(1, files=['out/r.csv', 'missing.txt'])"})
		if res.Error != "" || len(res.Files) != 1 || res.Files[0].Name != "r.csv" || res.Files[0].MIME != "text/csv" || !strings.Contains(res.Logs, "missing.txt") {
			t.Fatalf("files: %+v", res)
		}
	})
	t.Run("node", func(t *testing.T) {
		needRuntime(t, "node")
		res := run(runner.CodeRequest{Runtime: "node", SessionID: "node/session ✓", Code: "const h = require('./helper.js'); const path = require('path');\nsetResult([h.twice(21), __dirname === process.cwd(), path.basename(__filename)]);",
			Files: []runner.File{{Name: "helper.js", Data: []byte("exports.twice = (x) => 2 * x;\n")}}})
		if res.Output != `[42,true,"main.js"]` || res.Error != "" {
			t.Fatalf("require: %+v", res)
		}
		// A package in the workspace's node_modules.
		res = run(runner.CodeRequest{Runtime: "node", SessionID: "node/session ✓", Code: "setResult(require('tiny').hi);",
			Files: []runner.File{{Name: "node_modules/tiny/package.json", Data: []byte(`{"name":"tiny","main":"index.js"}`)}, {Name: "node_modules/tiny/index.js", Data: []byte("exports.hi = 'hello';")}}})
		if res.Output != `"hello"` {
			t.Fatalf("node_modules: %+v", res)
		}
		res = run(runner.CodeRequest{Runtime: "node", Code: "require('fs').writeFileSync('r.txt', 'x'); setResult(1, 'r.txt');"})
		if len(res.Files) != 1 || res.Files[0].Name != "r.txt" || string(res.Files[0].Data) != "x" {
			t.Fatalf("one file name: %+v", res)
		}
		res = run(runner.CodeRequest{Runtime: "node", Code: "const x = 1;\nnull.f();"})
		if res.ExitCode != 1 || !strings.Contains(res.Error, "TypeError") || !strings.Contains(res.Error, "main.js:2") || strings.Contains(res.Error, "node:internal") || strings.Contains(res.Error, "prelude") {
			t.Fatalf("stack: %+v", res)
		}
		res = run(runner.CodeRequest{Runtime: "node", Code: "setResult('y'.repeat(1 << 20)); await new Promise((r) => setTimeout(r, 60000));", Timeout: 60 * time.Second})
		if res.ExitCode == 0 || !strings.Contains(res.Error, "output cap") || strings.Contains(res.Error, "timed out") {
			t.Fatalf("big result: %+v", res)
		}
	})
	t.Run("javascript", func(t *testing.T) {
		res := run(runner.CodeRequest{Runtime: "javascript", Code: "writeFile('r.txt', 'x'); setResult(1, 'r.txt');"})
		if len(res.Files) != 1 || res.Files[0].Name != "r.txt" || res.Files[0].MIME != "text/plain" {
			t.Fatalf("one file name: %+v", res)
		}
	})
	// 3. Ids that cannot be directory names are hashed inside the root.
	for _, id := range []string{"../up", "/etc", "a/b", ".", "..", strings.Repeat("x", 300)} {
		res := run(runner.CodeRequest{Runtime: "javascript", SessionID: id, Code: "writeFile('f.txt', 'x'); setResult(1)"})
		if res.Error != "" {
			t.Fatalf("%q: %+v", id, res)
		}
	}
	entries, _ := os.ReadDir(ws)
	for _, e := range entries {
		if strings.Contains(e.Name(), "/") || e.Name() == ".." {
			t.Fatalf("a workspace named %q", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(ws), "up")); err == nil {
		t.Fatal("a session escaped the root")
	}
	// 6. /health answers any method; DELETE /workspace/ without an id is 400.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodHead} {
		req, _ := http.NewRequest(m, url+"/health", nil)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s /health: %v %v", m, resp, err)
		}
	}
	if status, m := post(t, http.MethodDelete, url+"/workspace/", "", ""); status != 400 || m["error"] != "session_id is required" {
		t.Fatalf("DELETE /workspace/: %d %v", status, m)
	}
}

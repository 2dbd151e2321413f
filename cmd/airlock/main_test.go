package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunExamples(t *testing.T) {
	code, out, errs := cli(t, "", "run", "../../examples/scripts/hello.ts")
	if code != 0 || out != "{ text: 'hello from the sandbox', words: 4 }\n" || errs != "[log] computing a greeting\n" {
		t.Fatalf("hello: %d %q %q", code, out, errs)
	}
	code, out, errs = cli(t, "", "run", "--input", `[{"id":1,"flagged":true},{"id":2}]`, "../../examples/scripts/report.js")
	if code != 0 || out != "{ scanned: 2 }\n" || errs != "[report] 1\n" {
		t.Fatalf("report: %d %q %q", code, out, errs)
	}
	code, _, out = cli(t, "", "run", "../../examples/scripts/error.ts")
	if code != 1 || !strings.Contains(out, "TypeError: order 2 has no total") || !strings.Contains(out, "at error.ts:6:15") ||
		!strings.Contains(out, "throw new TypeError(`order ${order.id} has no total`);") {
		t.Fatalf("error: %d %q", code, out)
	}
	code, _, out = cli(t, "", "run", "--timeout", "100ms", "../../examples/scripts/loop.js")
	if code != 1 || !strings.Contains(out, "terminated") || !strings.Contains(out, "stopped after 100ms (--timeout)") {
		t.Fatalf("loop: %d %q", code, out)
	}
}

func TestRunFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.ts")
	os.WriteFile(file, []byte(`export function add(a: number, b: number) { return a + b }`), 0o644)
	code, out, _ := cli(t, "", "run", "--fn", "add", "--args", "[2, 3]", file)
	if code != 0 || out != "5\n" {
		t.Fatalf("%d %q", code, out)
	}
	code, out, _ = cli(t, "", "run", "--json", "--fn", "add", "--args", "[2, 3]", file)
	var m map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m["status"] != "success" || m["result"] != 5.0 {
		t.Fatalf("json: %d %q", code, out)
	}
	code, _, out = cli(t, "const a = []; for (;;) a.push(new Array(1e4).fill(0));", "run", "--memory", "8MiB", "-")
	if code != 1 || !strings.HasPrefix(out, "memory:") || !strings.Contains(out, "memory limit of 8 MiB (--memory raises it)") {
		t.Fatalf("memory: %d %q", code, out)
	}
	code, _, out = cli(t, "", "run", "--fn", "nope", file)
	if code != 1 || !strings.HasPrefix(out, "link_error:") {
		t.Fatalf("link error: %d %q", code, out)
	}
}

func TestRunModules(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	os.WriteFile(filepath.Join(dir, "main.ts"), []byte(`import { twice } from './lib/math.ts'; export default twice(21)`), 0o644)
	os.WriteFile(filepath.Join(dir, "lib", "math.ts"), []byte(`export const twice = (n: number) => n * 2`), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(`not a module`), 0o644)
	code, out, _ := cli(t, "", "run", "--modules", dir, filepath.Join(dir, "main.ts"))
	if code != 0 || out != "42\n" {
		t.Fatalf("%d %q", code, out)
	}
	code, _, out = cli(t, "", "run", filepath.Join(dir, "main.ts"))
	if code != 1 || !strings.HasPrefix(out, "link_error:") {
		t.Fatalf("without --modules: %d %q", code, out)
	}
	if code, _, errOut := cli(t, "", "run", "--modules", filepath.Join(dir, "nope"), filepath.Join(dir, "main.ts")); code != 2 || errOut == "" {
		t.Fatalf("missing directory: %d %q", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{}, {"walk"}, {"run"}, {"run", "/no/such/file.ts"}, {"run", "--args", "{", "x.ts"},
		{"run", "--memory", "lots", "x.ts"}, {"run", "--lang", "cobol", "x.ts"}, {"run", "--bogus", "x.ts"},
	} {
		if code, _, errOut := cli(t, "", args...); code != 2 || errOut == "" {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
}

func TestRepl(t *testing.T) {
	in := strings.Join([]string{
		`const a = 20`,
		`let b = a + 1; console.log("b is", b)`,
		`return a + b + 1`,
		`while (true) {}`,
		`nope()`,
		`const s = await sleep(1); \`,
		`final_answer({a, b})`,
		`import x from "y"`,
		`await sleep(60000)`,
		`typeof a`,
		`return typeof now`,
		`.exit`,
		`return "not reached"`,
	}, "\n")
	code, out, _ := cli(t, in, "repl", "-max-ops", "100", "-timeout", "200ms")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"b is 21\n42\n",
		"ERR_MAX_OPS_EXCEEDED: Max operations exceeded (100)",
		"ERR_RUNTIME_EXCEPTION: Runtime exception: ReferenceError: nope is not defined\n  at line 1, column 1",
		"final answer: { a: 20, b: 21 }",
		"ERR_IMPORT_NOT_ALLOWED: Import not allowed: y",
		"ERR_EXEC_TIMEOUT: Execution timed out after 200ms\nthe sandbox was reset: its state is lost",
		"\n'undefined'\n", // after the reset
		"\n'function'\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not reached") {
		t.Error(".exit did not end the session")
	}
	if code, _, _ := cli(t, "", "repl", "-tools", "all"); code != 2 {
		t.Errorf("bad -tools: exit %d, want 2", code)
	}
}

// With standard input a pipe, the REPL runs one step per line and prints
// the values and console lines only: no banner, no prompts ("> " before
// each value was noise to whatever reads the output).
func TestRepl_Pipe(t *testing.T) {
	cmd := command(t, "repl")
	cmd.Stdin = strings.NewReader("const x = 2\nx * 21\nconsole.log('hi', x)\n\n'a'.repeat(x)\nlet o = {\n  k: x }\no\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if want := "42\nhi 2\n'aa'\n{ k: 2 }\n"; stdout.String() != want || stderr.String() != "" {
		t.Fatalf("stdout %q (want %q), stderr %q", stdout.String(), want, stderr.String())
	}
}

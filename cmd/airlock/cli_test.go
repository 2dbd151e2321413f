package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/childtest"
)

// exitCode runs cmd (this test binary as `airlock ...`) with its own
// standard streams, as a shell runs the command.
func exitCode(t *testing.T, cmd *exec.Cmd) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// Flags after the file work; the result goes to stdout and everything else
// to stderr, in the order it happened, so `airlock run x.ts --json | jq`
// works.
func TestCLI_FlagsAfterFileAndStreams(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.ts")
	os.WriteFile(file, []byte(`console.log("first"); report({n: 1}); console.warn("third"); export default {ok: true}`), 0o644)

	code, out, errs := exitCode(t, command(t, "run", file, "--json"))
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["status"] != "success" {
		t.Fatalf("--json after the file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if logs := res["logs"].([]any); len(logs) != 2 {
		t.Fatalf("logs: %v", logs)
	}

	code, out, errs = exitCode(t, command(t, "run", file, "--timeout", "5"))
	if code != 0 || out != "{ ok: true }\n" || errs != "[log] first\n[report] { n: 1 }\n[warn] third\n" {
		t.Fatalf("human: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	// A failure: exit 1, the error on stderr, stdout empty.
	os.WriteFile(file, []byte("console.log('before');\nthrow new Error('boom')\n"), 0o644)
	code, out, errs = exitCode(t, command(t, "run", "--lang", "ts", file))
	if code != 1 || out != "" || !strings.HasPrefix(errs, "[log] before\nerror: Error: boom\n") || !strings.Contains(errs, "throw new Error('boom')") {
		t.Fatalf("failure: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// With --json, stdout is still the JSON alone.
	code, out, _ = exitCode(t, command(t, "run", file, "--json"))
	if code != 1 || json.Unmarshal([]byte(out), &res) != nil || res["status"] != "error" {
		t.Fatalf("failure --json: exit %d, stdout %q", code, out)
	}

	// "--" ends the flags.
	os.WriteFile(filepath.Join(t.TempDir(), "x"), nil, 0o644)
	if code, _, errs := exitCode(t, command(t, "run", "--", "--json")); code != 2 || !strings.Contains(errs, "--json") {
		t.Fatalf("after --: exit %d, stderr %q", code, errs)
	}
}

// Usage errors name the problem and exit 2; -h and --help exit 0 with the
// help on stdout.
func TestCLI_UsageAndHelp(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.ts")
	os.WriteFile(file, []byte(`export default 1`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", file, "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"run", file, "--timeout", "5x"}, `"5x" is not a duration`},
		{[]string{"run", file, "--timeout", "1h5"}, `"1h5" has no unit`},
		{[]string{"run", file, file}, "too many arguments"},
		{[]string{"run"}, "missing argument"},
		{[]string{"hello.ts"}, "airlock run hello.ts"},
		{[]string{"mcp", "--timeout", "fast"}, `"fast" is not a duration`},
		{[]string{"repl", "extra"}, `unexpected argument "extra"`},
	} {
		code, out, errs := exitCode(t, command(t, c.args...))
		if code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errs, c.want)
		}
		if strings.Count(errs, c.want) != 1 {
			t.Errorf("%v: the problem not named once:\n%s", c.args, errs)
		}
		if strings.Count(errs, "\n") > 12 {
			t.Errorf("%v: the whole usage for one mistake:\n%s", c.args, errs)
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"run", "-h"}, {"run", file, "--help"}, {"agent", "-h"}, {"mcp", "--help"}, {"repl", "-h"}, {"serve", "-h"}} {
		code, out, errs := exitCode(t, command(t, args...))
		if code != 0 || !strings.Contains(out, "usage: airlock") || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// A bare number of seconds is a duration.
func TestCLI_BareSeconds(t *testing.T) {
	code, _, errs := cli(t, "for (;;) {}", "run", "-", "--timeout", "0.2")
	if code != 1 || !strings.Contains(errs, "stopped after 200ms (--timeout)") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// `airlock version` and `--version` print the module version of the build.
func TestCLI_Version(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information in this binary")
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := exitCode(t, command(t, args...))
		if code != 0 || !strings.HasPrefix(out, "airlock ") || !strings.Contains(out, bi.GoVersion) || strings.Count(out, "\n") != 1 {
			t.Fatalf("%v: exit %d, %q", args, code, out)
		}
		if v := bi.Main.Version; v != "" && !strings.Contains(out, v) {
			t.Fatalf("%v: %q lacks the module version %q", args, out, v)
		}
	}
}

func TestParseBytesAndMiB(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "64MiB": 64 << 20, "64M": 64 << 20, "64 MB": 64 << 20, "1GiB": 1 << 30, "512k": 512 << 10} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1", "99999999999GiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) succeeded", in)
		}
	}
	if mib(64<<20) != "64 MiB" || mib(3<<19) != "1.5 MiB" {
		t.Error(mib(64<<20), mib(3<<19))
	}
}

// The REPL reads on while the input is incomplete, as the engine's
// compiler says: it stopped at the end of the input. TypeScript is asked of
// esbuild.
func TestReplInput(t *testing.T) {
	for in, want := range map[string]bool{"q +": true, "function f() {": true, "`abc": true, "/* c": true, "[1,": true, "a + 1": false, "}": false, "q +\n1": false,
		"await foo(": true, "if (x) {\n  y()": true, "x })": false, "'a": false, "f('(')": false,
		"`a ${b}": true, "`a` + `": true, "`ok`": false, "x = `\\`": true, "import x from 'y'": false, "let = 1": false,
		"const xs: number[] = [": true, "function f(a: string) {": true, "let v: number = 1": false, "let v: = 1": false,
		"for (const x of xs) {\n  if (x) {": true, "/re": false, "return 1": false} {
		if incomplete(in) != want {
			t.Errorf("incomplete(%q) = %v", in, !want)
		}
	}
}

// TestReplInput_Deep: the REPL asks whether each line is complete before
// the executor sees it. A pasted line nesting 300,000 deep reached that parser
// unchecked and could take the REPL down with a fatal stack overflow; it now
// goes to the executor as it is, whose validation reports the depth.
func TestReplInput_Deep(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	for _, code := range []string{
		strings.Repeat("[", 300000),
		strings.Repeat("(", 300000) + strings.Repeat(")", 300000),
		"x = " + strings.Repeat("{a:", 300000),
	} {
		if incomplete(code) {
			t.Errorf("incomplete(%.10q…) = true; a line too deep to parse is submitted", code)
		}
	}
}

package mcp_test

import (
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/childtest"
	"github.com/airlockrun/airlock/internal/nesting/nestingtest"
	"github.com/airlockrun/airlock/mcp"
)

// MCP run_code, in both languages: every deep program is a link_error with
// the nesting bound's syntax error, and the server survives (the test runs
// in a child process) and still runs code.
func TestNestingRunCode(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	cs := client(t, newServer(t, mcp.Options{}))
	for _, c := range nestingtest.Deep(100_000) {
		for _, lang := range []string{"typescript", "javascript"} {
			r := runCode(t, cs, map[string]any{"code": c.Module, "language": lang})
			if !r.isError || r.structured["status"] != "link_error" ||
				!strings.Contains(c.Name, "-close") && !strings.Contains(r.text, "nests too deeply") {
				t.Errorf("%s (%s): %+v", c.Name, lang, r)
			}
		}
	}
	if r := runCode(t, cs, map[string]any{"code": "export default " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + ".length"}); r.isError || r.text != "1\n" {
		t.Fatalf("honest: %+v", r)
	}
}

// MCP run_code with the programs that hide a nest 400,000 levels deep
// behind a slash the bound used to read the wrong way
// (nestingtest.Hidden), which took the server down in esbuild: each is a
// link_error with the nesting bound's syntax error, in both languages, and
// the server (a child process of the test) survives and still runs code.
func TestNestingHiddenRunCode(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	cs := client(t, newServer(t, mcp.Options{}))
	for _, c := range nestingtest.Hidden(400_000) {
		for _, lang := range []string{"typescript", "javascript"} {
			r := runCode(t, cs, map[string]any{"code": c.Module, "language": lang})
			if !r.isError || r.structured["status"] != "link_error" || !strings.Contains(r.text, "nests too deeply") {
				t.Errorf("%s (%s): %.300v", c.Name, lang, r)
			}
		}
	}
	if r := runCode(t, cs, map[string]any{"code": "export default 6 * 7"}); r.isError || r.text != "42\n" {
		t.Fatalf("honest: %+v", r)
	}
}

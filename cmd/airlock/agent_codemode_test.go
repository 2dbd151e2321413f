package main

import (
	"strings"
	"testing"
)

// --mode codemode is seed 002's loop: a fresh sandbox per reply, the end
// at complete().
func TestAgent_CodeModeLoop(t *testing.T) {
	srv := model(t,
		"```javascript\nstore('n', [1, 2, 3].reduce((a, b) => a + b)); recall('n')\n```",
		"```javascript\ncomplete({ response: 'The sum is ' + recall('n') })\n```")
	t.Setenv("OPENAI_API_KEY", "k")
	code, out, errs := cli(t, "", "agent", "--mode", "codemode", "--base-url", srv.URL+"/v1", "sum 1 2 3")
	if code != 0 || !strings.Contains(out, "=== Result ===\n    6") || !strings.Contains(out, "Final answer: The sum is 6") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

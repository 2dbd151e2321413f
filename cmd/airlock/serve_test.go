package main

import (
	"strings"
	"testing"
)

// `airlock serve -h` shows every default, the workspace directory included.
func TestServeHelpShowsDefaults(t *testing.T) {
	_, errs, _ := cli(t, "", "serve", "-h")
	for _, want := range []string{`(default "127.0.0.1:9000")`, `airlock-sandbox")`, "(default 4)", "(default 1h0m0s)", "(default 524288)", "(default 32768)",
		`(default "33554432")`, "(default 8)", `(default "1073741824")`, "(default 10000)", "(default 0: in the server's process)", "(default 65534)", `(default "python3")`, `(default "node")`} {
		if !strings.Contains(errs, want) {
			t.Errorf("serve -h lacks %s:\n%s", want, errs)
		}
	}
}

// Beyond loopback without a token, serve refuses to start.
func TestServeRefusesOpenAddr(t *testing.T) {
	code, _, errs := cli(t, "", "serve", "--addr", "0.0.0.0:0", "--workspace", t.TempDir())
	if code == 0 || !strings.Contains(errs, "without a token") {
		t.Fatalf("%d %q", code, errs)
	}
}

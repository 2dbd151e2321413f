// Package integration_test holds Airlock's cross-cutting suites: the
// contracts of the specification (seed000_test.go: runCode; seed001_*:
// the executor's acceptance cases CF-01..CF-10 and its smoke test), the
// hostile programs (hostile_*, the string searches among them) and their
// fuzzer, the memory soak (soak_test.go, behind -soak), the worker-process
// suites (worker_*), the programs checked against Node 20
// (nodediff_test.go, nodeerrors_test.go, testdata/node*) and the corpus of
// scripts with the Result each gives (script_test.go, testdata/scripts,
// -update rewrites). They see Airlock as a user does, through its public
// API only: a test of one mechanism, which needs an internal hook, sits
// beside that mechanism's code instead.
package integration_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPublicAPIOnly: no suite here imports an internal package of Airlock,
// so that each one checks what a user can reach.
func TestPublicAPIOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files (%v)", err)
	}
	for _, f := range files {
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/airlockrun/airlock/internal/") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}

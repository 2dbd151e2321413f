package airlock_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportPolicy keeps the engine and the transpiler behind their
// packages, and the root package, the API, free of processes, pipes,
// shared memory and networking: worker-process mode's processes and
// messages are internal/worker's, the only package but internal/childtest
// that starts one. Only test files import internal/childtest. The root reaches the engine's
// values through internal/engine and internal/hostcall, never
// internal/wasmvm; package js, the values' public leaf, imports nothing of
// the module.
func TestImportPolicy(t *testing.T) {
	rules := []struct {
		imp     string
		allowed func(dir string) bool
	}{
		{"modernc.org/quickjs", func(dir string) bool { return false }},
		{"modernc.org/libquickjs", func(dir string) bool { return false }},
		// wazero runs small modules in stopcheck's tests only (an engine
		// other than the one the product runs, to check the instrumentation).
		{"github.com/tetratelabs/wazero", func(dir string) bool { return false }},
		{"github.com/evanw/esbuild/pkg/api", func(dir string) bool { return dir == "internal/source" }},
		// internal/childtest runs a test in a child process of the test
		// binary; only tests import it (the rule below).
		{"os/exec", func(dir string) bool {
			return dir != "." && (!strings.HasPrefix(dir, "internal/") || dir == "internal/childtest" || dir == "internal/worker")
		}},
		{"encoding/gob", func(dir string) bool { return dir != "." }},
		{"unsafe", func(dir string) bool { return dir != "." }},
		{"golang.org/x/sys/unix", func(dir string) bool { return dir != "." }},
		{"github.com/airlockrun/airlock/internal/childtest", func(dir string) bool { return false }},
		{"net", func(dir string) bool { return dir != "." }},
		{"github.com/airlockrun/airlock/internal/wasmvm", func(dir string) bool { return dir != "." }},
		{"net/http", func(dir string) bool { return dir != "." }},
	}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if dir == "js" && strings.HasPrefix(imp, "github.com/airlockrun/airlock") {
				t.Errorf("%s imports %s: package js is a leaf", path, imp)
			}
			for _, r := range rules {
				if imp == r.imp && !r.allowed(dir) {
					t.Errorf("%s imports %s", path, imp)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

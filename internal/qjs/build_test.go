package qjs

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildReproducible rebuilds the module with build.sh and compares its
// outputs with the committed ones byte for byte: the translation to Go
// (qjsgo/qjs.go), its identity (qjsgo/qjs_sum.go) and the data (qjs.data). It needs the toolchain
// (clang-19, wasm-ld-19, wasi-libc, libclang-rt-19-dev-wasm32) and the
// QuickJS source in QUICKJS_SRC (a git dir holding the pinned commit, or a
// source directory); without them it is skipped.
func TestBuildReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds QuickJS")
	}
	src := os.Getenv("QUICKJS_SRC")
	if src == "" {
		t.Skip("QUICKJS_SRC not set")
	}
	for _, tool := range []string{"clang-19", "wasm-ld-19"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	if _, err := os.Stat("/usr/lib/wasm32-wasi/libc.a"); err != nil {
		t.Skip("wasi-libc not installed")
	}
	dir := t.TempDir()
	cmd := exec.Command("./build.sh")
	cmd.Env = append(os.Environ(), "DATA="+filepath.Join(dir, "qjs.data"), "GOOUT="+filepath.Join(dir, "qjs.go"), "QUICKJS_SRC="+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, b)
	}
	for _, f := range []struct{ built, committed string }{
		{"qjs.data", "qjs.data"}, {"qjs.go", "qjsgo/qjs.go"}, {"qjs_sum.go", "qjsgo/qjs_sum.go"},
	} {
		got, err := os.ReadFile(filepath.Join(dir, f.built))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(f.committed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("rebuilt %s differs from the committed one: sha256 %x, committed %x (%d and %d bytes)",
				f.committed, sha256.Sum256(got), sha256.Sum256(want), len(got), len(want))
		}
	}
}

func ExampleDATA() {
	fmt.Println(len(DATA) > 0)
	// Output: true
}

// TestTranslationUnwatchedByRace: the race detector neither watches nor
// slows the translated module. Every method of the module is marked
// //go:norace and //go:nocheckptr (-race turns checkptr on), and no
// function keeps wasm2go's //go:nosplit: under checkptr a nosplit function
// is marked nocheckptr by the compiler and then never inlined, so the
// loads and stores, called instead of inlined and watched, made the guest
// ~5 times slower under -race than with them inlined into the marked
// methods (RATIONALE.md, "The engine as Go code: the default").
func TestTranslationUnwatchedByRace(t *testing.T) {
	src, err := os.ReadFile("qjsgo/qjs.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	methods := 0
	for i, l := range lines {
		switch {
		case l == "//go:nosplit":
			t.Fatalf("line %d: //go:nosplit (before %q)", i+1, lines[i+1])
		case strings.HasPrefix(l, "func (m *Module) "):
			methods++
			if i < 2 || lines[i-2] != "//go:norace" || lines[i-1] != "//go:nocheckptr" {
				t.Fatalf("line %d: %q is not marked //go:norace and //go:nocheckptr", i+1, l)
			}
		}
	}
	if methods < 1000 {
		t.Fatalf("%d methods of the module: is qjs.go the translation?", methods)
	}
}

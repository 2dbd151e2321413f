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

// TestBuildReproducible rebuilds the module with build.sh and compares it
// with the committed qjs.wasm and qjs.data, and its translation to Go with
// the committed qjsgo/qjs.go, byte for byte. It needs the toolchain
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
	out := filepath.Join(t.TempDir(), "qjs.wasm")
	goOut := filepath.Join(t.TempDir(), "qjs.go")
	committedGo, err := os.ReadFile(filepath.Join("qjsgo", "qjs.go"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("./build.sh")
	cmd.Env = append(os.Environ(), "OUT="+out, "GOOUT="+goOut, "QUICKJS_SRC="+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, b)
	}
	for _, f := range []struct {
		path, name string
		committed  []byte
	}{{out, "qjs.wasm", WASM}, {strings.TrimSuffix(out, ".wasm") + ".data", "qjs.data", DATA}, {goOut, "qjsgo/qjs.go", committedGo}} {
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.committed) {
			t.Errorf("rebuilt %s differs from the committed one: sha256 %x, committed %x (%d and %d bytes)",
				f.name, sha256.Sum256(got), sha256.Sum256(f.committed), len(got), len(f.committed))
		}
	}
}

func ExampleWASM() {
	fmt.Println(string(WASM[:4]) == "\x00asm", len(DATA) > 0)
	// Output: true true
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

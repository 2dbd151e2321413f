package runner_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// Issue 18 item 4, pip's success path: the test builds a wheel of its own,
// serves it from a PEP 503 simple index on 127.0.0.1, and the operator
// points the service's pip at that index (Config.PipIndexURL). The code
// installs it through install_package, imports it in the same run and in
// a later one, and the index saw pip's requests. An unknown package fails
// with pip's reason, at once.
func TestInstallPipIndex(t *testing.T) {
	needRuntime(t, "python")
	if out, err := exec.Command("python3", "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Skipf("pip is not installed for python3 (%v: %s): the install path cannot be tested", err, out)
	}
	whl, name := probeWheel(t)
	sum := sha256.Sum256(whl)
	var pages, downloads atomic.Int32
	index := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/airlock-probe-pkg/":
			pages.Add(1)
			fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"../../files/%s#sha256=%s\">%s</a></body></html>\n", name, hex.EncodeToString(sum[:]), name)
		case "/files/" + name:
			downloads.Add(1)
			w.Write(whl)
		default:
			http.NotFound(w, r)
		}
	}))
	defer index.Close()
	_, url := serve(t, service.Config{AllowInstall: true, InstallTimeout: 90 * time.Second, PipIndexURL: index.URL + "/simple/"})
	r := guarded(t, url)
	ctx := context.Background()
	res, err := r.Run(ctx, runner.CodeRequest{Runtime: "python", SessionID: "pip", Timeout: 100 * time.Second,
		Code: "install_package('airlock-probe-pkg==1.0')\nimport airlock_probe_pkg\nset_result([airlock_probe_pkg.hello(), airlock_probe_pkg.__file__])"}, nil)
	if err != nil || res.Error != "" || res.Output != `["hello from the wheel", "/workspace/.packages/airlock_probe_pkg/__init__.py"]` {
		t.Fatalf("%+v, %v", res, err)
	}
	if pages.Load() == 0 || downloads.Load() != 1 {
		t.Fatalf("the index served %d pages and %d downloads", pages.Load(), downloads.Load())
	}
	res, err = r.Run(ctx, runner.CodeRequest{Runtime: "python", SessionID: "pip", Code: "import airlock_probe_pkg\nset_result(airlock_probe_pkg.VALUE)"}, nil)
	if err != nil || res.Output != "42" {
		t.Fatalf("a later run: %+v, %v", res, err)
	}
	res, err = r.Run(ctx, runner.CodeRequest{Runtime: "python", SessionID: "pip", Timeout: 100 * time.Second,
		Code: "try:\n    install_package('airlock-not-in-the-index')\nexcept RuntimeError as e:\n    set_result(str(e))"}, nil)
	if err != nil || !strings.Contains(res.Output, `install_package(\"airlock-not-in-the-index\") failed`) || !strings.Contains(res.Output, "No matching distribution") {
		t.Fatalf("an unknown package: %+v, %v", res, err)
	}
	if _, err := service.New(service.Config{PipIndexURL: "file:///etc", Insecure: true}, nil); err == nil || !strings.Contains(err.Error(), "http") {
		t.Fatalf("a pip index that is not http(s): %v", err)
	}
}

// probeWheel builds a pure-Python wheel, airlock-probe-pkg 1.0, and gives
// its bytes and file name.
func probeWheel(t *testing.T) ([]byte, string) {
	t.Helper()
	const dist = "airlock_probe_pkg-1.0.dist-info/"
	files := []struct{ name, body string }{
		{"airlock_probe_pkg/__init__.py", "VALUE = 42\n\n\ndef hello():\n    return 'hello from the wheel'\n"},
		{dist + "METADATA", "Metadata-Version: 2.1\nName: airlock-probe-pkg\nVersion: 1.0\nSummary: a package for the tests\n"},
		{dist + "WHEEL", "Wheel-Version: 1.0\nGenerator: airlock-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{dist + "top_level.txt", "airlock_probe_pkg\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString(dist + "RECORD,,\n")
	w, err := zw.Create(dist + "RECORD")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), "airlock_probe_pkg-1.0-py3-none-any.whl"
}

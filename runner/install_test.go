package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// Issue 18 item 4: with installs enabled, the server installs a package
// outside the jail (which has no network) into the session's workspace,
// and the code, then later runs of the session, import it; a refused or
// failing install says why at once; with installs disabled, the error
// says so at once. The npm case needs the npm registry (this machine and
// CI reach it); here pip is tested on its failure against the default
// index, which must be an error that says why before the run's timeout
// (TestInstallPipIndex installs from an index of the test's own).
func TestInstall(t *testing.T) {
	_, url := serve(t, service.Config{AllowInstall: true, InstallTimeout: 90 * time.Second})
	r := guarded(t, url)
	ctx := context.Background()
	t.Run("node", func(t *testing.T) {
		needRuntime(t, "node")
		res, err := r.Run(ctx, runner.CodeRequest{Runtime: "node", SessionID: "npm", Timeout: 120 * time.Second,
			Code: "await installPackage('is-number@7.0.0'); const isNumber = require('is-number'); setResult([isNumber(5), isNumber('x')]);"}, nil)
		if err != nil || res.Output != "[true,false]" {
			t.Fatalf("%+v, %v", res, err)
		}
		res, err = r.Run(ctx, runner.CodeRequest{Runtime: "node", SessionID: "npm", Code: "setResult(require('is-number')(7));"}, nil)
		if err != nil || res.Output != "true" {
			t.Fatalf("a later run: %+v, %v", res, err)
		}
		for _, spec := range []string{"--registry=http://evil", "../x", "git+https://x/y.git", "a b"} {
			res, err = r.Run(ctx, runner.CodeRequest{Runtime: "node", Code: "let m; try { await installPackage(" + quote(spec) + ") } catch (e) { m = e.message } setResult(m);"}, nil)
			if err != nil || !strings.Contains(res.Output, "not a package name") {
				t.Fatalf("%s: %+v, %v", spec, res, err)
			}
		}
	})
	t.Run("python", func(t *testing.T) {
		needRuntime(t, "python")
		res, err := r.Run(ctx, runner.CodeRequest{Runtime: "python", Timeout: 120 * time.Second,
			Code: "try:\n    install_package('airlock-no-such-package-xyz')\n    set_result('installed?')\nexcept RuntimeError as e:\n    set_result(str(e))"}, nil)
		if err != nil || !strings.Contains(res.Output, "install_package(") || !strings.Contains(res.Output, "failed") {
			t.Fatalf("%+v, %v", res, err)
		}
		res, err = r.Run(ctx, runner.CodeRequest{Runtime: "python", Code: "try:\n    install_package('--index-url=http://evil x')\nexcept RuntimeError as e:\n    set_result(str(e))"}, nil)
		if err != nil || !strings.Contains(res.Output, "not a package name") {
			t.Fatalf("%+v, %v", res, err)
		}
	})
	_, off := serve(t, service.Config{})
	ro := guarded(t, off)
	for rt, code := range map[string]string{
		"python": "try:\n    install_package('x')\nexcept RuntimeError as e:\n    set_result(str(e))",
		"node":   "let m; try { await installPackage('x') } catch (e) { m = e.message } setResult(m);",
	} {
		needRuntime(t, rt)
		res, err := ro.Run(ctx, runner.CodeRequest{Runtime: rt, Code: code}, nil)
		if err != nil || !strings.Contains(res.Output, "disabled") || !strings.Contains(res.Output, "--allow-install") {
			t.Fatalf("%s disabled: %+v, %v", rt, res, err)
		}
	}
}

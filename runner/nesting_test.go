package runner_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/childtest"
	"github.com/airlockrun/airlock/internal/nesting/nestingtest"
	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// `airlock serve` with the typescript and javascript runtimes, through a
// real listener: every deep program is answered with the nesting bound's
// syntax error, the server survives (the test runs in a child process) and
// still runs an honest program; a request body nested a million levels deep
// is a 400 from the JSON decoder's own depth limit.
func TestNestingService(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	_, url := serve(t, service.Config{})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	ctx := context.Background()
	for _, c := range nestingtest.Deep(200_000) {
		for _, rt := range []string{"typescript", "javascript"} {
			res, err := r.Run(ctx, runner.CodeRequest{Runtime: rt, Code: c.Module}, nil)
			if err != nil {
				t.Fatalf("%s (%s): %v", c.Name, rt, err)
			}
			if res.ExitCode == 0 || !strings.Contains(c.Name, "-close") && !strings.Contains(res.Error, "nests too deeply") {
				t.Errorf("%s (%s): %+v", c.Name, rt, res)
			}
		}
	}
	res, err := r.Run(ctx, runner.CodeRequest{Runtime: "typescript", Code: "setResult(" + strings.Repeat("[", 100) + "1" + strings.Repeat("]", 100) + ")"}, nil)
	if err != nil || res.ExitCode != 0 || res.Output != strings.Repeat("[", 100)+"1"+strings.Repeat("]", 100) {
		t.Fatalf("honest: %+v, %v", res, err)
	}
	body := `{"runtime":"typescript","code":"1","x":` + strings.Repeat("[", 1_000_000)
	resp, err := http.Post(url+"/v1/execute", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "depth") {
		t.Fatalf("deep body: %d %s", resp.StatusCode, msg)
	}
}

// `airlock serve` with the typescript and javascript runtimes, with the
// programs that hide a nest 400,000 levels deep behind a slash the bound
// used to read the wrong way (nestingtest.Hidden): one request took the
// server down in esbuild; now each is answered with the nesting bound's
// syntax error, and the server (a child process of the test) survives and
// still runs code.
func TestNestingHiddenService(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	_, url := serve(t, service.Config{})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	ctx := context.Background()
	for _, c := range nestingtest.Hidden(400_000) {
		for _, rt := range []string{"typescript", "javascript"} {
			res, err := r.Run(ctx, runner.CodeRequest{Runtime: rt, Code: c.Module}, nil)
			if err != nil {
				t.Fatalf("%s (%s): %v", c.Name, rt, err)
			}
			if res.ExitCode == 0 || !strings.Contains(res.Error, "nests too deeply") {
				t.Errorf("%s (%s): %.300v", c.Name, rt, res)
			}
		}
	}
	res, err := r.Run(ctx, runner.CodeRequest{Runtime: "typescript", Code: "setResult(6 * 7)"}, nil)
	if err != nil || res.ExitCode != 0 || res.Output != "42" {
		t.Fatalf("honest: %+v, %v", res, err)
	}
}

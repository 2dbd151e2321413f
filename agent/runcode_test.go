package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/agent"
)

// runCode calls the run-code tool as a classic tool-calling model does.
func runCode(t *testing.T, tb *agent.Toolbox, input string) string {
	t.Helper()
	out, err := tb.Call(context.Background(), agent.RunCodeID, json.RawMessage(input))
	var rce *agent.RunCodeError
	if errors.As(err, &rce) {
		if rce.Execution.OK() || rce.Text != rce.Error() {
			t.Fatalf("run_code error %+v", rce)
		}
		return rce.Text
	}
	if err != nil {
		t.Fatal(err)
	}
	var text string
	if err := json.Unmarshal(out, &text); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return text
}

var millis = regexp.MustCompile(`\d+ms`)

// Seed 002 §7 and seed 003's result format: the sandbox of the run-code
// tool has the conversation's tools, the plugin functions and the helpers.
func TestRunCodeTool(t *testing.T) {
	base := agent.NewInterpreter(agent.Config{})
	store := openArtifacts(t)
	if err := agent.RegisterArtifacts(base, store); err != nil {
		t.Fatal(err)
	}
	tb := toolbox(t, weatherTool(0))
	if err := tb.Add(agent.RunCodeTool(base.Clone(), tb, agent.NewState())); err != nil {
		t.Fatal(err)
	}
	got := runCode(t, tb, `{"code": "console.log('cities', input.length);\nconst r = parallel(input.map(c => ({ tool: 'weather.get-weather', input: c })));\nstoreArtifact(r, 'temps');\nconsole.warn(typeof interpreterRunCode);\nr.map(x => x.temperature)", "input": [{"latitude": 10, "longitude": 0}, {"latitude": 20, "longitude": 0}]}`)
	want := "Execution completed successfully in Xms\n\n=== Result ===\n[ 11, 12 ]\n\n=== Console Output ===\ncities 2\n[warn] undefined"
	if millis.ReplaceAllString(got, "Xms") != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if list, _ := store.List(context.Background()); len(list) != 1 || *list[0].Description != "temps" {
		t.Fatalf("artifacts = %v", list)
	}

	got = runCode(t, tb, `{"code": "console.log('step 1');\nconst w = weatherGetWeather({ latitude: 100, longitude: 0 });"}`)
	want = "Execution failed after Xms\n\n=== Error ===\nError: latitude out of range\nat line 2, column 28: const w = weatherGetWeather({ latitude: 100, longitude: 0 });\n\n=== Console Output (before error) ===\nstep 1"
	if millis.ReplaceAllString(got, "Xms") != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}

	got = runCode(t, tb, `{"code": "while (true) {}", "timeout": 100}`)
	if !strings.Contains(got, "=== Error ===\nExecution timed out after 100ms\n") || !strings.Contains(got, "(no output)") {
		t.Fatalf("got:\n%s", got)
	}
	got = runCode(t, tb, `{"code": "complete({ response: 'hi' })"}`)
	if !strings.Contains(got, "=== Result ===\nundefined\n\n=== Output ===\nhi\n") {
		t.Fatalf("got:\n%s", got)
	}
	// The schema refuses what is not code.
	for _, bad := range []string{`{}`, `{"code": ""}`, `{"code": 1}`, `{"code": "1", "timeout": "fast"}`, `{"code": "1", "extra": 1}`} {
		if _, err := tb.Call(context.Background(), agent.RunCodeID, json.RawMessage(bad)); err == nil {
			t.Errorf("input %s accepted", bad)
		}
	}
	// Code cannot reach the run-code tool through parallel either.
	got = runCode(t, tb, `{"code": "parallel([{ tool: 'interpreter.run-code', input: { code: '1' } }])[0].error"}`)
	if !strings.Contains(got, "=== Result ===\nTool \"interpreter.run-code\" not found\n") {
		t.Fatalf("got:\n%s", got)
	}
}

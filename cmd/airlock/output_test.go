package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/airlockrun/airlock/agent"
	"github.com/airlockrun/airlock/internal/childtest"
)

// TestAgent_CyclicAnswer: a final answer with a cycle crashed `airlock
// agent` when it printed the answer (fmt.Sprint recursed without end), and
// its --json transcript failed to encode. Now the answer is shown as Node
// shows it, and the JSON has null where the cycle closes.
func TestAgent_CyclicAnswer(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	step := "```js\nconst o = { n: NaN, tree: { kids: [] } };\no.self = o;\no.tree.kids.push({ parent: o.tree });\nconsole.log(o);\nfinal_answer(o)\n```"
	const text = "<ref *1> { n: NaN, self: [Circular *1], tree: <ref *2> { kids: [ { parent: [Circular *2] } ] } }"
	t.Setenv("OPENAI_API_KEY", "k")
	code, out, errs := cli(t, "", "agent", "--base-url", model(t, step).URL+"/v1", "cycles")
	if code != 0 || !strings.Contains(out, "Final answer: "+text+"\n") || !strings.Contains(out, "Execution logs:\n    "+text) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = cli(t, "", "agent", "--json", "--base-url", model(t, step).URL+"/v1", "cycles")
	var tr struct{ FinalAnswer map[string]any }
	if code != 0 || json.Unmarshal([]byte(out), &tr) != nil || tr.FinalAnswer["self"] != nil || tr.FinalAnswer["tree"] == nil {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestAgent_MaxOutput: --max-output bounds each observation (code mode) and
// each tool result (classic mode, run_code's included).
func TestAgent_MaxOutput(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	flood := "console.log('FIRST' + 'x'.repeat(300_000) + 'LAST')"
	// The observation's logs end where the executor's own bound on logs
	// (ExecutorOptions.MaxLogBytes) cut them; the result of run_code
	// keeps the last line.
	check := func(name, got string, max int) {
		t.Helper()
		if n := utf8.RuneCountInString(got); n > max || !strings.Contains(got, " characters] ...\n") ||
			(name == "run_code result") != strings.Contains(got, "LAST") {
			t.Errorf("%s: %d characters (bound %d): %.200s", name, n, max, got)
		}
	}
	for _, c := range []struct {
		flag []string
		max  int
	}{{nil, agent.DefaultMaxOutput}, {[]string{"--max-output", "2000"}, 2000}} {
		args := append([]string{"agent", "--json", "--max-steps", "1", "--base-url", model(t, "```js\n"+flood+"\n```").URL + "/v1"}, c.flag...)
		_, out, errs := cli(t, "", append(args, "flood")...)
		var tr struct {
			Steps []struct {
				Observation string
				ToolCalls   []struct{ Result string }
			}
		}
		if err := json.Unmarshal([]byte(out), &tr); err != nil || len(tr.Steps) != 1 {
			t.Fatalf("%v\n%.500s\n%s", err, out, errs)
		}
		check("observation", tr.Steps[0].Observation, c.max)

		call, _ := json.Marshal(map[string]string{"code": flood})
		args = append([]string{"agent", "--json", "--mode", "classic", "--max-steps", "1", "--base-url", model(t, [2]string{"run_code", string(call)}).URL + "/v1"}, c.flag...)
		_, out, errs = cli(t, "", append(args, "flood")...)
		if err := json.Unmarshal([]byte(out), &tr); err != nil || len(tr.Steps) != 1 || len(tr.Steps[0].ToolCalls) != 1 {
			t.Fatalf("%v\n%.500s\n%s", err, out, errs)
		}
		check("run_code result", tr.Steps[0].ToolCalls[0].Result, c.max)
	}
	if code, _, _ := cli(t, "", "agent", "--max-output", "0", "x"); code != 2 {
		t.Errorf("--max-output 0: exit %d, want 2", code)
	}
}

// mcpCall runs `airlock mcp ARGS` through run, on pipes, and returns the
// result of one tools/call of run_code with code.
func mcpCall(t *testing.T, code string, args ...string) map[string]any {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), append([]string{"mcp"}, args...), inR, outW, &errb)
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	send := func(v any) {
		b, _ := json.Marshal(v)
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	read := func(id int) map[string]any {
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				t.Fatalf("%v; stderr: %s", err, errb.String())
			}
			var msg map[string]any
			if json.Unmarshal(line, &msg) == nil && msg["id"] == float64(id) {
				return msg
			}
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
	read(1)
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "run_code", "arguments": map[string]any{"code": code}}})
	res := read(2)
	inW.Close()
	go io.Copy(io.Discard, outR)
	if c := <-done; c != 0 {
		t.Errorf("exit %d: %s", c, errb.String())
	}
	r, _ := res["result"].(map[string]any)
	if r == nil {
		t.Fatalf("no result: %v", res)
	}
	return r
}

// TestMCP_MaxOutput: --max-output bounds run_code's text and structured
// content.
func TestMCP_MaxOutput(t *testing.T) {
	const flood = "console.log('FIRST' + 'x'.repeat(300_000) + 'LAST'); export default 1"
	for _, c := range []struct {
		flag []string
		max  int
	}{{nil, agent.DefaultMaxOutput}, {[]string{"--max-output", "2500"}, 2500}} {
		r := mcpCall(t, flood, c.flag...)
		text := r["content"].([]any)[0].(map[string]any)["text"].(string)
		if n := utf8.RuneCountInString(text); n > c.max || !strings.HasPrefix(text, "1\n[log] FIRST") || !strings.Contains(text, " characters] ...\n") {
			t.Errorf("text: %d characters (bound %d): %.200s", n, c.max, text)
		}
		b, _ := json.Marshal(r["structuredContent"])
		if len(b) > c.max || !strings.Contains(string(b), `"truncated"`) || !strings.Contains(string(b), `"result":1`) {
			t.Errorf("structured content: %d bytes (bound %d): %.300s", len(b), c.max, b)
		}
	}
	if code, _, _ := cli(t, "", "mcp", "--max-output", "0"); code != 2 {
		t.Errorf("--max-output 0: exit %d, want 2", code)
	}
}

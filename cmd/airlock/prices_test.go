package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// writeFile writes content to a file of its own and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The summary shows the cost of the run's tokens when the model is in the
// price table (--prices, else $AIRLOCK_PRICES), and no cost when it is not.
func TestAgentPrices(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("AIRLOCK_PRICES", "")
	table := writeFile(t, "prices.json", `{
		"gpt-test": {"input": 1000, "output": 2000},
		"other":    {"input": 1, "output": 1}
	}`)
	agentRun := func(modelName string, extra ...string) string {
		t.Helper()
		srv := gatedModel(t, &syncBuffer{}, []string{"", ""}, []any{
			"```js\nconsole.log(1)\n```<end_code>", "```js\nfinal_answer(2)\n```<end_code>"})
		args := append([]string{"agent", "--model", modelName, "--base-url", srv.URL + "/v1"}, extra...)
		code, out, errs := cli(t, "", append(args, "count")...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errs)
		}
		return out
	}
	// 14 input tokens at $1000 per million and 6 output tokens at $2000.
	const priced = "(2 steps, 20 tokens: 14 input, 6 output, cost $0.026, "
	if out := agentRun("gpt-test", "--prices", table); !strings.Contains(out, priced) {
		t.Errorf("with --prices:\n%s", out)
	}
	if out := agentRun("unlisted", "--prices", table); !strings.Contains(out, "(2 steps, 20 tokens: 14 input, 6 output, ") || strings.Contains(out, "cost") {
		t.Errorf("a model not in the table:\n%s", out)
	}
	if out := agentRun("gpt-test"); strings.Contains(out, "cost") {
		t.Errorf("no table:\n%s", out)
	}
	t.Setenv("AIRLOCK_PRICES", table)
	if out := agentRun("gpt-test"); !strings.Contains(out, priced) {
		t.Errorf("with $AIRLOCK_PRICES:\n%s", out)
	}
	// The flag wins over the variable.
	t.Setenv("AIRLOCK_PRICES", writeFile(t, "bad.json", "not json"))
	if out := agentRun("gpt-test", "--prices", table); !strings.Contains(out, priced) {
		t.Errorf("--prices over $AIRLOCK_PRICES:\n%s", out)
	}
}

// The costs of cheap runs keep their digits, and of dear ones their cents.
func TestFormatCost(t *testing.T) {
	for _, c := range []struct {
		cost float64
		want string
	}{{0, "$0"}, {0.026, "$0.026"}, {0.0000004, "under $0.000001"}, {0.1 + 0.2, "$0.3"}, {12.3456789, "$12.345679"}} {
		if got := formatCost(c.cost); got != c.want {
			t.Errorf("formatCost(%v) = %q, want %q", c.cost, got, c.want)
		}
	}
}

// A bad price table stops the command before any model call, with an error
// that names the file and the problem.
func TestAgentPrices_BadTable(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("AIRLOCK_PRICES", "")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(500)
	}))
	defer srv.Close()
	for _, c := range []struct{ name, content, want string }{
		{"syntax", "{\n  \"m\": {\"input\": 1, \"output\": 2},\n  \"n\": {\"input\": 1 \"output\": 2}\n}", "not valid JSON: line 3, column 20: invalid character"},
		{"array", `[{"model": "m", "input": 1, "output": 2}]`, `the table is a JSON object of models' prices in US dollars per million tokens, such as {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}`},
		{"unknown field", `{"m": {"input": 1, "outptu": 2}}`, `model "m": unknown field "outptu" (the fields are input and output)`},
		{"missing output", `{"m": {"input": 1}}`, `model "m": no "output" price`},
		{"missing both", `{"m": {}}`, `model "m": no "input" price`},
		{"not a number", `{"m": {"input": "0.15", "output": 2}}`, `model "m": "input" is not a number`},
		{"null", `{"m": {"input": null, "output": 2}}`, `model "m": "input" is not a number`},
		{"negative", `{"m": {"input": 1, "output": -2}}`, `model "m": the "output" price -2 is negative`},
		{"not an object", `{"m": 3}`, `model "m": the prices are not an object such as {"input": 0.15, "output": 0.6}`},
		{"empty name", `{"": {"input": 1, "output": 2}}`, `a model's name is empty`},
		{"too large", "{" + strings.Repeat(" ", 1<<20) + "}", "the file is larger than 1 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := writeFile(t, "prices.json", c.content)
			code, out, errs := cli(t, "", "agent", "--prices", file, "--base-url", srv.URL+"/v1", "count")
			if code != 2 || !strings.Contains(errs, "airlock agent: --prices "+file+": "+c.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant: %s", code, out, errs, c.want)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "nope.json")
	t.Setenv("AIRLOCK_PRICES", missing)
	code, _, errs := cli(t, "", "agent", "--base-url", srv.URL+"/v1", "count")
	if code != 2 || !strings.Contains(errs, "airlock agent: $AIRLOCK_PRICES "+missing+": ") || !strings.Contains(errs, "no such file or directory") {
		t.Errorf("missing file: exit %d: %s", code, errs)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d model calls with a bad price table", n)
	}
}

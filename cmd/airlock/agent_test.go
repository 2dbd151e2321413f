package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// model is a scripted OpenAI-compatible endpoint: each request gets the
// next reply, a text or one tool call ("name", "arguments").
func model(t *testing.T, replies ...any) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"no more replies"}}`)
			return
		}
		msg := map[string]any{"role": "assistant", "content": ""}
		switch r := replies[0].(type) {
		case string:
			msg["content"] = r
		case [2]string:
			msg["tool_calls"] = []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": r[0], "arguments": r[1]}}}
		}
		replies = replies[1:]
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "created": 0, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// notesAgent runs airlock agent on a directory with notes.txt, against a
// model that reads the notes in one step and answers in the next.
func notesAgent(t *testing.T) (code int, out, errs string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the answer is 42"), 0o644)
	srv := model(t,
		"Thought: read the notes.\n```js\nconst text = fsReadFile({ path: 'notes.txt' });\nconsole.log(text);\n```",
		"Thought: done.\n```js\nfinal_answer(Number(text.match(/\\d+/)[0]))\n```")
	t.Setenv("OPENAI_API_KEY", "k")
	return cli(t, "", "agent", "--base-url", srv.URL+"/v1", "--dir", dir, "What is the answer in notes.txt?")
}

func TestAgent_CodeMode(t *testing.T) {
	code, out, errs := notesAgent(t)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"━━ step 1 ━━", "Thought: read the notes.", "Execution logs:\n    the answer is 42", "━━ step 2 ━━", "Final answer: 42", "(2 steps, 20 tokens: 14 input, 6 output,"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestAgent_JSONAndMaxSteps(t *testing.T) {
	srv := model(t, "```js\nconsole.log(1)\n```", "```js\nconsole.log(2)\n```")
	t.Setenv("OPENAI_API_KEY", "k")
	code, out, _ := cli(t, "", "agent", "--base-url", srv.URL+"/v1", "--max-steps", "2", "--json", "count")
	var tr struct {
		Outcome string
		Steps   []struct{ Code, Observation string }
		Usage   struct{ TotalTokens int }
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code != 1 || tr.Outcome != "max_steps" || len(tr.Steps) != 2 || tr.Steps[1].Code != "console.log(2)" || tr.Usage.TotalTokens != 20 {
		t.Fatalf("exit %d transcript %+v", code, tr)
	}
}

func TestAgent_ClassicMode(t *testing.T) {
	srv := model(t, [2]string{"run_code", `{"code": "[1, 2, 3].map(x => x * 2)"}`}, "The doubles are 2, 4 and 6.")
	t.Setenv("OPENAI_API_KEY", "k")
	code, out, errs := cli(t, "", "agent", "--mode", "classic", "--base-url", srv.URL+"/v1", "double 1 2 3")
	if code != 0 || !strings.Contains(out, "→ run_code(") || !strings.Contains(out, "=== Result ===") || !strings.Contains(out, "Final answer: The doubles are 2, 4 and 6.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

func TestAgent_UsageErrors(t *testing.T) {
	for _, args := range [][]string{{"agent"}, {"agent", "--mode", "both", "x"}, {"agent", "--memory", "lots", "x"}, {"agent", "--dir", "/does/not/exist", "x"}} {
		if code, _, _ := cli(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// The file tools read under their directory only.
func TestFileTools_StayInTheDirectory(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "work")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("A"), 0o644)
	os.WriteFile(filepath.Join(base, "secret.txt"), []byte("S"), 0o644)
	os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(dir, "link.txt"))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tools := fileTools(root)
	call := func(i int, input string) (string, error) {
		out, err := tools[i].Handler(context.Background(), json.RawMessage(input))
		return fmt.Sprint(out), err
	}
	if out, err := call(0, `{"path": "sub/a.txt"}`); err != nil || out != "A" {
		t.Fatalf("%q, %v", out, err)
	}
	if out, err := call(0, `{"path": "/sub/a.txt"}`); err != nil || out != "A" {
		t.Fatalf("%q, %v", out, err)
	}
	for _, p := range []string{"../secret.txt", "link.txt", "sub/../../secret.txt", "/etc/passwd"} {
		if out, err := call(0, `{"path": "`+p+`"}`); err == nil || strings.Contains(err.Error(), base) {
			t.Errorf("read %s: %q, %v", p, out, err)
		}
	}
	if out, err := call(1, `{}`); err != nil || !strings.Contains(out, "sub") {
		t.Fatalf("list: %q, %v", out, err)
	}
	if _, err := call(1, `{"path": ".."}`); err == nil {
		t.Fatal("listed the parent directory")
	}
}

// The HTTP tool fetches from allowed hosts only, redirects included.
func TestHTTPTool_AllowList(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1), http.StatusFound)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	tool := httpGetTool(map[string]bool{u.Host: true}, nil)
	get := func(target string) (any, error) {
		return tool.Handler(context.Background(), json.RawMessage(`{"url": "`+target+`"}`))
	}
	out, err := get(srv.URL + "/hi")
	if err != nil || out.(getOut).Body != "hello" || out.(getOut).Status != 200 {
		t.Fatalf("%+v, %v", out, err)
	}
	for _, bad := range []string{strings.Replace(other.URL, "127.0.0.1", "localhost", 1), srv.URL + "/away", "file:///etc/passwd", "ftp://" + u.Host + "/"} {
		if out, err := get(bad); err == nil {
			t.Errorf("%s: fetched %+v", bad, out)
		}
	}
}

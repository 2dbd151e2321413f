package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a buffer written by the command and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// withUsage is a reply of gatedModel that reports its own token usage
// instead of 7 input and 3 output tokens.
type withUsage struct {
	reply         any
	input, output int
}

// gatedModel answers the i-th request with replies[i] only once seen
// contains gates[i]: the test sees what the command showed while the
// request was pending. A reply is a text, a tool call ([2]string{name,
// arguments}) or either withUsage.
func gatedModel(t *testing.T, seen *syncBuffer, gates []string, replies []any) *httptest.Server {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(replies) {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"no more replies"}}`)
			return
		}
		for !strings.Contains(seen.String(), gates[i]) {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		msg := map[string]any{"role": "assistant", "content": ""}
		reply, input, output := replies[i], 7, 3
		if u, ok := reply.(withUsage); ok {
			reply, input, output = u.reply, u.input, u.output
		}
		switch x := reply.(type) {
		case string:
			msg["content"] = x
		case [2]string:
			msg["tool_calls"] = []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": x[0], "arguments": x[1]}}}
		}
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "created": 0, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   map[string]any{"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The live indicator shows the model thinking before the step ends (the
// model answers only once it is shown), then the step's panel, plain off a
// terminal, and the summary.
func TestAgentDisplay_Indicator(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	seen := &syncBuffer{} // the command's stderr, where the indicator goes
	srv := gatedModel(t, seen, []string{"step 1 · thinking…", "step 2 · thinking…"}, []any{
		"Thought: count.\n```js\nconsole.log(1 + 1)\n```<end_code>", "```js\nfinal_answer(2)\n```<end_code>"})
	forceLive = true
	defer func() { forceLive = false }()
	out := &syncBuffer{}
	code := run(context.Background(), []string{"agent", "--base-url", srv.URL + "/v1", "count"}, strings.NewReader(""), out, seen)
	o := out.String()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, o, seen)
	}
	for _, want := range []string{"airlock agent model ", "endpoint " + srv.URL + "/v1", "tools: none", "━━ step 1 ━━", "Thought: count.",
		"  │ console.log(1 + 1)", "Execution logs:\n    2", "· 7 input tokens, 3 output tokens", "Final answer: 2", "(2 steps, 20 tokens: 14 input, 6 output,"} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	if strings.Contains(o, "\x1b[") || strings.Contains(o, "<end_code>") {
		t.Errorf("escape codes or the end marker off a terminal:\n%q", o)
	}
}

// The totals count the model calls that the code makes with llm().
func TestAgentDisplay_SubCallTokens(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	seen := &syncBuffer{}
	srv := gatedModel(t, seen, []string{"thinking…", "running code · llm() call…", ""}, []any{
		[2]string{"run_code", `{"code": "await llm('say hello')"}`}, "hello", "The model said hello."})
	forceLive = true
	defer func() { forceLive = false }()
	out := &syncBuffer{}
	code := run(context.Background(), []string{"agent", "--mode", "classic", "--base-url", srv.URL + "/v1", "greet"}, strings.NewReader(""), out, seen)
	if o := out.String(); code != 0 || !strings.Contains(o, "(2 steps, 30 tokens: 21 input, 9 output, 3 model calls with llm()'s,") {
		t.Fatalf("exit %d\n%s\n%s", code, o, seen)
	}
}

// A missing key and an endpoint's error answer are reported as such.
func TestAgentDisplay_Errors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	code, _, errs := cli(t, "", "agent", "hello")
	if code != 2 || !strings.Contains(errs, "no API key: set OPENAI_API_KEY") {
		t.Fatalf("exit %d: %q", code, errs)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: k***","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "k")
	code, out, _ := cli(t, "", "agent", "--base-url", srv.URL+"/v1", "hello")
	if code != 1 || !strings.Contains(out, "No answer: the endpoint answered POST "+srv.URL+"/v1/chat/completions with 401 Unauthorized: Incorrect API key provided: k***") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// When the steps run out, the model is asked once for a final answer.
func TestAgentDisplay_FinalAnswerAfterSteps(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	seen := &syncBuffer{}
	srv := gatedModel(t, seen, []string{"", "", "writing a final answer…"}, []any{
		"```js\nconst n = 1; console.log(n)\n```<end_code>", "```js\nconsole.log(n + 1)\n```<end_code>", "It counted to 2."})
	forceLive = true
	defer func() { forceLive = false }()
	out := &syncBuffer{}
	code := run(context.Background(), []string{"agent", "--max-steps", "2", "--base-url", srv.URL + "/v1", "count"}, strings.NewReader(""), out, seen)
	if o := out.String(); code != 0 || !strings.Contains(o, "(the 2 steps ran out: the model was asked once for a final answer from them; 7 input tokens, 3 output tokens)\n") ||
		!strings.Contains(o, "Final answer: It counted to 2.\n") {
		t.Fatalf("exit %d\n%s\n%s", code, o, seen)
	}
}

// The request for a final answer after the steps ran out is a model call
// like the others: its input and output tokens are in the summary's
// totals. (They were left out: the totals were the transcript's, which
// ends with the last step.)
func TestAgentDisplay_FinalAnswerTokens(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	srv := gatedModel(t, &syncBuffer{}, []string{"", "", ""}, []any{
		"```js\nconsole.log(1)\n```<end_code>", "```js\nconsole.log(2)\n```<end_code>",
		withUsage{"It counted to 2.", 1000, 200}})
	code, out, errs := cli(t, "", "agent", "--max-steps", "2", "--base-url", srv.URL+"/v1", "count")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{
		"(the 2 steps ran out: the model was asked once for a final answer from them; 1000 input tokens, 200 output tokens)\n",
		"Final answer: It counted to 2.\n",
		// 2 steps of 7 + 3 tokens, and the final answer's 1000 + 200.
		"(2 steps and a final-answer request, 1220 tokens: 1014 input, 206 output, ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

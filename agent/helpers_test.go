package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock/agent"
)

// weather is the seed's example tool, answering from a table.
type weatherIn struct {
	Latitude  float64 `json:"latitude" jsonschema:"degrees north"`
	Longitude float64 `json:"longitude" jsonschema:"degrees east"`
}

type weatherOut struct {
	Temperature float64 `json:"temperature"`
	Description string  `json:"description"`
}

func weatherTool(delay time.Duration) agent.Tool {
	return agent.NewTool("weather.get-weather", "Get current weather",
		func(ctx context.Context, in weatherIn) (weatherOut, error) {
			if delay > 0 {
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					return weatherOut{}, ctx.Err()
				}
			}
			if in.Latitude > 90 || in.Latitude < -90 {
				return weatherOut{}, errors.New("latitude out of range")
			}
			return weatherOut{Temperature: 10 + in.Latitude/10, Description: "cloudy"}, nil
		})
}

func todoTools() []agent.Tool {
	type createIn struct {
		Title string `json:"title"`
	}
	type item struct {
		ID    int    `json:"id"`
		Title string `json:"title"`
	}
	var mu sync.Mutex
	var items []item
	create := agent.NewTool("todo.create", "Create a todo item", func(_ context.Context, in createIn) (item, error) {
		mu.Lock()
		defer mu.Unlock()
		it := item{ID: len(items) + 1, Title: in.Title}
		items = append(items, it)
		return it, nil
	})
	list := agent.NewTool("todo.list", "List all todos", func(context.Context, struct{}) ([]item, error) {
		mu.Lock()
		defer mu.Unlock()
		return append([]item{}, items...), nil
	})
	return []agent.Tool{create, list}
}

// barrierTool is sync.barrier (syncBarrier in code), whose calls each wait
// until n of them are in flight, which they can only be if they run at
// once, and then return result (or the context's error, if it ends first).
func barrierTool(n int, result string) agent.Tool {
	var wg sync.WaitGroup
	wg.Add(n)
	allIn := make(chan struct{})
	go func() { wg.Wait(); close(allIn) }()
	return agent.Tool{ID: "sync.barrier", Handler: func(ctx context.Context, _ json.RawMessage) (any, error) {
		wg.Done()
		select {
		case <-allIn:
			return result, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
}

func toolbox(t testing.TB, tools ...agent.Tool) *agent.Toolbox {
	t.Helper()
	tb, err := agent.NewToolbox(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func execute(t *testing.T, it *agent.Interpreter, code string, opts agent.ExecuteOptions) *agent.Execution {
	t.Helper()
	return it.Execute(context.Background(), code, opts)
}

func wantOK(t *testing.T, e *agent.Execution) {
	t.Helper()
	if !e.OK() {
		b, _ := json.Marshal(e)
		t.Fatalf("execution failed: %s", b)
	}
}

func wantError(t *testing.T, e *agent.Execution, msg string) {
	t.Helper()
	if e.Error != msg {
		b, _ := json.Marshal(e)
		t.Fatalf("error = %q, want %q; execution: %s", e.Error, msg, b)
	}
}

// chatServer is an OpenAI-compatible chat completions endpoint that answers
// each request with answer(request). It records the requests.
type chatServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
}

// reply is one answer of the model: text, tool calls (name, arguments
// JSON), or an HTTP error status with text as its message.
type reply struct {
	text   string
	calls  [][2]string
	status int
}

func newChatServer(t testing.TB, answer func(req map[string]any) reply) *chatServer {
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(body, &req)
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		rep := answer(req)
		w.Header().Set("Content-Type", "application/json")
		if rep.status != 0 && rep.status != http.StatusOK {
			w.WriteHeader(rep.status)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"server_error"}}`, rep.text)
			return
		}
		msg := map[string]any{"role": "assistant", "content": rep.text}
		var calls []any
		for i, c := range rep.calls {
			calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
				"function": map[string]any{"name": c[0], "arguments": c[1]}})
		}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": req["model"],
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// text is a chat server's answer function that always says the same.
func text(s string) func(map[string]any) reply {
	return func(map[string]any) reply { return reply{text: s} }
}

func (s *chatServer) last() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

func (s *chatServer) completer() agent.Completer {
	return agent.NewOpenAI(agent.OpenAIConfig{APIKey: "test", BaseURL: s.URL + "/v1", Model: "test-model", MaxRetries: -1})
}

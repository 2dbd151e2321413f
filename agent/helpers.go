package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/airlockrun/airlock"
)

// execution is the host side of one Execute: the helpers' state.
type execution struct {
	it    *Interpreter
	tools *Toolbox
	state *State

	mu     sync.Mutex
	output []string
	done   bool
	logs   []airlock.Log
}

// globals are the sandbox's globals of an execution: the registered
// functions, the tools, the helpers and input.
func (x *execution) globals(input any) (map[string]any, error) {
	x.it.mu.RLock()
	g := make(map[string]any, len(x.it.functions)+16)
	for k, v := range x.it.functions {
		g[k] = v
	}
	x.it.mu.RUnlock()
	for _, t := range x.tools.Tools() {
		if t.ID == RunCodeID {
			continue // code does not run code
		}
		name := FunctionName(t.ID)
		if _, taken := g[name]; taken {
			return nil, fmt.Errorf("agent: tool %q and a registered function are both named %s", t.ID, name)
		}
		e := x.tools.lookup(t.ID)
		g[name] = airlock.JSONFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			return e.callArgs(ctx, args)
		})
	}
	g["parallel"] = airlock.JSONFunc(x.parallel)
	g["llm"] = airlock.JSONFunc(x.llm)
	g["llmJson"] = airlock.JSONFunc(x.llmJSON)
	g["complete"] = airlock.JSONFunc(x.complete)
	g["toolSchema"] = airlock.JSONFunc(x.toolSchema)
	g["store"] = airlock.JSONFunc(x.store)
	g["recall"] = airlock.JSONFunc(x.recall)
	g["output"] = func(args ...any) {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.output = append(x.output, airlock.Log{Args: args}.Message())
	}
	g["done"] = func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.done = true
	}
	g["log"] = func(args ...any) {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.logs = append(x.logs, airlock.Log{Level: airlock.LevelLog, Args: args, Time: time.Now()})
	}
	if input == nil {
		g["input"] = airlock.Undefined{}
	} else {
		g["input"] = input
	}
	return g, nil
}

// firstArg is the first element of the JSON text of an argument list, or
// nothing.
func firstArg(args json.RawMessage) json.RawMessage {
	var list []json.RawMessage
	if err := json.Unmarshal(args, &list); err != nil || len(list) == 0 {
		return nil
	}
	return list[0]
}

// stringArg is the first argument as a string.
func stringArg(args json.RawMessage) (string, bool) {
	var s string
	a := firstArg(args)
	if a == nil || json.Unmarshal(a, &s) != nil {
		return "", false
	}
	return s, true
}

var errParallelArg = errors.New("parallel() expects an array of {tool, input} objects")

type parallelCall struct {
	Tool  *string         `json:"tool"`
	Input json.RawMessage `json:"input"`
}

// parallel runs tool calls concurrently; each result slot holds the tool's
// result or {error}.
func (x *execution) parallel(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	a := bytes.TrimSpace(firstArg(args))
	if len(a) == 0 || a[0] != '[' {
		return nil, errParallelArg
	}
	var calls []parallelCall
	if err := json.Unmarshal(a, &calls); err != nil {
		return nil, errParallelArg
	}
	for _, c := range calls {
		if c.Tool == nil {
			return nil, errParallelArg
		}
	}
	limit := x.it.cfg.MaxParallel
	if limit <= 0 {
		limit = defaultMaxParallel
	}
	results := make([]json.RawMessage, len(calls))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var out json.RawMessage
			var err error
			if *c.Tool == RunCodeID || *c.Tool == FunctionName(RunCodeID) {
				err = notFound(*c.Tool)
			} else {
				out, err = x.tools.Call(ctx, *c.Tool, c.Input)
			}
			if err != nil {
				out, _ = json.Marshal(map[string]string{"error": err.Error()})
			}
			results[i] = out
		}()
	}
	wg.Wait()
	return json.Marshal(results)
}

func (x *execution) completer(fn string) (Completer, error) {
	if x.it.cfg.Completer == nil {
		return nil, fmt.Errorf("%s() is not available: no language model is configured", fn)
	}
	return x.it.cfg.Completer, nil
}

// llm asks the model for text.
func (x *execution) llm(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	prompt, ok := stringArg(args)
	if !ok {
		return nil, errors.New("llm() expects a prompt string")
	}
	c, err := x.completer("llm")
	if err != nil {
		return nil, err
	}
	text, err := c.Complete(ctx, CompletionRequest{Messages: []Message{{Role: "user", Content: prompt}}})
	if err != nil {
		return nil, fmt.Errorf("llm() failed: %v", err)
	}
	return json.Marshal(text)
}

// llmJSON asks the model for a JSON object; a reply that is not JSON comes
// back as the raw string.
func (x *execution) llmJSON(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	prompt, ok := stringArg(args)
	if !ok {
		return nil, errors.New("llmJson() expects a prompt string")
	}
	c, err := x.completer("llmJson")
	if err != nil {
		return nil, err
	}
	text, err := c.Complete(ctx, CompletionRequest{
		Messages: []Message{
			{Role: "system", Content: "Reply with one JSON object and nothing else."},
			{Role: "user", Content: prompt},
		},
		ResponseFormat: "json_object",
	})
	if err != nil {
		return nil, fmt.Errorf("llmJson() failed: %v", err)
	}
	if t := bytes.TrimSpace([]byte(text)); json.Valid(t) && len(t) > 0 {
		return t, nil
	}
	return json.Marshal(text)
}

var errCompleteArg = errors.New("complete() expects {response: string, data?, followUp?: string}")

// complete outputs the response (and the follow-up), keeps the data for
// recall("_lastData") and ends the turn, as done() does.
func (x *execution) complete(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var opts struct {
		Response *string         `json:"response"`
		Data     json.RawMessage `json:"data"`
		FollowUp *string         `json:"followUp"`
	}
	a := bytes.TrimSpace(firstArg(args))
	if len(a) == 0 || a[0] != '{' || json.Unmarshal(a, &opts) != nil || opts.Response == nil {
		return nil, errCompleteArg
	}
	text := *opts.Response
	if opts.FollowUp != nil && *opts.FollowUp != "" {
		text += "\n\n" + *opts.FollowUp
	}
	if opts.Data != nil {
		x.state.Set(LastDataKey, opts.Data)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.output = append(x.output, text)
	x.done = true
	return nil, nil
}

// toolSchema returns a tool's input schema.
func (x *execution) toolSchema(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	id, ok := stringArg(args)
	if !ok {
		return nil, errors.New("toolSchema() expects a tool ID string, such as \"weather.get-weather\"")
	}
	e := x.tools.lookup(id)
	if e == nil {
		return nil, notFound(id)
	}
	return e.schema, nil
}

// store keeps a value under a key, for recall() in this or a later
// execution that shares the state.
func (x *execution) store(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	var list []json.RawMessage
	var key string
	if json.Unmarshal(args, &list) != nil || len(list) == 0 || json.Unmarshal(list[0], &key) != nil || strings.TrimSpace(key) == "" {
		return nil, errors.New("store() expects a key string and a value")
	}
	v := json.RawMessage("null")
	if len(list) > 1 {
		v = list[1]
	}
	x.state.Set(key, v)
	return nil, nil
}

// recall returns what store() kept under a key, or undefined.
func (x *execution) recall(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
	key, ok := stringArg(args)
	if !ok {
		return nil, errors.New("recall() expects a key string")
	}
	v, _ := x.state.Get(key)
	return v, nil
}

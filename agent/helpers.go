package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/airlockrun/airlock/js"

	"github.com/airlockrun/airlock"
)

// execution is the host side of one Execute: the helpers' state.
type execution struct {
	it    *Interpreter
	tools *Toolbox
	state *State
	tr    *tracker
	async map[string]bool // the functions with a promise-returning twin

	throwLine, throwCol int // of the last throw statement that ran

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
		fn := toolFunc(x.tr, x.tools.lookup(t.ID))
		g[name] = airlock.JSONFunc(fn)
		g[asyncPrefix+name] = airlock.Async(airlock.JSONFunc(fn))
	}
	for name, fn := range map[string]func(context.Context, json.RawMessage) (json.RawMessage, error){
		"parallel": x.parallel, "llm": x.llm, "llmJson": x.llmJSON,
	} {
		g[name] = airlock.JSONFunc(fn)
		g[asyncPrefix+name] = airlock.Async(airlock.JSONFunc(fn))
	}
	x.async = map[string]bool{}
	for k := range g {
		if strings.HasPrefix(k, asyncPrefix) {
			x.async[strings.TrimPrefix(k, asyncPrefix)] = true
		}
	}
	g["complete"] = airlock.JSONFunc(x.complete)
	g["toolSchema"] = airlock.JSONFunc(x.toolSchema)
	g["store"] = airlock.JSONFunc(x.store)
	g["recall"] = airlock.JSONFunc(x.recall)
	g["output"] = func(args ...any) {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.output = append(x.output, airlock.Log{Args: args}.Message())
	}
	g[throwAtName] = func(line, col int) {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.throwLine, x.throwCol = line, col
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
		g["input"] = js.Undefined{}
	} else {
		g["input"] = input
	}
	return g, nil
}

// reset starts a CodeAgent step, whose sandbox keeps its functions from
// step to step: nothing given to output() or log() yet, not done.
func (x *execution) reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.output, x.done, x.logs, x.throwLine, x.throwCol = nil, false, nil, 0, 0
}

// take returns what a step gave output() (one line each), whether it
// called done() or complete(), and its log() calls.
func (x *execution) take() (string, bool, []airlock.Log) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return strings.Join(x.output, "\n"), x.done, x.logs
}

// thrownAt is the position of the last throw statement that ran.
func (x *execution) thrownAt() (int, int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.throwLine, x.throwCol
}

// asyncable reports whether a sandbox function has a promise-returning
// twin.
func (x *execution) asyncable(name string) bool { return x.async[name] }

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
				out, err = x.tr.callByID(ctx, x.tools, *c.Tool, c.Input)
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
	resp, err := x.tr.complete(ctx, c, CompletionRequest{Messages: []Message{{Role: "user", Content: prompt}}})
	if err != nil {
		return nil, fmt.Errorf("llm() failed: %v", err)
	}
	return json.Marshal(resp.Text)
}

// llmJSON asks the model for JSON: with a schema as the second argument,
// as structured output (response_format json_schema), else as a JSON
// object. A reply in a fenced code block is unwrapped; a reply that is not
// JSON comes back as the raw string.
func (x *execution) llmJSON(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var list []json.RawMessage
	var prompt string
	if json.Unmarshal(args, &list) != nil || len(list) == 0 || json.Unmarshal(list[0], &prompt) != nil {
		return nil, errors.New("llmJson() expects a prompt string and, optionally, a JSON Schema object")
	}
	req := CompletionRequest{
		Messages: []Message{
			{Role: "system", Content: "Reply with one JSON object and nothing else."},
			{Role: "user", Content: prompt},
		},
		ResponseFormat: "json_object",
	}
	if len(list) > 1 {
		schema := bytes.TrimSpace(list[1])
		switch {
		case string(schema) == "null":
		case len(schema) > 0 && schema[0] == '{':
			req.ResponseFormat, req.JSONSchema = "json_schema", schema
			req.Messages[0].Content = "Reply with JSON that satisfies this JSON Schema, and nothing else:\n" + string(schema)
		default:
			return nil, errors.New("llmJson() expects its schema as a JSON Schema object")
		}
	}
	c, err := x.completer("llmJson")
	if err != nil {
		return nil, err
	}
	resp, err := x.tr.complete(ctx, c, req)
	if err != nil {
		return nil, fmt.Errorf("llmJson() failed: %v", err)
	}
	if t := UnwrapJSON(resp.Text); t != nil {
		return t, nil
	}
	return json.Marshal(resp.Text)
}

// fencedJSON matches a reply that is one fenced code block.
var fencedJSON = regexp.MustCompile("(?s)^```[ \t]*(?:json|JSON|jsonc)?[ \t]*\r?\n(.*?)\r?\n?```$")

// UnwrapJSON returns the JSON text of a model's reply: the reply itself,
// or the content of the one fenced code block it is (```json … ```), or
// the first fenced block of a longer reply; nil if there is none.
func UnwrapJSON(reply string) json.RawMessage {
	t := strings.TrimSpace(reply)
	if t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	if m := fencedJSON.FindStringSubmatch(t); m != nil {
		if c := strings.TrimSpace(m[1]); c != "" && json.Valid([]byte(c)) {
			return json.RawMessage(c)
		}
	}
	for _, m := range codeBlockAny.FindAllStringSubmatch(t, -1) {
		if c := strings.TrimSpace(m[2]); c != "" && json.Valid([]byte(c)) {
			return json.RawMessage(c)
		}
	}
	return nil
}

// codeBlockAny matches a fenced block with any language tag.
var codeBlockAny = regexp.MustCompile("(?s)```[ \t]*([A-Za-z]*)[ \t]*\r?\n(.*?)```")

// toolFunc is a tool as a sandbox function: its call is governed and
// recorded by tr.
func toolFunc(tr *tracker, e *entry) func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return tr.callTool(ctx, e, firstArg(args), func(ctx context.Context) (json.RawMessage, error) {
			return e.callArgs(ctx, args)
		})
	}
}

// callByID calls a tool by ID or function name, governed and recorded.
func (t *tracker) callByID(ctx context.Context, tb *Toolbox, id string, input json.RawMessage) (json.RawMessage, error) {
	e := tb.lookup(id)
	if e == nil {
		return nil, notFound(id)
	}
	return t.callTool(ctx, e, input, func(ctx context.Context) (json.RawMessage, error) {
		return e.call(ctx, input)
	})
}

var errCompleteArg = errors.New("complete() expects {response: string, data?, followUp?: string}")

// complete outputs the response (and the follow-up), keeps the data for
// recall("_lastData") (without data, clears it) and ends the turn, as
// done() does.
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
	} else {
		x.state.delete(LastDataKey) // this turn's data, or none: not an earlier turn's
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

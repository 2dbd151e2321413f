package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/fetch"
)

// runJS runs javascript or typescript in process on the core sandbox, with
// the preludes' functions: callTool, callToolsParallel (both async),
// setResult, and readFile/writeFile on the workspace.
func (s *Server) runJS(ctx context.Context, req ExecuteRequest, rt string, wd *workdir, timeout time.Duration, dispatch Dispatcher) V1Response {
	var mu sync.Mutex
	var result json.RawMessage
	var declared []string
	var root *os.Root
	var rootErr error
	var rootOnce sync.Once
	openRoot := func() (*os.Root, error) { // the workspace, made on first use
		rootOnce.Do(func() {
			dir, err := wd.get()
			if err == nil {
				root, err = os.OpenRoot(dir)
			}
			rootErr = err
		})
		return root, rootErr
	}
	defer func() {
		if root != nil {
			root.Close()
		}
	}()
	// At most MaxCallsInFlight tool calls run at once; the others wait.
	slots := make(chan struct{}, s.cfg.MaxCallsInFlight)
	dispatch = limitCalls(slots, dispatch)
	callTool := func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		var list []json.RawMessage
		var name string
		if json.Unmarshal(args, &list) != nil || len(list) == 0 || json.Unmarshal(list[0], &name) != nil || name == "" {
			return nil, errors.New("callTool: the tool name must be a non-empty string")
		}
		var a json.RawMessage
		if len(list) > 1 {
			a = list[1]
		}
		return toolData(ctx, dispatch, name, a)
	}
	parallel := func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		var list []json.RawMessage
		var calls [][]json.RawMessage
		if json.Unmarshal(args, &list) != nil || len(list) == 0 || json.Unmarshal(list[0], &calls) != nil {
			return nil, errors.New("callToolsParallel expects an array of [name, args] pairs")
		}
		type call struct {
			name string
			args json.RawMessage
		}
		todo := make([]call, len(calls))
		for i, c := range calls {
			if len(c) == 0 || json.Unmarshal(c[0], &todo[i].name) != nil || todo[i].name == "" {
				return nil, errors.New("callToolsParallel expects an array of [name, args] pairs")
			}
			if len(c) > 1 {
				todo[i].args = c[1]
			}
		}
		// A few goroutines take the calls in turn, not one per call.
		out := make([]json.RawMessage, len(calls))
		errs := make([]error, len(calls))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(len(todo), s.cfg.MaxCallsInFlight) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1) - 1); i < len(todo); i = int(next.Add(1) - 1) {
					out[i], errs[i] = toolData(ctx, dispatch, todo[i].name, todo[i].args)
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
	setResult := func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		var list []json.RawMessage
		if json.Unmarshal(args, &list) != nil || len(list) == 0 {
			return nil, errors.New("setResult expects a value")
		}
		if n := capLen(string(list[0])); n > s.cfg.JSMaxOutput {
			return nil, errors.New(resultTooLarge(n, s.cfg.JSMaxOutput))
		}
		var files []string
		var one string
		if len(list) > 1 && json.Unmarshal(list[1], &one) == nil {
			files = []string{one} // setResult(data, "r.txt")
		} else if len(list) > 1 && string(list[1]) != "null" && json.Unmarshal(list[1], &files) != nil {
			return nil, errors.New("setResult: files must be a name or an array of names")
		}
		mu.Lock()
		result, declared = list[0], files
		mu.Unlock()
		return nil, nil
	}
	readFile := func(name string) (string, error) {
		n, err := cleanName(name)
		if err != nil {
			return "", err
		}
		root, err := openRoot()
		if err != nil {
			return "", err
		}
		b, err := readWorkspaceFile(root, n, s.cfg.MaxFileBytes)
		if err != nil {
			return "", fmt.Errorf("readFile %q: %v", name, strings.ReplaceAll(err.Error(), wd.dir, "."))
		}
		return string(b), nil
	}
	writeFile := func(name, text string) error {
		n, err := cleanName(name)
		if err != nil {
			return err
		}
		root, err := openRoot()
		if err != nil {
			return err
		}
		add, newEntries := int64(len(text)), 1
		if info, err := root.Lstat(n); err == nil {
			add, newEntries = add-info.Size(), 0 // replaced
		}
		if _, err := s.quota().room(wd.dir, add, newEntries); err != nil {
			return fmt.Errorf("writeFile %q: %w", name, err)
		}
		wd.wrote.Store(true)
		if err := writeWorkspaceFile(root, n, []byte(text), s.jail.user); err != nil {
			return fmt.Errorf("writeFile %q: %v", name, strings.ReplaceAll(err.Error(), wd.dir, "."))
		}
		return nil
	}
	lang, filename := airlock.TypeScript, "main.ts"
	if rt == "javascript" {
		lang, filename = airlock.JavaScript, "main.js"
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	js := s.jsRuntime()
	if js == nil {
		return V1Response{ExecuteResponse: ExecuteResponse{ExitCode: 1, Error: "the server is closed"}, Status: "error"}
	}
	var logLine func(airlock.Log)
	if req.Log != nil {
		// The lines of the logs the response will carry, as they are
		// written, within the same cap.
		lines := &lineSplitter{emit: req.Log}
		room := s.cfg.JSMaxOutput
		logLine = func(l airlock.Log) {
			if room <= 0 {
				return
			}
			text := logText(l)
			i, n, _ := capPrefix(text, room)
			room -= n
			if i < len(text) {
				room = 0
			}
			lines.Write([]byte(text[:i]))
		}
		defer lines.flush()
	}
	globals := map[string]any{
		"callTool":          airlock.Async(airlock.JSONFunc(callTool)),
		"callToolsParallel": airlock.Async(airlock.JSONFunc(parallel)),
		"setResult":         airlock.JSONFunc(setResult),
		"readFile":          readFile,
		"writeFile":         writeFile,
	}
	if s.cfg.Fetch != nil {
		fetcher := airlock.Fetch(*s.cfg.Fetch)
		globals["fetch"] = fetcher
		defer func() {
			for _, r := range fetcher.Records() {
				logFetch(s.log, fetch.Record(r))
			}
		}()
	}
	ex, err := js.Run(runCtx, req.Code, airlock.Options{Language: lang, Filename: filename, Log: logLine, Globals: globals})
	if err != nil {
		return V1Response{ExecuteResponse: ExecuteResponse{ExitCode: 1, Error: err.Error()}, Status: "error"}
	}
	res := ex.Wait()
	var resp V1Response
	resp.Status = string(res.Status)
	// The logs, the result's JSON and the error are each within the output
	// cap as capLen counts them; the error once for its two copies.
	var logs strings.Builder
	for _, l := range res.Logs {
		logs.WriteString(logText(l))
	}
	resp.Logs = capJSON(logs.String(), s.cfg.JSMaxOutput)
	mu.Lock()
	if result != nil {
		resp.Output = string(result)
	}
	files := declared
	mu.Unlock()
	switch {
	case res.Status == airlock.StatusSuccess:
	case res.Status == airlock.StatusTerminated && runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		resp.ExitCode, resp.Error = -1, fmt.Sprintf("execution timed out after %s", timeout)
	default:
		resp.ExitCode = 1
		resp.Error, resp.ScriptErr = capError(res.Error, s.cfg.JSMaxOutput)
	}
	if n := capLen(resp.Output); n > s.cfg.JSMaxOutput { // setResult refuses it; a guard
		resp.Output = ""
		if resp.Error == "" {
			resp.ExitCode, resp.Status, resp.Error = 1, "error", resultTooLarge(n, s.cfg.JSMaxOutput)
		}
	}
	if len(files) > 0 {
		if dir, err := wd.get(); err == nil {
			resp.Files = collectFiles(dir, files, s.cfg.MaxFileBytes, &resp.Error, &resp.Logs)
		}
	}
	return resp
}

// logText is a console call's line in the logs.
func logText(l airlock.Log) string {
	if l.Level == airlock.LevelLog || l.Level == airlock.LevelInfo {
		return l.Message() + "\n"
	}
	return fmt.Sprintf("[%s] %s\n", l.Level, l.Message())
}

// toolData calls a tool through the dispatcher; its data, a string, is
// parsed as JSON when it is JSON, as the preludes do.
func toolData(ctx context.Context, dispatch Dispatcher, name string, args json.RawMessage) (json.RawMessage, error) {
	data, err := dispatch(ctx, name, args)
	if err != nil {
		return nil, fmt.Errorf("Tool '%s' failed: %v", name, err)
	}
	if json.Valid([]byte(data)) && strings.TrimSpace(data) != "" {
		return json.RawMessage(data), nil
	}
	return json.Marshal(data)
}

// resultTooLarge is the error of a result over the output cap.
func resultTooLarge(n, limit int) string {
	return fmt.Sprintf("the result is %d bytes of JSON, over the output cap of %d bytes: return less, or write it to a file and declare the file", n, limit)
}

// limitCalls makes dispatch wait for one of slots (or the context's end).
func limitCalls(slots chan struct{}, dispatch Dispatcher) Dispatcher {
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		defer func() { <-slots }()
		return dispatch(ctx, name, args)
	}
}

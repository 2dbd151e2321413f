// Package runner is the Go client side of the sandbox service (seed 004):
// the CodeRunner interface, HTTPRunner for a remote `airlock serve`, and
// Local, which runs the same requests in process. A program switches
// between them by changing one line.
package runner

import (
	"context"
	"encoding/json"
	"time"
)

// CodeRunner runs code; dispatch answers the code's tool calls.
type CodeRunner interface {
	Run(ctx context.Context, req CodeRequest, dispatch DispatchFunc) (CodeResult, error)
}

// CodeRequest is code to run.
type CodeRequest struct {
	Code string
	// Runtime is "python", "node", "javascript" or "typescript"; "" means
	// python, as the reference client documents.
	Runtime string
	// SessionID names a workspace that persists across runs; "" means a
	// throwaway one.
	SessionID string
	// Timeout; 0 means the runner's (30 s by default), at most 300 s.
	Timeout time.Duration
	// Files are put in the workspace before the code runs.
	Files []File
	// Log, when set, is given each line of the code's output (without its
	// newline) as it is written, while the code runs; CodeResult.Logs has
	// them all at the end either way. HTTPRunner asks the service for a
	// stream (Accept: application/x-ndjson) and calls Log on the goroutine
	// of Run, so a slow Log makes the service drop lines for it, never
	// wait; Local calls it on the run's own goroutines, where the code
	// waits for it: return quickly. nil, the zero value, asks for no
	// stream.
	Log func(line string)
}

// CodeResult is what came of it.
type CodeResult struct {
	// Output is the JSON of the value the code gave set_result/setResult,
	// or "".
	Output string
	// Logs are what the code printed.
	Logs string
	// ExitCode is the process's, -1 on timeout.
	ExitCode int
	// Error says what failed, if anything did.
	Error string
	// Files are the files the code declared with set_result/setResult.
	Files []File
}

// File is a file in or out; a returned file over the size cap has Size set
// and no Data.
type File struct {
	Name string
	MIME string
	Data []byte
	Size int64
}

// ToolCall is a tool call the code made.
type ToolCall struct {
	ExecutionID string
	Name        string
	Args        json.RawMessage
}

// DispatchFunc runs a tool for the code and returns its result as text
// (JSON for structured data: the preludes parse it).
type DispatchFunc func(ctx context.Context, call ToolCall) (string, error)

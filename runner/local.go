package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"

	"github.com/airlockrun/airlock/service"
)

// Local runs requests in this process: javascript and typescript on the
// core sandbox, python and node as the service does (jailed subprocesses),
// with the same results as a remote service.
type Local struct {
	srv     *service.Server
	blocked map[string]bool
}

// NewLocal returns a local runner with the service's configuration (the
// zero Config is the defaults).
func NewLocal(cfg service.Config) (*Local, error) {
	srv, err := service.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, err
	}
	return &Local{srv: srv, blocked: map[string]bool{"execute_code": true}}, nil
}

// Close stops the local server's background work.
func (l *Local) Close() error { l.srv.Close(); return nil }

// Run runs the code in process.
func (l *Local) Run(ctx context.Context, req CodeRequest, dispatch DispatchFunc) (CodeResult, error) {
	files := make([]service.File, len(req.Files))
	for i, f := range req.Files {
		files[i] = service.File{Name: f.Name, Data: f.Data, MIME: f.MIME}
	}
	timeout := 0
	if req.Timeout > 0 {
		timeout = int(math.Ceil(req.Timeout.Seconds()))
	}
	resp, err := l.srv.Execute(ctx, service.ExecuteRequest{
		ExecutionID: "local", Code: req.Code, Runtime: req.Runtime, SessionID: req.SessionID, Timeout: timeout, Files: files, Log: req.Log,
	}, func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		if l.blocked[name] {
			return "", &blockedError{name}
		}
		if dispatch == nil {
			return "", errNoTools
		}
		return dispatch(ctx, ToolCall{ExecutionID: "local", Name: name, Args: args})
	})
	if err != nil {
		return CodeResult{}, err
	}
	res := CodeResult{Output: resp.Output, Logs: resp.Logs, ExitCode: resp.ExitCode, Error: resp.Error}
	for _, f := range resp.Files {
		size := f.Size
		if size == 0 {
			size = int64(len(f.Data))
		}
		res.Files = append(res.Files, File{Name: f.Name, MIME: f.MIME, Data: f.Data, Size: size})
	}
	return res, nil
}

var errNoTools = errors.New("no tools are available")

type blockedError struct{ name string }

func (e *blockedError) Error() string { return "code cannot call " + e.name }

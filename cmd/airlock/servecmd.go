package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/airlockrun/airlock/service"
)

func serveFlags(stderr io.Writer, env service.Config) *flag.FlagSet {
	fs := flag.NewFlagSet("airlock serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("addr", env.Addr, "listen address ($SANDBOX_ADDR; default :9000)")
	fs.String("workspace", env.Workspace, "root of the session workspaces ($SANDBOX_WORKSPACE)")
	fs.String("python", env.PythonBin, "Python binary ($SANDBOX_PYTHON_BIN; default python3)")
	fs.String("node", env.NodeBin, "Node.js binary ($SANDBOX_NODE_BIN; default node)")
	fs.Int("max-concurrent", env.MaxConcurrent, "executions at once; more get 503 ($SANDBOX_MAX_CONCURRENT; default 4)")
	fs.Duration("session-ttl", env.SessionTTL, "evict a workspace idle this long ($SANDBOX_SESSION_TTL; default 1h)")
	fs.Int("max-output", env.MaxOutput, "cap on an execution's logs and result, bytes ($SANDBOX_MAX_OUTPUT; default 524288)")
	fs.Int("js-max-output", env.JSMaxOutput, "cap on what a javascript/typescript execution returns (logs cut with a marker; a larger result fails), bytes ($SANDBOX_JS_MAX_OUTPUT; default 32768)")
	fs.String("workspace-quota", "", "bytes a session's workspace may hold ($SANDBOX_WORKSPACE_QUOTA; default 1GiB)")
	fs.Int("workspace-entries", 0, "files and directories a session's workspace may hold (default 10000)")
	fs.String("memory", "", "memory limit of an execution (default 512MiB for python/node, 64MiB for javascript)")
	fs.Bool("allow-install", false, "let code install packages (install_package / installPackage)")
	fs.Int("workers", 0, "run javascript and typescript in this many worker processes instead of the server's")
	fs.Bool("insecure-no-bwrap", false, "run python and node WITHOUT bubblewrap (the code can then read the machine and use the network)")
	return fs
}

// serveCommand runs `airlock serve`: the sandbox service, until interrupted.
func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	env, err := service.ConfigFromEnv()
	if err != nil {
		fmt.Fprintf(stderr, "airlock serve: %v\n", err)
		return 2
	}
	fl := serveFlags(stderr, env)
	if !parseArgs(fl, "usage: airlock serve [flags]", args, 0) {
		return 2
	}
	get := func(name string) flag.Getter { return fl.Lookup(name).Value.(flag.Getter) }
	cfg := service.Config{
		Addr:          get("addr").Get().(string),
		Workspace:     get("workspace").Get().(string),
		PythonBin:     get("python").Get().(string),
		NodeBin:       get("node").Get().(string),
		MaxConcurrent: get("max-concurrent").Get().(int),
		SessionTTL:    get("session-ttl").Get().(time.Duration),
		MaxOutput:     get("max-output").Get().(int),
		JSMaxOutput:   get("js-max-output").Get().(int),
		AllowInstall:  get("allow-install").Get().(bool),
		Insecure:      get("insecure-no-bwrap").Get().(bool),
		Workers:       get("workers").Get().(int),

		WorkspaceQuotaBytes: env.WorkspaceQuotaBytes,
		WorkspaceMaxEntries: get("workspace-entries").Get().(int),
	}
	if q := get("workspace-quota").Get().(string); q != "" {
		if cfg.WorkspaceQuotaBytes, err = parseBytes(q); err != nil {
			fmt.Fprintf(stderr, "airlock serve: --workspace-quota: %v\n", err)
			return 2
		}
	}
	if m := get("memory").Get().(string); m != "" {
		if cfg.MemoryLimitBytes, err = parseBytes(m); err != nil {
			fmt.Fprintf(stderr, "airlock serve: --memory: %v\n", err)
			return 2
		}
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	srv, err := service.New(cfg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "airlock serve: %v\n", err)
		return 1
	}
	defer srv.Close()
	addr := cfg.Addr
	if addr == "" {
		addr = ":9000"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "airlock serve: %v\n", err)
		return 1
	}
	logger.Info("serving", "addr", ln.Addr().String())
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// In-flight executions get until their own deadline, at most 5 minutes.
		logger.Info("shutting down: waiting for the executions in flight")
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Minute+10*time.Second)
		err = hs.Shutdown(shutdown)
		cancel()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "airlock serve: %v\n", err)
		return 1
	}
	return 0
}

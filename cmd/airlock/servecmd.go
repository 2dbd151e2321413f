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
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlockrun/airlock/service"
)

// serveFlags are the flags of `airlock serve`, each with its default (the
// environment's value when set): `airlock serve -h` shows them all.
func serveFlags(stderr io.Writer, env service.Config) *flag.FlagSet {
	d := env.WithDefaults()
	fs := flag.NewFlagSet("airlock serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("addr", d.Addr, "listen address ($SANDBOX_ADDR); beyond loopback it needs --token or --allow-no-token")
	fs.Func("token", "a bearer token clients must send; repeatable, each token owns the sessions it makes ($SANDBOX_TOKENS, comma-separated; prefer it or --token-file: flags show in ps)", func(string) error { return nil })
	fs.String("token-file", "", "a file of bearer tokens, one a line")
	fs.Bool("allow-no-token", false, "listen beyond loopback without a token (only where the network itself decides who connects)")
	fs.String("callback-hosts", strings.Join(d.CallbackHosts, ","), "hosts tool callbacks may go to besides loopback, comma-separated ($SANDBOX_CALLBACK_HOSTS)")
	fs.String("workspace", d.Workspace, "root of the session workspaces ($SANDBOX_WORKSPACE)")
	fs.String("python", d.PythonBin, "Python binary ($SANDBOX_PYTHON_BIN)")
	fs.String("node", d.NodeBin, "Node.js binary ($SANDBOX_NODE_BIN)")
	fs.Int("max-concurrent", d.MaxConcurrent, "executions at once; more get 503 ($SANDBOX_MAX_CONCURRENT)")
	durationFlag(fs, "session-ttl", d.SessionTTL, "evict a workspace idle this long ($SANDBOX_SESSION_TTL)")
	fs.Int("max-output", d.MaxOutput, "cap on a python/node execution's logs and result, bytes ($SANDBOX_MAX_OUTPUT)")
	fs.Int("js-max-output", d.JSMaxOutput, "cap on what a javascript/typescript execution returns (logs cut with a marker; a larger result fails), bytes ($SANDBOX_JS_MAX_OUTPUT)")
	fs.String("max-request", strconv.FormatInt(d.MaxRequestBytes, 10), "cap on a request body, bytes or 32MiB; more gets 413 ($SANDBOX_MAX_REQUEST)")
	fs.Int("max-calls-in-flight", d.MaxCallsInFlight, "tool callbacks of one execution at once (callToolsParallel included); more wait")
	fs.String("workspace-quota", strconv.FormatInt(d.WorkspaceQuotaBytes, 10), "bytes a session's workspace may hold, or 1GiB ($SANDBOX_WORKSPACE_QUOTA)")
	fs.Int("workspace-entries", d.WorkspaceMaxEntries, "files and directories a session's workspace may hold")
	fs.String("memory", "", "memory limit of an execution (default 512MiB for python/node, 64MiB for javascript)")
	fs.Bool("allow-install", false, "let python and node code install packages (install_package / installPackage): the server installs them outside the jail, wheels only for pip, no scripts for npm")
	durationFlag(fs, "install-timeout", d.InstallTimeout, "bound on one package install")
	fs.String("pip-index-url", d.PipIndexURL, "PEP 503 index pip installs from with --allow-install; default pip's own configuration ($SANDBOX_PIP_INDEX_URL)")
	fs.String("default-session", d.DefaultSession, "the session of a files or legacy request that names none (a pod serving one session); default: such a request is refused ($SANDBOX_DEFAULT_SESSION)")
	fs.Bool("jail-proc", d.JailProc, "mount /proc in the python/node jail; its mount tables then show the workspace's host path ($SANDBOX_JAIL_PROC)")
	fs.Int("workers", d.Workers, "worker processes for javascript and typescript (default 0: in the server's process)")
	fs.Int("jail-uid", d.JailUID, "the unprivileged user (and group) the jail runs as when the server is root")
	fs.Bool("insecure-no-bwrap", false, "run python and node WITHOUT bubblewrap (the code can then read the machine and use the network)")
	netFlags(fs) // javascript and typescript through fetch; python and node through the server's proxy
	durationFlag(fs, "shutdown-grace", 5*time.Minute+10*time.Second, "on SIGTERM or SIGINT, how long the executions in flight may take to finish before they are cancelled (set it below a pod's terminationGracePeriodSeconds)")
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
	var tokens []string
	fl.Lookup("token").Value = tokenList{&tokens}
	if _, code, ok := parseCommand(fl, "usage: airlock serve [flags]", args, 0, stdout); !ok {
		return code
	}
	get := func(name string) flag.Getter { return fl.Lookup(name).Value.(flag.Getter) }
	cfg := service.Config{
		Addr:             get("addr").Get().(string),
		Tokens:           env.Tokens,
		AllowNoToken:     get("allow-no-token").Get().(bool),
		CallbackHosts:    splitComma(get("callback-hosts").Get().(string)),
		Workspace:        get("workspace").Get().(string),
		PythonBin:        get("python").Get().(string),
		NodeBin:          get("node").Get().(string),
		MaxConcurrent:    get("max-concurrent").Get().(int),
		SessionTTL:       get("session-ttl").Get().(time.Duration),
		MaxOutput:        get("max-output").Get().(int),
		JSMaxOutput:      get("js-max-output").Get().(int),
		MaxCallsInFlight: get("max-calls-in-flight").Get().(int),
		AllowInstall:     get("allow-install").Get().(bool),
		InstallTimeout:   get("install-timeout").Get().(time.Duration),
		PipIndexURL:      get("pip-index-url").Get().(string),
		JailProc:         get("jail-proc").Get().(bool),
		DefaultSession:   get("default-session").Get().(string),
		Insecure:         get("insecure-no-bwrap").Get().(bool),
		Workers:          get("workers").Get().(int),
		JailUID:          get("jail-uid").Get().(int),

		WorkspaceMaxEntries: get("workspace-entries").Get().(int),
	}
	if len(tokens) > 0 {
		cfg.Tokens = tokens
	}
	if cfg.Fetch, err = policyFromFlags(fl); err != nil {
		fmt.Fprintf(stderr, "airlock serve: %v\n", err)
		return 2
	}
	if f := get("token-file").Get().(string); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "airlock serve: --token-file: %v\n", err)
			return 2
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				cfg.Tokens = append(cfg.Tokens, line)
			}
		}
	}
	for _, b := range []struct {
		flag string
		dst  *int64
	}{{"workspace-quota", &cfg.WorkspaceQuotaBytes}, {"max-request", &cfg.MaxRequestBytes}, {"memory", &cfg.MemoryLimitBytes}} {
		if v := get(b.flag).Get().(string); v != "" {
			if *b.dst, err = parseBytes(v); err != nil {
				fmt.Fprintf(stderr, "airlock serve: --%s: %v\n", b.flag, err)
				return 2
			}
		}
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	srv, err := service.New(cfg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "airlock serve: %v\n", err)
		return 1
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		fmt.Fprintf(stderr, "airlock serve: %v\n", err)
		return 1
	}
	logger.Info("serving", "addr", ln.Addr().String())
	// inflight counts the requests being served, so that a shutdown can
	// wait for the ones it cancelled to clean up (their process trees
	// killed, their private files removed).
	var inflight sync.WaitGroup
	handler := srv.Handler()
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		defer inflight.Done()
		handler.ServeHTTP(w, r)
	})}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// No new connection is accepted; the executions in flight get
		// until their own deadline, at most the grace period, and are
		// then cancelled (their connections closed: python's and node's
		// process trees are killed, javascript's sandboxes stopped).
		grace := flagDuration(fl, "shutdown-grace")
		logger.Info("shutting down: waiting for the executions in flight", "grace", grace.String())
		shutdown, cancel := context.WithTimeout(context.Background(), grace)
		err = hs.Shutdown(shutdown)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			logger.Warn("shutting down: the grace period is over, cancelling the executions in flight")
			hs.Close()
			srv.Close()
			cleaned := make(chan struct{})
			go func() { inflight.Wait(); close(cleaned) }()
			select {
			case <-cleaned:
			case <-time.After(10 * time.Second):
				logger.Warn("shutting down: executions still cleaning up after 10s; leaving them")
			}
			err = nil
		}
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "airlock serve: %v\n", err)
		return 1
	}
	return 0
}

// tokenList collects repeated --token flags.
type tokenList struct{ dst *[]string }

func (l tokenList) String() string { return "" }
func (l tokenList) Set(v string) error {
	if v == "" {
		return errors.New("an empty token")
	}
	*l.dst = append(*l.dst, v)
	return nil
}
func (l tokenList) Get() any { return *l.dst }

func splitComma(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

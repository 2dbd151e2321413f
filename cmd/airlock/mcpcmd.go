package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock/agent"
	"github.com/airlockrun/airlock/mcp"
)

func mcpFlags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("airlock mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("http", "", "serve streamable HTTP on this address (such as 127.0.0.1:8931) instead of stdio")
	fs.String("config", "", `proxy the MCP servers listed in this file ({"mcpServers": {...}}) into the sandbox`)
	fs.String("memory", "64MiB", "memory limit of a program")
	durationFlag(fs, "timeout", 30*time.Second, "time limit of a program that sets no timeout_ms")
	durationFlag(fs, "max-timeout", 5*time.Minute, "the largest timeout_ms a program may ask for")
	durationFlag(fs, "connect-timeout", 30*time.Second, "bound on starting or reaching an upstream server and its answer to initialize; each is connected on its own, in the background, and retried")
	durationFlag(fs, "list-timeout", 30*time.Second, "bound on an upstream server's answer to tools/list")
	durationFlag(fs, "call-timeout", time.Minute, "bound on one call of an upstream tool (a program's own limit bounds it too); a command that has not read our message for this long is restarted")
	durationFlag(fs, "first-wait", 10*time.Second, "how long a program waits for the upstream servers it names while they are on their first attempt to connect (0: no wait)")
	fs.Int("workers", 0, "run the programs in this many worker processes instead of the server's")
	fs.Int("max-output", agent.DefaultMaxOutput, "characters of run_code's text and of its structured content; a longer text keeps its head and tail around a marker (negative: no bound)")
	netFlags(fs)
	return fs
}

// mcpCommand runs `airlock mcp`: the MCP server on stdio or HTTP.
func mcpCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := mcpFlags(stderr)
	if _, code, ok := parseCommand(fl, "usage: airlock mcp [--http ADDR] [--config FILE] [flags]", args, 0, stdout); !ok {
		return code
	}
	get := func(name string) string { return fl.Lookup(name).Value.String() }
	memory, err := parseBytes(get("memory"))
	if err != nil {
		fmt.Fprintf(stderr, "airlock mcp: --memory: %v\n", err)
		return 2
	}
	timeout := flagDuration(fl, "timeout")
	maxTimeout := flagDuration(fl, "max-timeout")
	workers, _ := strconv.Atoi(get("workers"))
	maxOutput, _ := strconv.Atoi(get("max-output"))
	if maxOutput == 0 {
		fmt.Fprintln(stderr, "airlock mcp: --max-output must not be 0")
		return 2
	}
	opts := mcp.Options{MemoryLimitBytes: memory, Timeout: timeout, MaxTimeout: maxTimeout, Workers: workers, MaxOutput: maxOutput,
		ConnectTimeout: flagDuration(fl, "connect-timeout"), ListTimeout: flagDuration(fl, "list-timeout"), CallTimeout: flagDuration(fl, "call-timeout"),
		FirstWait: flagDuration(fl, "first-wait"), Version: version()}
	if path := get("config"); path != "" {
		if opts.Upstreams, err = mcp.LoadConfig(path); err != nil {
			fmt.Fprintf(stderr, "airlock mcp: --config: %v\n", err)
			return 2
		}
	}
	for _, name := range []string{"connect-timeout", "list-timeout", "call-timeout"} {
		if flagDuration(fl, name) <= 0 {
			fmt.Fprintf(stderr, "airlock mcp: --%s must be positive\n", name)
			return 2
		}
	}
	if opts.FirstWait == 0 {
		opts.FirstWait = -1 // --first-wait 0: no wait
	}
	if opts.Fetch, err = policyFromFlags(fl); err != nil {
		fmt.Fprintf(stderr, "airlock mcp: %v\n", err)
		return 2
	}
	s, err := mcp.NewServer(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "airlock mcp: %v\n", err)
		return 2
	}
	defer s.Close()
	go func() {
		// The server answers at once; the upstreams come as they connect.
		if s.Ready(ctx) == nil {
			for _, f := range s.Failures() {
				fmt.Fprintf(stderr, "airlock mcp: upstream %v (retried; the others work; list_apis shows the state)\n", f)
			}
		}
	}()
	addr := get("http")
	if addr == "" {
		err = s.SDK().Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	} else {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			fmt.Fprintf(stderr, "airlock mcp: serving streamable HTTP on http://%s\n", ln.Addr())
			err = serveHTTP(ctx, ln, s)
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "airlock mcp: %v\n", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves the MCP server's streamable HTTP endpoint on ln until
// ctx ends.
func serveHTTP(ctx context.Context, ln net.Listener, s *mcp.Server) error {
	srv := &http.Server{Handler: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.SDK() }, nil)}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

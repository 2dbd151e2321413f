// Command airlock runs JavaScript and TypeScript in Airlock's sandbox.
//
//	airlock run [flags] FILE
//	airlock repl [flags]
//	airlock agent [flags] TASK
//	airlock mcp [--http ADDR] [--config FILE]
//	airlock serve [flags]
//	airlock version
//
// airlock run runs FILE (TypeScript for .ts/.mts/.cts/.tsx, JavaScript
// otherwise; "-" reads standard input as TypeScript), with the files under
// --modules DIR as the modules it may import, and prints the value of its
// default export to standard output; its console output and reports, each
// line as it is written, and on failure the error with the line of source it
// points at, go to standard error. With --json the Result JSON is all that
// goes to standard output. The program has no network unless --allow-net
// HOST,... gives it fetch to those hosts (with --secrets FILE, headers the
// host adds and the program never sees). Flags may come before or after
// the file. The
// exit code is 0 on success, 1 for any other status and 2 for a usage
// error; -h prints the help and exits 0.
//
// run, agent, serve and mcp export OpenTelemetry traces by OTLP/HTTP when
// the OTEL_* environment asks (OTEL_EXPORTER_OTLP_ENDPOINT, or
// OTEL_TRACES_EXPORTER=otlp); README, "Traces".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/airlockrun/airlock"
	_ "github.com/airlockrun/airlock/cmd/airlock/internal/early"
	_ "github.com/airlockrun/airlock/cmd/airlock/internal/prestart" // before the other packages initialise
)

func main() {
	// SIGTERM (a container's stop) ends a command as Ctrl-C does: serve
	// finishes its executions within its grace period.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: airlock run [flags] FILE
       airlock repl [flags]
       airlock agent [flags] TASK
       airlock mcp [--http ADDR] [--config FILE]
       airlock serve [flags]
       airlock version

run:   runs FILE in a fresh sandbox: the result to standard output, console output, reports
       and errors to standard error. FILE "-" reads standard input. airlock run -h lists its flags.
repl:  an interactive session on one executor: each line is a step, state persists.
agent: solves TASK with a language model (OPENAI_API_KEY, OPENAI_BASE_URL) that writes code
       for the sandbox; airlock agent -h lists its flags.
mcp:   an MCP server with a run_code tool, on stdio or streamable HTTP; --config FILE also
       proxies the MCP servers FILE lists into the sandbox. airlock mcp -h lists its flags.
serve: the sandbox service: python, node (under bubblewrap), javascript and typescript over
       HTTP, with tool callbacks and workspaces. airlock serve -h lists its flags.
version: the version of this build.

Flags go before or after the arguments; "--" ends them.
`

// run is the whole command, with its streams, so tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run", "agent", "serve", "mcp":
		// Spans are exported when the OTEL_* environment asks (tracing.go).
		defer startTracing(ctx, stderr)()
	}
	switch args[0] {
	case "run":
		return runCommand(ctx, args[1:], stdin, stdout, stderr)
	case "repl":
		return replCommand(ctx, args[1:], stdin, stdout, stderr)
	case "agent":
		return agentCommand(ctx, args[1:], stdout, stderr)
	case "serve":
		return serveCommand(ctx, args[1:], stdout, stderr)
	case "mcp":
		return mcpCommand(ctx, args[1:], stdin, stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "airlock: unknown command %q", args[0])
	if filepath.Ext(args[0]) != "" {
		fmt.Fprintf(stderr, " (to run a file: airlock run %s)", args[0])
	}
	synopsis, _, _ := strings.Cut(usage, "\n\n")
	fmt.Fprint(stderr, "\n"+synopsis+"\n(airlock -h describes the commands)\n")
	return 2
}

func runFlags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("airlock run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("fn", "", "export to run (default: the default export)")
	fs.String("args", "", "JSON array of arguments for the export")
	fs.String("input", "", "JSON value bound to the global `input`")
	fs.String("memory", "64MiB", "memory limit, in bytes or with a KiB, MiB or GiB suffix")
	durationFlag(fs, "timeout", 10*time.Second, "stop the run after this long")
	fs.Bool("json", false, "print the Result JSON to standard output instead of the human format")
	fs.String("lang", "", "typescript or javascript (default: by the file's extension)")
	fs.String("modules", "", "supply the .js/.mjs/.ts/.mts files under this directory as modules the program can import")
	netFlags(fs)
	return fs
}

const runUsage = `usage: airlock run [flags] FILE

Runs FILE (TypeScript, or JavaScript for .js/.mjs/.cjs; "-" reads standard
input) in a fresh sandbox. The value of the default export goes to standard
output; console output and reports go to standard error as they are written,
and errors after them. Exit code: 0 on success, 1 if the program failed, 2 for a usage
error. The program has no network unless --allow-net gives it fetch, to
those hosts only, with --secrets added by the host.`

func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := runFlags(stderr)
	rest, code, ok := parseCommand(fs, runUsage, args, 1, stdout)
	if !ok {
		return code
	}
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	file := rest[0]
	var src []byte
	var err error
	if file == "-" {
		src, err = io.ReadAll(stdin)
		file = "stdin.ts"
	} else {
		src, err = os.ReadFile(file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 2
	}
	opts := airlock.Options{
		Execute:  airlock.Execute{Fn: get("fn")},
		Filename: filepath.Base(file),
		Language: languageOf(file),
	}
	switch get("lang") {
	case "":
	case "typescript", "ts":
		opts.Language = airlock.TypeScript
	case "javascript", "js":
		opts.Language = airlock.JavaScript
	default:
		fmt.Fprintf(stderr, "airlock: --lang must be typescript or javascript\n")
		return 2
	}
	if a := get("args"); a != "" {
		if err := json.Unmarshal([]byte(a), &opts.Execute.Args); err != nil {
			fmt.Fprintf(stderr, "airlock: --args must be a JSON array: %v\n", err)
			return 2
		}
	}
	if in := get("input"); in != "" {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			fmt.Fprintf(stderr, "airlock: --input must be JSON: %v\n", err)
			return 2
		}
		opts.Globals = map[string]any{"input": v}
	}
	fetcher, err := fetchFromFlags(fs)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 2
	}
	if fetcher != nil {
		if opts.Globals == nil {
			opts.Globals = map[string]any{}
		}
		opts.Globals["fetch"] = fetcher
	}
	if opts.MemoryLimitBytes, err = parseBytes(get("memory")); err != nil {
		fmt.Fprintf(stderr, "airlock: --memory: %v\n", err)
		return 2
	}
	if dir := get("modules"); dir != "" {
		if opts.Modules, opts.Filename, err = loadModules(dir, file); err != nil {
			fmt.Fprintf(stderr, "airlock: --modules: %v\n", err)
			return 2
		}
	}
	asJSON := get("json") == "true"
	shown := &live{w: stderr}
	if !asJSON {
		opts.Log, opts.Report = shown.log, shown.report
	}
	timeout := flagDuration(fs, "timeout")

	// One run, so no sandbox is prepared ahead: the default runtime's two
	// would be made beside the run's own, on the cores its start needs.
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: -1})
	defer rt.Close()
	ex, err := rt.Run(ctx, string(src), opts)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 2
	}
	var timedOut atomic.Bool
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			timedOut.Store(true)
			ex.Terminate(stoppedAfter(timeout, "--timeout"))
		})
		defer t.Stop()
	}
	res := ex.Wait()
	explain(res, timedOut.Load(), timeout, "--timeout", opts.MemoryLimitBytes, "--memory")
	if asJSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, string(b))
	} else {
		shown.finish(stdout, res, string(src))
	}
	if res.Status != airlock.StatusSuccess {
		return 1
	}
	return 0
}

// Limits on what -modules reads.
const (
	maxModuleFiles = 1000
	maxModuleBytes = 16 << 20
)

// loadModules reads the JavaScript and TypeScript files under dir as the
// run's modules, keyed "./path/from/dir", and returns the entry's name
// relative to dir when the entry is inside it, so that its relative imports
// resolve among them.
func loadModules(dir, entry string) (map[string]string, string, error) {
	mods := map[string]string{}
	total := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		switch filepath.Ext(path) {
		case ".js", ".mjs", ".ts", ".mts":
		default:
			return nil
		}
		if len(mods) >= maxModuleFiles {
			return fmt.Errorf("more than %d module files under %s", maxModuleFiles, dir)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if total += len(b); total > maxModuleBytes {
			return fmt.Errorf("more than %d bytes of modules under %s", maxModuleBytes, dir)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		mods["./"+filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	name := filepath.Base(entry)
	if absDir, err1 := filepath.Abs(dir); err1 == nil {
		if absEntry, err2 := filepath.Abs(entry); err2 == nil {
			if rel, err3 := filepath.Rel(absDir, absEntry); err3 == nil && !strings.HasPrefix(rel, "..") {
				name = filepath.ToSlash(rel)
			}
		}
	}
	return mods, name, nil
}

func languageOf(file string) airlock.Language {
	switch filepath.Ext(file) {
	case ".js", ".mjs", ".cjs", ".jsx":
		return airlock.JavaScript
	}
	return airlock.TypeScript
}

// parseBytes reads "1048576", "64MiB", "512KiB" or "1GiB" (also written
// 64M, 64MB or 64 MiB: the sizes are binary).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	upper := strings.ToUpper(s)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(upper, u.suffix) {
			s, mult = s[:len(s)-len(u.suffix)], u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, errors.New("want a number of bytes, such as 67108864 or 64MiB")
	}
	return n * mult, nil
}

// live prints a run's console lines and reports to w as they are made:
// its log and report are the run's Options.Log and Options.Report, called
// in order on the goroutine that runs the sandbox.
type live struct {
	w             io.Writer
	mu            sync.Mutex
	logs, reports int // printed so far
}

func (l *live) log(e airlock.Log) {
	l.mu.Lock()
	defer l.mu.Unlock()
	printLog(l.w, e)
	l.logs++
}

// printLog prints a console line as airlock run shows it.
func printLog(w io.Writer, e airlock.Log) { fmt.Fprintf(w, "[%s] %s\n", e.Level, e.Message()) }

// printReport prints a report()ed value as airlock run shows it.
func printReport(w io.Writer, v any) { fmt.Fprintf(w, "[report] %s\n", formatValue(v)) }

func (l *live) report(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	printReport(l.w, v)
	l.reports++
}

// finish prints, after the run, the lines and reports of res that were not
// printed as they came (none, unless the run was stopped as they were
// made), then the value to out, or the error with the source line it
// points at to l.w.
func (l *live) finish(out io.Writer, res *airlock.Result, src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range res.Logs[min(l.logs, len(res.Logs)):] {
		printLog(l.w, e)
	}
	for _, v := range res.Reports[min(l.reports, len(res.Reports)):] {
		printReport(l.w, v)
	}
	if res.Status == airlock.StatusSuccess {
		fmt.Fprintln(out, formatValue(res.Result))
	}
	if res.Error != nil {
		// Text of a result without its value, logs and reports is the error.
		io.WriteString(l.w, (&airlock.Result{Status: res.Status, Error: res.Error}).Text(src))
	}
}

// formatValue is a value as the REPL prints it: as Node's REPL does, a
// string in quotes.
func formatValue(v any) string {
	return airlock.InspectOptions{QuoteString: true}.Inspect(v)
}

// Command airlock runs JavaScript and TypeScript in Airlock's sandbox.
//
//	airlock run [flags] FILE
//	airlock repl [flags]
//	airlock agent [flags] TASK
//	airlock mcp [--http ADDR] [--config FILE]
//	airlock serve [flags]
//
// runs FILE (TypeScript for .ts/.mts/.cts/.tsx, JavaScript otherwise; "-" reads
// standard input as TypeScript), with the files under --modules DIR as the
// modules it may import, and prints the value of its default export,
// then its console output, reports and, on failure, the error with the line
// of source it points at. The exit code is 0 on success, 1 for any other
// status and 2 for a usage error.
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
	"time"

	"github.com/airlockrun/airlock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: airlock run [flags] FILE
       airlock repl [flags]
       airlock agent [flags] TASK
       airlock mcp [--http ADDR] [--config FILE]
       airlock serve [flags]

run:   runs FILE in a fresh sandbox and prints the result. FILE "-" reads standard input.
repl:  an interactive session on one executor: each line is a step, state persists.
agent: solves TASK with a language model (OPENAI_API_KEY, OPENAI_BASE_URL) that writes code
       for the sandbox; airlock agent -h lists its flags.
mcp:   an MCP server with a run_code tool, on stdio or streamable HTTP; --config FILE also
       proxies the MCP servers FILE lists into the sandbox. airlock mcp -h lists its flags.
serve: the sandbox service: python, node (under bubblewrap), javascript and typescript over
       HTTP, with tool callbacks and workspaces. airlock serve -h lists its flags.

run flags:
`

// run is the whole command, with its streams, so tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "repl" {
		return replCommand(ctx, args[1:], stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "agent" {
		return agentCommand(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "serve" {
		return serveCommand(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "mcp" {
		return mcpCommand(ctx, args[1:], stdin, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprint(stderr, usage)
		runFlags(stderr).PrintDefaults()
		fmt.Fprint(stderr, "\nrepl flags:\n")
		replFlags(stderr).PrintDefaults()
		return 2
	}
	return runCommand(ctx, args[1:], stdin, stdout, stderr)
}

func runFlags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("airlock run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("fn", "", "export to run (default: the default export)")
	fs.String("args", "", "JSON array of arguments for the export")
	fs.String("input", "", "JSON value bound to the global `input`")
	fs.String("memory", "64MiB", "memory limit, in bytes or with a KiB, MiB or GiB suffix")
	fs.Duration("timeout", 10*time.Second, "terminate the run after this long")
	fs.Bool("json", false, "print the Result JSON instead of the human format")
	fs.String("lang", "", "typescript or javascript (default: by the file's extension)")
	fs.String("modules", "", "supply the .js/.mjs/.ts/.mts files under this directory as modules the program can import")
	return fs
}

func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := runFlags(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	file := fs.Arg(0)
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
		fmt.Fprintf(stderr, "airlock: -lang must be typescript or javascript\n")
		return 2
	}
	if a := get("args"); a != "" {
		if err := json.Unmarshal([]byte(a), &opts.Execute.Args); err != nil {
			fmt.Fprintf(stderr, "airlock: -args must be a JSON array: %v\n", err)
			return 2
		}
	}
	if in := get("input"); in != "" {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			fmt.Fprintf(stderr, "airlock: -input must be JSON: %v\n", err)
			return 2
		}
		opts.Globals = map[string]any{"input": v}
	}
	if opts.MemoryLimitBytes, err = parseBytes(get("memory")); err != nil {
		fmt.Fprintf(stderr, "airlock: -memory: %v\n", err)
		return 2
	}
	if dir := get("modules"); dir != "" {
		if opts.Modules, opts.Filename, err = loadModules(dir, file); err != nil {
			fmt.Fprintf(stderr, "airlock: -modules: %v\n", err)
			return 2
		}
	}
	opts.Report = func(any) {}
	timeout, _ := time.ParseDuration(get("timeout"))

	ex, err := airlock.Run(ctx, string(src), opts)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 2
	}
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() { ex.Terminate(fmt.Sprintf("the %s timeout was reached", timeout)) })
		defer t.Stop()
	}
	res := ex.Wait()
	if get("json") == "true" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, string(b))
	} else {
		printHuman(stdout, res, string(src))
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

// parseBytes reads "1048576", "64MiB", "512KiB" or "1GiB".
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("want a number of bytes, such as 67108864 or 64MiB")
	}
	return n * mult, nil
}

// printHuman prints the value, then the logs and reports, then the error
// with the source line it points at.
func printHuman(w io.Writer, res *airlock.Result, src string) {
	io.WriteString(w, res.Text(src))
}

// formatValue is a value as the REPL prints it: as Node's REPL does, a
// string in quotes.
func formatValue(v any) string {
	return airlock.InspectOptions{QuoteString: true}.Inspect(v)
}

// parseArgs parses a subcommand's flags, with usage as the head of its help;
// it reports false (after printing the help) for bad flags or when the
// number of arguments is not nargs.
func parseArgs(fl *flag.FlagSet, usage string, args []string, nargs int) bool {
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), usage+"\n\nflags:\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return false
	}
	if fl.NArg() != nargs {
		fl.Usage()
		return false
	}
	return true
}

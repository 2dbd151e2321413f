package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/airlockrun/airlock"
)

func replFlags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("airlock repl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int("max-ops", 0, "loop iterations a step may run (default 50000)")
	durationFlag(fs, "timeout", 0, "wall time a step may take (default 10s)")
	fs.String("memory", "256MiB", "memory limit of the session")
	fs.String("tools", "demo", "tools of the session: demo (sleep, now, echo) or none")
	return fs
}

const replHelp = `Each line is a step: JavaScript, the body of an async function (await and
return work). Declarations stay for the next steps. End a line with \ to
continue the step on the next line. final_answer(v) gives an answer.
.exit quits, .help shows this.`

// demoTools are the repl's tools.
var demoTools = map[string]any{
	"sleep": airlock.Async(func(ctx context.Context, ms float64) error {
		select {
		case <-time.After(time.Duration(ms * float64(time.Millisecond))):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}),
	"now":  func() string { return time.Now().UTC().Format(time.RFC3339) },
	"echo": func(v any) any { return v },
}

func replCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := replFlags(stderr)
	if _, code, ok := parseCommand(fs, "usage: airlock repl [flags]", args, 0, stdout); !ok {
		return code
	}
	get := func(name string) flag.Getter { return fs.Lookup(name).Value.(flag.Getter) }
	mem, err := parseBytes(get("memory").String())
	if err != nil {
		fmt.Fprintf(stderr, "airlock repl: -memory: %v\n", err)
		return 2
	}
	var tools map[string]any
	switch t := get("tools").String(); t {
	case "demo":
		tools = demoTools
	case "none":
	default:
		fmt.Fprintf(stderr, "airlock repl: -tools must be demo or none, got %q\n", t)
		return 2
	}
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{
		MaxOperations:    get("max-ops").Get().(int),
		Timeout:          get("timeout").Get().(time.Duration),
		MemoryLimitBytes: mem,
	})
	if err == nil {
		err = ex.Init(ctx)
	}
	if err == nil && tools != nil {
		err = ex.SendTools(ctx, tools)
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock repl: %v\n", err)
		return 1
	}
	defer func() { _ = ex.Cleanup(context.Background()) }()

	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 0, 64<<10), 16<<20)
	fmt.Fprintln(stdout, "airlock repl: .help for help, .exit to quit")
	var step strings.Builder
	prompt := func() {
		if step.Len() > 0 {
			fmt.Fprint(stdout, "... ")
		} else {
			fmt.Fprint(stdout, "> ")
		}
	}
	for prompt(); in.Scan(); prompt() {
		line := in.Text()
		if step.Len() == 0 {
			switch strings.TrimSpace(line) {
			case ".exit":
				return 0
			case ".help":
				fmt.Fprintln(stdout, replHelp)
				continue
			case "":
				continue
			}
		}
		if strings.HasSuffix(line, "\\") {
			step.WriteString(strings.TrimSuffix(line, "\\") + "\n")
			continue
		}
		step.WriteString(line)
		code := step.String()
		step.Reset()
		if !replStep(ctx, ex, tools, code, stdout) {
			return 1
		}
	}
	fmt.Fprintln(stdout)
	return 0
}

// replStep runs a step and prints its logs, then its value or error. It
// reports whether the session can go on.
func replStep(ctx context.Context, ex *airlock.Executor, tools map[string]any, code string, w io.Writer) bool {
	out, err := ex.Run(ctx, code)
	var e *airlock.ExecutorError
	switch {
	case err == nil:
		if out.Logs != "" {
			fmt.Fprintln(w, out.Logs)
		}
		if out.IsFinalAnswer {
			fmt.Fprintf(w, "final answer: %s\n", formatValue(out.Output))
		} else if _, undef := out.Output.(airlock.Undefined); !undef {
			fmt.Fprintln(w, formatValue(out.Output))
		}
		return true
	case errors.As(err, &e):
		if e.Logs != "" {
			fmt.Fprintln(w, e.Logs)
		}
		fmt.Fprintf(w, "%s: %s\n", e.Code, e.Message)
		if line, ok := e.Details["line"].(int); ok {
			fmt.Fprintf(w, "  at line %d, column %v\n", line, e.Details["column"])
		}
		if ds, ok := e.Details["diagnostics"].([]airlock.Diagnostic); ok {
			for _, d := range ds {
				loc := ""
				if d.Location != nil {
					loc = fmt.Sprintf(" (line %d, column %d)", d.Location.Line, d.Location.Column)
				}
				fmt.Fprintf(w, "  %s %s: %s%s\n", d.Severity, d.Rule, d.Message, loc)
			}
		}
		if ex.State() == airlock.StateDirty {
			fmt.Fprintln(w, "the sandbox was reset: its state is lost")
			if ex.Cleanup(ctx) != nil || ex.Init(ctx) != nil {
				return false
			}
			if tools != nil && ex.SendTools(ctx, tools) != nil {
				return false
			}
		}
		return true
	default:
		fmt.Fprintf(w, "error: %v\n", err)
		return true
	}
}

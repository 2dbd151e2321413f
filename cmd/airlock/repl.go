package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/airlockrun/airlock/js"

	"github.com/airlockrun/airlock"
)

func replFlags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("airlock repl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int("max-ops", 0, "operations (loop iterations and function calls) a step may run (default 50000)")
	durationFlag(fs, "timeout", 0, "wall time a step may take (default 10s)")
	fs.String("memory", "256MiB", "memory limit of the session")
	fs.String("tools", "demo", "tools of the session: demo (sleep, now, echo) or none")
	fs.String("history", defaultHistory(), "file of the line history kept between sessions on a terminal (\"\": none; $AIRLOCK_REPL_HISTORY)")
	netFlags(fs)
	return fs
}

const replHelp = `Each line is a step: JavaScript, the body of an async function (await and
return work). The value of a final expression is printed. Declarations stay
for the next steps. An incomplete line (an open bracket, a trailing operator)
or one ending with \ continues on the next. final_answer(v) gives an answer.
Console output is printed as the step writes it.
Ctrl-C interrupts the running step and keeps the session's state (a second
Ctrl-C stops a step that the first did not stop, and resets the sandbox),
or drops the line being typed; Ctrl-C twice at an empty prompt, Ctrl-D or
.exit quits; .help shows this.`

// demoTools are the repl's tools. sleep returns at once, with an error,
// when the step is interrupted: its context ends.
func demoTools() map[string]any {
	return map[string]any{
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
		tools = demoTools()
	case "none":
	default:
		fmt.Fprintf(stderr, "airlock repl: -tools must be demo or none, got %q\n", t)
		return 2
	}
	fetcher, err := fetchFromFlags(fs)
	if err != nil {
		fmt.Fprintf(stderr, "airlock repl: %v\n", err)
		return 2
	}
	if fetcher != nil {
		if tools == nil {
			tools = map[string]any{}
		}
		tools["fetch"] = fetcher
	}
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{
		MaxOperations:    get("max-ops").Get().(int),
		Timeout:          get("timeout").Get().(time.Duration),
		MemoryLimitBytes: mem,
		// Console lines are printed as the step writes them.
		Log: func(l airlock.LogEntry) { fmt.Fprintln(stdout, l.Message) },
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

	lines, interactive := newLineReader(stdin, stdout, fs.Lookup("history").Value.String())
	defer lines.close()
	if interactive {
		fmt.Fprintln(stdout, "airlock repl: .help for help, .exit or Ctrl-D to quit")
	}
	// Ctrl-C during a step interrupts that step, not the session.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	base := context.WithoutCancel(ctx)
	var step strings.Builder
	quitting := false // a Ctrl-C at an empty prompt came last
	for {
		prompt := "> "
		if step.Len() > 0 {
			prompt = "... "
		}
		// A Ctrl-C between two steps belongs to neither: it is dropped
		// here. One that comes once the line is read is the step's.
		select {
		case <-interrupts:
		default:
		}
		line, err := lines.readLine(prompt)
		if errors.Is(err, errInterrupt) {
			if step.Len() == 0 && line == "" {
				if quitting {
					return 0 // a second Ctrl-C at an empty prompt, as Node's
				}
				fmt.Fprintln(stdout, "(Ctrl-C again, Ctrl-D or .exit quits)")
				quitting = true
			}
			step.Reset()
			continue
		}
		quitting = false
		if err != nil {
			return 0
		}
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
		if incomplete(step.String()) {
			step.WriteString("\n")
			continue
		}
		code := step.String()
		step.Reset()
		stepCtx, cancel := context.WithCancel(base)
		done := make(chan struct{})
		go func() {
			select {
			case <-interrupts:
			case <-done:
				return
			}
			// The step stops; the session's state stays. A Ctrl-C that
			// comes before the step runs (the editor has returned the line,
			// the step is still being prepared) is kept until it does.
			for !ex.Interrupt() {
				select {
				case <-done:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
			select {
			case <-interrupts: // a second Ctrl-C: stop it for good
				cancel()
			case <-done:
			}
		}()
		ok := replStep(stepCtx, ex, tools, code, stdout)
		close(done)
		cancel()
		if !ok {
			return 1
		}
	}
}

// replStep runs a step and prints its value or error (its console lines
// were printed as they came; the mark of cut logs is printed after them). It
// reports whether the session can go on. The value is the step's: what it
// returns, else its last expression's (the engine's completion value).
func replStep(ctx context.Context, ex *airlock.Executor, tools map[string]any, code string, w io.Writer) bool {
	out, err := ex.Run(ctx, code)
	var e *airlock.ExecutorError
	switch {
	case err == nil:
		printCut(w, out.Logs)
		if out.IsFinalAnswer {
			fmt.Fprintf(w, "final answer: %s\n", formatValue(out.Output))
		} else if _, undef := out.Output.(js.Undefined); !undef {
			fmt.Fprintln(w, formatValue(out.Output))
		}
		return true
	case errors.As(err, &e):
		printCut(w, e.Logs)
		if ctx.Err() != nil || errors.Is(err, airlock.ErrInterrupted) {
			fmt.Fprintln(w, "interrupted (Ctrl-C)")
		} else {
			fmt.Fprintf(w, "%s: %s\n", e.Code, e.Message)
		}
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
			ctx := context.WithoutCancel(ctx) // the step's may be cancelled
			if ex.Cleanup(ctx) != nil || ex.Init(ctx) != nil {
				return false
			}
			if tools != nil && ex.SendTools(ctx, tools) != nil {
				return false
			}
		}
		return true
	case ctx.Err() != nil:
		fmt.Fprintln(w, "interrupted (Ctrl-C)")
		return true
	default:
		fmt.Fprintf(w, "error: %v\n", err)
		return true
	}
}

// printCut prints the mark of a step's logs that were cut, which the
// console lines printed as they came do not carry.
func printCut(w io.Writer, logs string) {
	if strings.HasSuffix(logs, logsCutMark) {
		fmt.Fprintln(w, logsCutMark)
	}
}

// logsCutMark ends a step's logs that were cut (ExecutorOptions.MaxLogBytes).
const logsCutMark = "...[TRUNCATED]"

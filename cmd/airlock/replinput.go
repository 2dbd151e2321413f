package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ergochat/readline"
	"github.com/evanw/esbuild/pkg/api"
	"golang.org/x/term"
)

// errInterrupt is a Ctrl-C at the prompt.
var errInterrupt = errors.New("interrupt")

// A lineReader reads the REPL's lines: io.EOF at the end (Ctrl-D),
// errInterrupt for a Ctrl-C at the prompt.
type lineReader interface {
	readLine(prompt string) (string, error)
	close()
}

// newLineReader is a line editor with history (kept in historyFile, if
// any) when stdin is a terminal, else a plain reader of lines.
func newLineReader(stdin io.Reader, stdout io.Writer, historyFile string) (lineReader, bool) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if historyFile != "" {
			os.MkdirAll(filepath.Dir(historyFile), 0o700)
		}
		rl, err := readline.NewFromConfig(&readline.Config{
			Prompt: "> ", HistoryFile: historyFile, HistoryLimit: 1000,
			Stdin: f, Stdout: stdout, InterruptPrompt: "^C", EOFPrompt: "\n",
		})
		if err == nil {
			return &editor{rl}, true
		}
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &plainReader{sc, stdout}, false
}

type editor struct{ rl *readline.Instance }

func (e *editor) readLine(prompt string) (string, error) {
	e.rl.SetPrompt(prompt)
	line, err := e.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errInterrupt
	}
	return line, err
}

func (e *editor) close() { e.rl.Close() }

type plainReader struct {
	sc  *bufio.Scanner
	out io.Writer
}

func (p *plainReader) readLine(prompt string) (string, error) {
	fmt.Fprint(p.out, prompt)
	if !p.sc.Scan() {
		if err := p.sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	return p.sc.Text(), nil
}

func (p *plainReader) close() {}

// defaultHistory is the REPL's history file: $AIRLOCK_REPL_HISTORY, else
// .airlock_repl_history in the home directory.
func defaultHistory() string {
	if h, ok := os.LookupEnv("AIRLOCK_REPL_HISTORY"); ok {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".airlock_repl_history")
}

// incomplete reports whether code ends in the middle of a statement (an
// open bracket, string or comment, a trailing operator): the REPL then
// reads another line.
func incomplete(code string) bool {
	res := api.Transform(code, api.TransformOptions{Loader: api.LoaderJS, Format: api.FormatESModule})
	for _, m := range res.Errors {
		if strings.Contains(m.Text, "end of file") || strings.Contains(m.Text, "Unterminated") || strings.Contains(m.Text, "to terminate") {
			return true
		}
	}
	return false
}

// parses reports whether code is valid as the body of an async function.
func parses(code string) bool {
	res := api.Transform("(async () => {\n"+code+"\n})", api.TransformOptions{Loader: api.LoaderJS})
	return len(res.Errors) == 0
}

// valueWrapper is what withValue puts before the final expression.
const valueWrapper = "return ("

// withValue is the step as the REPL runs it: when it ends with an
// expression statement, that expression is returned, so that its value is
// printed (`a + 1` prints 21). Declarations (function, class) stay
// statements. line is the 1-based line where valueWrapper was put (0: the
// code is unchanged), whose columns past it are len(valueWrapper) further
// right than the user typed them.
func withValue(code string) (out string, line int) {
	trimmed := strings.TrimRight(code, " \t\r\n;")
	if trimmed == "" || !parses(code) {
		return code, 0
	}
	// The split points: after each ';' or newline, the last ones first,
	// then the start; the first split whose tail is an expression wins.
	cuts := []int{}
	for i := len(trimmed) - 1; i >= 0 && len(cuts) < 64; i-- {
		if trimmed[i] == ';' || trimmed[i] == '\n' {
			cuts = append(cuts, i+1)
		}
	}
	cuts = append(cuts, 0)
	for _, c := range cuts {
		head, tail := trimmed[:c], trimmed[c:]
		t := strings.TrimSpace(tail)
		if t == "" || isDeclaration(t) {
			continue
		}
		// The wrapper goes where the expression starts, so lines keep
		// their numbers.
		lead := len(tail) - len(strings.TrimLeft(tail, " \t\r\n"))
		rewritten := head + tail[:lead] + valueWrapper + t + "\n);"
		if parses(rewritten) && parses(head) {
			return rewritten, strings.Count(head+tail[:lead], "\n") + 1
		}
	}
	return code, 0
}

func isDeclaration(s string) bool {
	for _, kw := range []string{"function", "async function", "class", "{"} {
		if strings.HasPrefix(s, kw) {
			return true
		}
	}
	return false
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/airlockrun/airlock/internal/source"
	"github.com/ergochat/readline"
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
// open bracket, a trailing operator, an open template literal or comment):
// the REPL then reads another line. The engine that runs the step says so:
// it compiles the code without running it (engine.InspectStep), and the
// code is incomplete when the compiler stopped at the end of the input. A
// step that is TypeScript is asked of esbuild, which erases its types
// before it runs.
func incomplete(code string) bool {
	if nesting.Check(code) != nil {
		return false // too deep to compile here: the step's validation reports it
	}
	in, err := engine.InspectStep(code, false)
	if err != nil || in.Err == "" || in.Import {
		return false
	}
	switch {
	case in.Err == "Unexpected end of input", in.Err == "unexpected end of comment":
		return true
	case in.Err == "Invalid or unexpected token" && openTemplate(code, in.Line, in.Column):
		return true
	}
	// TypeScript, and what the compiler reports elsewhere than at the end
	// (a template's open substitution): esbuild erases the step inside a
	// function, and stops at the end of the input or in the function's
	// closing line after it.
	if _, _, lf := source.EraseStep(code); lf != nil {
		return strings.Contains(lf.Message, "end of file") ||
			lf.Line > strings.Count(code, "\n")+1 && depth(code) >= 0 // not a bracket that closes the function
	}
	return false
}

// depth is how many brackets code leaves open, outside strings and
// comments (roughly: a regular expression literal counts): negative when
// it closes more than it opens, which no further line can mend.
func depth(code string) int {
	d := 0
	for i := 0; i < len(code); i++ {
		switch c := code[i]; c {
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		case '"', '\'', '`':
			for i++; i < len(code) && code[i] != c; i++ {
				if code[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < len(code) && code[i+1] == '/' {
				for i < len(code) && code[i] != '\n' {
					i++
				}
			} else if i+1 < len(code) && code[i+1] == '*' {
				if j := strings.Index(code[i+2:], "*/"); j >= 0 {
					i += j + 3
				} else {
					i = len(code)
				}
			}
		}
	}
	return d
}

// openTemplate reports whether a template literal starts at line:col
// (1-based, in characters) of code and no backquote closes it.
func openTemplate(code string, line, col int) bool {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(code[off:], '\n')
		if i < 0 {
			return false
		}
		off += i + 1
	}
	for c := 1; c < col && off < len(code); c++ {
		_, n := utf8.DecodeRuneInString(code[off:])
		off += n
	}
	if off >= len(code) || code[off] != '`' {
		return false
	}
	for i := off + 1; i < len(code); i++ {
		switch code[i] {
		case '\\':
			i++
		case '`':
			return false
		}
	}
	return true
}

package main

import (
	"bufio"
	"bytes"
	"errors"
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
		in := newCPRInput(f)
		e := &editor{}
		rl, err := readline.NewFromConfig(&readline.Config{
			Prompt: "> ", HistoryFile: historyFile, HistoryLimit: 1000,
			Stdin: in, Stdout: cprOutput{stdout, in}, InterruptPrompt: "^C", EOFPrompt: "\n",
			Listener: func(line []rune, pos int, _ rune) ([]rune, int, bool) {
				e.typed = string(line)
				return nil, 0, false
			},
		})
		if err == nil {
			e.rl = rl
			return e, true
		}
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &plainReader{sc}, false
}

// The line editor asks the terminal where the cursor is (ESC [ 6 n, a
// cursor position report) before each prompt, and waits for the answer
// with no bound: on a terminal that never answers (a dumb terminal, an
// editor's shell, some CI pseudo-terminals) no prompt ever came. The
// question is never sent: the REPL writes whole lines, so its prompt
// always starts a line, and the only thing the editor takes from the
// answer is that column. cprOutput drops the question and cprInput gives
// the editor the answer, as if the terminal had.
const (
	cprQuery  = "\x1b[6n"
	cprAnswer = "\x1b[1;1R" // row 1, column 1: the editor uses the column
)

// cprInput is the terminal's input, read on a goroutine of its own, with
// the answers to the editor's cursor queries put in between.
type cprInput struct {
	keys    chan []byte
	answers chan []byte
	rest    []byte
	err     error
}

func newCPRInput(f io.Reader) *cprInput {
	in := &cprInput{keys: make(chan []byte), answers: make(chan []byte, 16)}
	go func() {
		for {
			buf := make([]byte, 4096)
			n, err := f.Read(buf)
			if n > 0 {
				in.keys <- buf[:n]
			}
			if err != nil {
				in.err = err
				close(in.keys)
				return
			}
		}
	}()
	return in
}

func (in *cprInput) Read(p []byte) (int, error) {
	if len(in.rest) == 0 {
		select {
		case b := <-in.answers:
			in.rest = b
		case b, ok := <-in.keys:
			if !ok {
				return 0, in.err
			}
			in.rest = b
		}
	}
	n := copy(p, in.rest)
	in.rest = in.rest[n:]
	return n, nil
}

// cprOutput is the terminal's output without cursor queries: each is
// answered by in.
type cprOutput struct {
	w  io.Writer
	in *cprInput
}

func (o cprOutput) Write(p []byte) (int, error) {
	n := bytes.Count(p, []byte(cprQuery))
	if n == 0 {
		return o.w.Write(p)
	}
	if _, err := o.w.Write(bytes.ReplaceAll(p, []byte(cprQuery), nil)); err != nil {
		return 0, err
	}
	for range n {
		select {
		case o.in.answers <- []byte(cprAnswer):
		default: // the editor asks once a prompt; never reached
		}
	}
	return len(p), nil
}

// An editor is the line editor on a terminal. typed is the line as it
// stood before the last key: the editor returns no line with a Ctrl-C,
// and the REPL tells a Ctrl-C at an empty prompt from one that drops a
// line.
type editor struct {
	rl    *readline.Instance
	typed string
}

func (e *editor) readLine(prompt string) (string, error) {
	e.rl.SetPrompt(prompt)
	line, err := e.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return e.typed, errInterrupt
	}
	return line, err
}

func (e *editor) close() { e.rl.Close() }

// A plainReader reads lines from standard input that is not a terminal:
// no prompt, no echo, one step per line (an incomplete line still reads
// on, as on a terminal).
type plainReader struct {
	sc *bufio.Scanner
}

func (p *plainReader) readLine(string) (string, error) {
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

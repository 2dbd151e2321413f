package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/ergochat/readline"
	"github.com/grafana/sobek/parser"
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

// asBody is code as the body of an async function, as the executor runs
// a step, and the number of lines before the code.
func asBody(code string) (string, int) {
	return "(async () => {\n" + code + "\n})", 1
}

// parseErr parses code as the body of an async function (with the sobek
// parser, which knows JavaScript; the REPL's steps are JavaScript).
func parseErr(code string) (err error) {
	if e := nesting.Check(code); e != nil {
		return e // too deep to parse here: the step's validation reports it
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the code does not parse (%v)", p)
		}
	}()
	body, _ := asBody(code)
	_, err = parser.ParseFile(nil, "", body, 0)
	return err
}

var errLine = regexp.MustCompile(`Line (\d+):\d+ (.*)`)

// incomplete reports whether code ends in the middle of a statement (an
// open bracket, string or comment, a trailing operator): the REPL then
// reads another line. It is when the parser fails only at the end of the
// code: at the end of input, or in the closing of the function around it.
func incomplete(code string) bool {
	err := parseErr(code)
	if err == nil {
		return false
	}
	msg := err.Error()
	if strings.Contains(msg, "Unexpected end of input") {
		return true
	}
	m := errLine.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	line, _ := strconv.Atoi(m[1])
	_, before := asBody(code)
	return line > before+strings.Count(code, "\n")+1 && depth(code) >= 0
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

// parses reports whether code is valid as the body of an async function.
func parses(code string) bool { return parseErr(code) == nil }

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

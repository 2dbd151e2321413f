package airlock

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/inspect"
	"github.com/airlockrun/airlock/js"
)

// Status classifies how a run ended. The values are the seed contract's
// strings and appear as is in the Result JSON.
type Status string

const (
	// StatusSuccess: the module evaluated and the selected export resolved.
	StatusSuccess Status = "success"
	// StatusError: an uncaught error inside the sandbox, including a
	// selected export that is not a function called with arguments, a value
	// that cannot cross the boundary, and a host function that panicked.
	StatusError Status = "error"
	// StatusMemory: the memory limit was exceeded.
	StatusMemory Status = "memory"
	// StatusTerminated: Terminate was called, the context was done, or the
	// runtime's safety cap on wall time fired; Error.Message says which.
	StatusTerminated Status = "terminated"
	// StatusLinkError: the module graph failed to link: an unknown
	// specifier, a missing named export, a syntax error, a missing selected
	// export.
	StatusLinkError Status = "link_error"
)

// Result is the outcome of a run. Its JSON encoding is exactly the seed
// contract's CodeExecutionResult.
type Result struct {
	Status Status
	// Result is the resolved selected export, converted as the package
	// documentation's table says. It is nil unless Status is StatusSuccess.
	Result any
	// Reports are the values given to the built-in report function, in call
	// order. Never nil.
	Reports []any
	// Logs are the captured console calls. Empty when the caller supplied
	// its own console. Never nil.
	Logs []Log
	// Error is set iff Status is not StatusSuccess.
	Error *ScriptError
	// Duration is the wall time from the call of Run to the settlement.
	Duration time.Duration
	// MemoryUsedBytes is the largest engine heap size measured during the
	// run, in bytes, the sandbox's own setup included.
	MemoryUsedBytes int64
}

// Log is one captured console call.
type Log struct {
	Level LogLevel
	Args  []any
	// Time is when the call was made.
	Time time.Time
}

// LogEntry is one console call of an [Executor] step, as its Logs hold
// it (CodeOutput.LogEntries, ExecutorError.LogEntries).
type LogEntry struct {
	Level   LogLevel  `json:"level"`
	Message string    `json:"message"`
	Time    time.Time `json:"ts"`
}

// LogLevel is the console method of a Log.
type LogLevel string

const (
	LevelLog   LogLevel = "log"
	LevelInfo  LogLevel = "info"
	LevelWarn  LogLevel = "warn"
	LevelError LogLevel = "error"
	LevelDebug LogLevel = "debug"
)

// Message is the log's line as Node's console prints it: strings as they
// are, other values as [Inspect] shows them, joined by spaces.
func (l Log) Message() string { return inspect.Line(l.Args, scriptErrorText) }

// MarshalJSON encodes a Log as the seed's CodeExecutionLog:
// {"level", "args", "timestamp"} with the timestamp in milliseconds since the
// Unix epoch.
func (l Log) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Level     LogLevel `json:"level"`
		Args      any      `json:"args"`
		Timestamp int64    `json:"timestamp"`
	}{l.Level, js.JSONValue(l.Args), l.Time.UnixMilli()})
}

// MarshalJSON encodes the Result as the seed's CodeExecutionResult. Values
// that JSON cannot hold are encoded as JSON.stringify would where it can:
// undefined, NaN and the infinities as null; a bigint as its decimal string;
// a Map as an array of [key, value] pairs; a Set as an array; a Date as its
// RFC 3339 time (an invalid one as null, one outside the years 0 to 9999 as
// its ISO text); bytes as base64; a repeated object, as in a cycle, as null
// ([js.JSONValue] does the conversion).
// A Result value encodes as a *Result does.
func (r Result) MarshalJSON() ([]byte, error) {
	type wire struct {
		Status          Status       `json:"status"`
		Result          any          `json:"result,omitempty"`
		Reports         any          `json:"reports"`
		Logs            []Log        `json:"logs"`
		Error           *ScriptError `json:"error,omitempty"`
		DurationMs      float64      `json:"durationMs"`
		MemoryUsedBytes int64        `json:"memoryUsedBytes,omitempty"`
	}
	w := wire{
		Status:          r.Status,
		Reports:         js.JSONValue(orEmpty(r.Reports)),
		Logs:            r.Logs,
		Error:           r.Error,
		DurationMs:      float64(r.Duration) / float64(time.Millisecond),
		MemoryUsedBytes: r.MemoryUsedBytes,
	}
	if r.Status == StatusSuccess {
		w.Result = js.JSONValue(r.Result)
		if w.Result == nil {
			w.Result = json.RawMessage("null")
		}
	}
	if w.Logs == nil {
		w.Logs = []Log{}
	}
	return json.Marshal(w)
}

func orEmpty(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}

// MaxErrorText bounds each text of a [ScriptError] (and the name and
// message of an [ExecutorError]'s exception), in characters: a longer one
// keeps its head and its tail, half of the room each, around the line
// agent.ClipText writes, which says how much was cut:
//
//	... [truncated 1,234,567 characters] ...
//
// The sandbox cuts what a program threw before it crosses to the host, so
// that the host never holds more, and counts as characters what
// JavaScript's length counts (UTF-16 code units); each line of a stack is
// cut to 1,000 characters there, the marker inside the line.
const MaxErrorText = engine.MaxErrorText

// ScriptError describes why a run did not succeed: a throw or rejection in
// the sandbox, a link error, a limit or a termination. Positions are in the
// user's original source, TypeScript included.
//
// Each text is at most [MaxErrorText] characters. The texts that come from
// the sandbox (Name, Message, Stack: an error's, a thrown value's, a
// rejection's reason) count against the run's budget for values that
// cross ([RuntimeConfig].MaxValueBytes), after what crossed before; when
// less is left, each is cut to what is left, with the same marker.
type ScriptError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	// Stack holds the sandbox's frames only, one "    at ..." line each:
	// the innermost Error.stackTraceLimit of them (10, as in Node, unless
	// the program sets it), each at most 1,000 characters (a long function
	// name is cut inside its line); a last line says how many characters
	// of frames were cut past MaxErrorText.
	Stack string `json:"stack,omitempty"`
	// Specifier is the module specifier that failed to link.
	Specifier string `json:"specifier,omitempty"`
	// Filename is the source file of Line and Column.
	Filename string `json:"filename,omitempty"`
	// Line and Column are 1-based; 0 when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
}

// Error returns "Name: Message".
func (e *ScriptError) Error() string {
	if e.Name == "" {
		return e.Message
	}
	return e.Name + ": " + e.Message
}

// String returns the error with its position and stack.
func (e *ScriptError) String() string {
	s := e.Error()
	if e.Stack != "" {
		return s + "\n" + e.Stack
	}
	if e.Filename != "" && e.Line > 0 {
		return s + "\n    at " + e.Filename + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column)
	}
	return s
}

// Text is the result as a person or a model reads it: the value on success;
// the console's lines as "[level] message"; the reports as "[report] value";
// on failure the status and the error, the specifier of a link error, the
// position with the line of source (from src, the entry's source) and a
// caret under the column, and the stack.
func (r *Result) Text(src string) string {
	var b strings.Builder
	if r.Status == StatusSuccess {
		b.WriteString(formatValue(r.Result) + "\n")
	}
	for _, l := range r.Logs {
		fmt.Fprintf(&b, "[%s] %s\n", l.Level, l.Message())
	}
	for _, v := range r.Reports {
		fmt.Fprintf(&b, "[report] %s\n", formatValue(v))
	}
	e := r.Error
	if e == nil {
		return b.String()
	}
	fmt.Fprintf(&b, "%s: %s\n", r.Status, e.Error())
	if e.Specifier != "" {
		fmt.Fprintf(&b, "  specifier: %s\n", e.Specifier)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "  at %s:%d:%d\n", e.Filename, e.Line, e.Column)
		lines := strings.Split(src, "\n")
		if e.Line <= len(lines) {
			text := strings.TrimRight(lines[e.Line-1], "\r")
			col := e.Column
			if col > len(text)+1 {
				col = 0
			}
			text, col = sourceWindow(text, col)
			prefix := fmt.Sprintf("  %4d | ", e.Line)
			fmt.Fprintf(&b, "%s%s\n", prefix, text)
			if col > 0 {
				fmt.Fprintf(&b, "%s^\n", strings.Repeat(" ", len(prefix)-2)+"| "+strings.Repeat(" ", col-1))
			}
		}
	}
	if e.Stack != "" {
		b.WriteString(e.Stack + "\n")
	}
	return b.String()
}

// sourceLineWindow is how much of a long source line Text shows around the
// error's column: a minified or hostile line can be megabytes long.
const sourceLineWindow = 120

// sourceWindow cuts text, a source line, to sourceLineWindow bytes around col
// (1-based; 0 for none), on rune boundaries, with "…" where it cut, and
// returns the column's place in what it kept.
func sourceWindow(text string, col int) (string, int) {
	if len(text) <= sourceLineWindow {
		return text, col
	}
	start := 0
	if col > sourceLineWindow/2 {
		start = col - 1 - sourceLineWindow/2
	}
	end := min(start+sourceLineWindow, len(text))
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	out := text[start:end]
	if col > 0 {
		col -= start
	}
	if start > 0 {
		out = "…" + out
		if col > 0 {
			col++ // the caret line counts bytes of spaces; "…" is one column wide
		}
	}
	if end < len(text) {
		out += "…"
	}
	return out, col
}

// formatValue is a value as Inspect shows it.
func formatValue(v any) string { return inspect.Format(v, inspect.Options{Named: scriptErrorText}) }

// scriptErrorText is the name and message of a *ScriptError, which the
// formatter shows as the JavaScript error it was, [TypeError: message],
// rather than as a Go error.
func scriptErrorText(err error) (name, message string, ok bool) {
	if e, ok := err.(*ScriptError); ok {
		return e.Name, e.Message, true
	}
	return "", "", false
}

package airlock_test

import (
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
)

// TestResultText_LongSourceLine: Result.Text quotes the source line of an
// error with a caret under its column. A program of one 600 KB line (minified,
// or an attack on the nesting bound) made it print the whole line; it now
// shows a window around the column, with the caret still under it.
func TestResultText_LongSourceLine(t *testing.T) {
	src := "export default " + strings.Repeat("[", 300000) + strings.Repeat("]", 300000)
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript, Filename: "deep.js"})
	wantStatus(t, res, airlock.StatusLinkError)
	text := res.Text(src)
	if len(text) > 2000 {
		t.Fatalf("Text is %d bytes long; want a window of the line", len(text))
	}
	lines := strings.Split(text, "\n")
	var code, caret string
	for i, l := range lines {
		if strings.HasPrefix(l, "     1 | ") && i+1 < len(lines) {
			code, caret = l, lines[i+1]
		}
	}
	if code == "" || !strings.HasSuffix(caret, "^") {
		t.Fatalf("no quoted line with a caret in:\n%s", text)
	}
	// The caret stands under a '[' of the window, which starts and ends with "…".
	at := []rune(code)[len([]rune(caret))-1]
	if at != '[' || !strings.Contains(code, "…[") || !strings.HasSuffix(code, "…") {
		t.Fatalf("caret under %q in:\n%s\n%s", at, code, caret)
	}

	// A short line is quoted whole, as before.
	short := "export default 1 +;"
	res = runOpts(t, short, airlock.Options{Language: airlock.JavaScript})
	if !strings.Contains(res.Text(short), "| "+short+"\n") {
		t.Fatalf("short line not quoted whole:\n%s", res.Text(short))
	}
}

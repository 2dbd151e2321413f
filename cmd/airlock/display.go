package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// A display shows an agent run to a person as it happens: a banner, a live
// indicator while the model thinks and while code runs (on a terminal), a
// panel per step and a summary. Colour only on a terminal, and not with
// --no-color or NO_COLOR.
type display struct {
	out   io.Writer // panels
	live  io.Writer // the indicator; nil: none
	color bool

	mu      sync.Mutex
	step    int
	phase   string // "thinking", "running code", ""
	since   time.Time
	shown   bool // an indicator line is on the screen
	stop    chan struct{}
	httpErr string // the endpoint's last error message
	// finalAsked: the steps ran out and the model was asked for a final
	// answer, whose usage is in the transcript's.
	finalAsked bool
	// price is the model's from the price table; nil: no cost is shown.
	price *price
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// forceLive makes the display live off a terminal too (tests).
var forceLive = false

func newDisplay(stdout, stderr io.Writer, noColor bool) *display {
	d := &display{out: stdout, stop: make(chan struct{})}
	if isTerminal(stderr) || forceLive {
		d.live = stderr
	}
	d.color = isTerminal(stdout) && !noColor && os.Getenv("NO_COLOR") == ""
	if d.live != nil {
		go d.tick()
	}
	return d
}

func (d *display) close() {
	d.mu.Lock()
	d.clearLocked()
	d.phase = "" // a last tick draws nothing
	d.mu.Unlock()
	close(d.stop)
}

func (d *display) paint(code, s string) string {
	if !d.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (d *display) banner(model, endpoint string, tools []string) {
	if endpoint == "" {
		endpoint = "https://api.openai.com/v1"
	}
	t := "none"
	if len(tools) > 0 {
		t = strings.Join(tools, ", ")
	}
	fmt.Fprintf(d.out, "%s model %s · endpoint %s · tools: %s\n", d.paint("1", "airlock agent"), model, endpoint, t)
}

// setPhase shows what the run is doing now.
func (d *display) setPhase(p string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.phase != p {
		d.phase, d.since = p, time.Now()
	}
	d.drawLocked()
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (d *display) drawLocked() {
	if d.live == nil || d.phase == "" {
		return
	}
	frame := spinner[int(time.Since(d.since)/(100*time.Millisecond))%len(spinner)]
	fmt.Fprintf(d.live, "\r\x1b[K%s step %d · %s… %.1fs", frame, d.step+1, d.phase, time.Since(d.since).Seconds())
	d.shown = true
}

func (d *display) clearLocked() {
	if d.shown {
		fmt.Fprint(d.live, "\r\x1b[K")
		d.shown = false
	}
}

func (d *display) tick() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.mu.Lock()
			d.drawLocked()
			d.mu.Unlock()
		}
	}
}

// codeBlock is a fenced code block of a reply, with the end marker.
var codeBlock = regexp.MustCompile("(?s)```.*?(```|$)|<end_code>")

var jsKeywords = regexp.MustCompile(`\b(const|let|var|function|return|await|async|if|else|for|while|of|in|new|try|catch|throw|export|default|import|from)\b`)

// stepDone prints a step's panel.
func (d *display) stepDone(s agent.Step) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearLocked()
	d.step, d.phase = s.Index, ""
	fmt.Fprintf(d.out, "%s\n", d.paint("1;36", fmt.Sprintf("━━ step %d ━━", s.Index)))
	if s.Code != "" {
		if thought := strings.TrimSpace(codeBlock.ReplaceAllString(s.ModelReply, "")); thought != "" {
			fmt.Fprintln(d.out, indent(d.paint("3", thought), "  "))
		}
		code := s.Code
		if d.color {
			code = jsKeywords.ReplaceAllString(code, "\x1b[35m$1\x1b[0m")
		}
		fmt.Fprintf(d.out, "%s\n", indent(code, "  │ "))
	} else if r := strings.TrimSpace(s.ModelReply); r != "" && len(s.ToolCalls) == 0 {
		fmt.Fprintln(d.out, indent(r, "  "))
	}
	for _, c := range s.ToolCalls {
		fmt.Fprintf(d.out, "  → %s(%s)\n%s\n", c.Tool, clip(c.Input, 400), indent(clip(c.Result, 2000), "    "))
	}
	if s.Observation != "" {
		head := "  Observation:"
		if s.Error != "" {
			head = d.paint("31", "  Error:")
		}
		fmt.Fprintf(d.out, "%s\n%s\n", head, indent(clip(s.Observation, 2000), "    "))
	}
	fmt.Fprintf(d.out, "%s\n", d.paint("2", fmt.Sprintf("  %s · %d input tokens, %d output tokens", s.Duration.Round(time.Millisecond), s.Usage.PromptTokens, s.Usage.CompletionTokens)))
}

// finalAnswerAsked says that the steps ran out and the model gave a final
// answer when asked, with that request's tokens.
func (d *display) finalAnswerAsked(steps int, u agent.Usage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearLocked()
	d.finalAsked = true
	fmt.Fprintln(d.out, d.paint("2", fmt.Sprintf("(the %d steps ran out: the model was asked once for a final answer from them; %d input tokens, %d output tokens)",
		steps, u.PromptTokens, u.CompletionTokens)))
}

// summary prints the outcome and the totals.
func (d *display) summary(tr *agent.Transcript) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearLocked()
	switch tr.Outcome {
	case agent.OutcomeFinalAnswer:
		fmt.Fprintf(d.out, "\n%s %s\n", d.paint("1;32", "Final answer:"), airlock.Inspect(tr.FinalAnswer))
	default:
		msg := tr.Error
		if d.httpErr != "" {
			msg = d.httpErr
		}
		fmt.Fprintf(d.out, "\n%s %s\n", d.paint("1;31", "No answer:"), msg)
	}
	// The transcript's usage counts every model call: the steps', the
	// llm() calls of their code, and the request for a final answer.
	u, steps, extra := tr.Usage, fmt.Sprintf("%d steps", len(tr.Steps)), ""
	if d.finalAsked {
		steps += " and a final-answer request"
	}
	if u.SubCalls > 0 {
		extra = fmt.Sprintf(", %d model calls with llm()'s", u.Completions)
	}
	if d.price != nil {
		extra += ", cost " + formatCost(d.price.cost(u.PromptTokens, u.CompletionTokens))
	}
	fmt.Fprintf(d.out, "(%s, %d tokens: %d input, %d output%s, %s)\n", steps, u.TotalTokens,
		u.PromptTokens, u.CompletionTokens, extra, tr.Duration.Round(time.Millisecond))
}

// middleware follows the requests to the model: the indicator says
// "thinking" during one (an llm() call when code is running), and an
// error answer's message is kept to report it as the endpoint gave it.
func (d *display) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	d.mu.Lock()
	prev := d.phase
	d.mu.Unlock()
	if strings.HasPrefix(prev, "running code") {
		d.setPhase("running code · llm() call")
	} else {
		d.setPhase("thinking")
	}
	resp, err := next(req)
	if err == nil && resp.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		d.mu.Lock()
		d.httpErr = endpointError(req, resp.Status, body)
		d.mu.Unlock()
	}
	// After the model's answer, its code (or the tools it called) runs.
	d.setPhase("running code")
	return resp, err
}

// endpointError is an error answer as the endpoint gave it:
// "POST http://…/chat/completions: 401 Unauthorized: Incorrect API key".
func endpointError(req *http.Request, status string, body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil {
		if e.Error.Message != "" {
			msg = e.Error.Message
		} else if e.Message != "" {
			msg = e.Message
		}
	}
	return fmt.Sprintf("the endpoint answered %s %s with %s: %s", req.Method, req.URL.Redacted(), status, clip(msg, 500))
}

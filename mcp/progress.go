package mcp

import (
	"context"
	"math"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// Bounds of the progress notifications of one run_code call.
const (
	// progressQueue is how many notifications may wait for a slow client;
	// past it they are dropped (and the next one says how many), so that
	// the program never waits for the client.
	progressQueue = 256
	// progressMessage bounds the characters of one notification's value.
	progressMessage = 2000
)

// progress sends a run's reports and console lines to the client as
// progress notifications, in order, from a goroutine of its own.
type progress struct {
	ch      chan string
	done    chan struct{}
	mu      sync.Mutex
	dropped int
	closed  bool
}

func newProgress(ctx context.Context, session *sdk.ServerSession, token any) *progress {
	p := &progress{ch: make(chan string, progressQueue), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		n := 0
		for msg := range p.ch {
			n++
			if ctx.Err() != nil {
				continue
			}
			_ = session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
		}
	}()
	return p
}

// report queues a reported value, as airlock.Inspect shows it, cut to
// progressMessage characters.
func (p *progress) report(v any) {
	p.send("report: " + agent.ClipText(airlock.Inspect(v), progressMessage))
}

// log queues a console line: its level and its message ("log: hello 1"),
// cut to progressMessage characters.
func (p *progress) log(l airlock.Log) {
	p.send(string(l.Level) + ": " + agent.ClipText(l.Message(), progressMessage))
}

// send queues a notification's message without waiting: past
// progressQueue waiting it is dropped, and the next one says how many were.
func (p *progress) send(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.dropped > 0 {
		msg = "(" + strconv.Itoa(p.dropped) + " messages not sent: the client was slow) " + msg
	}
	select {
	case p.ch <- msg:
		p.dropped = 0
	default:
		p.dropped++
	}
}

// close sends what is queued and returns when it has been sent, so that the
// notifications come before the tool's result.
func (p *progress) close() {
	p.mu.Lock()
	p.closed = true
	close(p.ch)
	p.mu.Unlock()
	<-p.done
}

// mib is a size in MiB: "64 MiB", "1.5 MiB".
func mib(n int64) string {
	return strconv.FormatFloat(math.Round(float64(n)/(1<<20)*100)/100, 'f', -1, 64) + " MiB"
}

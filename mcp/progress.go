package mcp

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// Bounds of the progress notifications of one run_code call. A program's
// console lines and reports are batched: a notification carries every
// entry that came since the one before (one entry a line, in order), at
// most one notification goes out per progressInterval, and what the
// client is sent is bounded by bytes three ways (an entry, a batch, the
// call). What does not fit is dropped and counted; the result still has
// every line.
const (
	// progressEntry bounds the characters of one value or console line in a
	// notification.
	progressEntry = 2000
	// progressBatch bounds the bytes of one notification's message: once
	// the entries waiting for the next notification reach it, the later
	// ones are dropped (the notification ends by saying how many) until it
	// is sent. It is also all that waits for a slow client: the program
	// never waits for the client.
	progressBatch = 16 << 10
	// progressInterval is the least time between two notifications: a
	// flood of lines becomes at most 10 notifications a second.
	progressInterval = 100 * time.Millisecond
	// progressTotal bounds the bytes of the messages of one call: past it
	// a last notification says that the rest is only in the result, and
	// no more are sent.
	progressTotal = 1 << 20
)

// progress sends a run's reports and console lines to the client as
// progress notifications, in order, from a goroutine of its own.
type progress struct {
	wake chan struct{} // an entry is waiting (capacity 1)
	stop chan struct{} // closed by close: send what waits and end
	done chan struct{} // closed when the goroutine has ended

	mu      sync.Mutex
	pending []string // the entries of the next notification
	size    int      // their bytes, with the newlines between them
	dropped int      // entries dropped since the last notification
	entries int      // entries so far, sent or not: the progress value
	sent    int      // bytes of the messages sent
	over    bool     // progressTotal was reached: nothing more is sent
	closed  bool
}

func newProgress(ctx context.Context, session *sdk.ServerSession, token any) *progress {
	p := &progress{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop(ctx, session, token)
	return p
}

func (p *progress) loop(ctx context.Context, session *sdk.ServerSession, token any) {
	defer close(p.done)
	var last time.Time
	for {
		select {
		case <-p.wake:
		case <-p.stop:
		}
		if !last.IsZero() {
			t := time.NewTimer(progressInterval - time.Since(last))
			select {
			case <-t.C:
			case <-p.stop: // the run has ended: send what waits now
			}
			t.Stop()
		}
		msg, n, more := p.take()
		if msg != "" && ctx.Err() == nil {
			_ = session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
			last = time.Now()
		}
		if !more {
			return
		}
	}
}

// take is the message of the next notification ("" when nothing waits),
// the progress value, and whether more may come.
func (p *progress) take() (msg string, n int, more bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	more = !p.closed
	if p.over || len(p.pending) == 0 && p.dropped == 0 {
		return "", p.entries, more
	}
	msg = strings.Join(p.pending, "\n")
	if p.dropped > 0 {
		if msg != "" {
			msg += "\n"
		}
		msg += "(" + strconv.Itoa(p.dropped) + " more not sent here; the result has them all)"
	}
	if p.sent+len(msg) > progressTotal {
		msg = "(no more progress: " + strconv.Itoa(progressTotal>>20) + " MiB of lines were sent; the result has them all)"
		p.over = true
	}
	p.sent += len(msg)
	p.pending, p.size, p.dropped = nil, 0, 0
	return msg, p.entries, more
}

// report queues a reported value, as airlock.Inspect shows it, cut to
// progressEntry characters.
func (p *progress) report(v any) {
	p.send(func() string { return "report: " + agent.ClipText(airlock.Inspect(v), progressEntry) })
}

// log queues a console line: its level and its message ("log: hello 1"),
// cut to progressEntry characters.
func (p *progress) log(l airlock.Log) {
	p.send(func() string { return string(l.Level) + ": " + agent.ClipText(l.Message(), progressEntry) })
}

// send queues an entry for the next notification without waiting: once
// the next notification is full (progressBatch), it is dropped and
// counted, and so are the later ones until that notification is taken.
// The entry is made only when it may be queued: a flood of lines is not
// formatted to be dropped.
func (p *progress) send(makeEntry func() string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.over {
		return
	}
	p.entries++
	if p.dropped > 0 {
		p.dropped++
	} else if entry := makeEntry(); p.size+len(entry)+1 > progressBatch {
		p.dropped++
	} else {
		p.pending = append(p.pending, entry)
		p.size += len(entry) + 1
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// close sends what is queued and returns when it has been sent, so that the
// notifications come before the tool's result.
func (p *progress) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done
}

// mib is a size in MiB: "64 MiB", "1.5 MiB".
func mib(n int64) string {
	return strconv.FormatFloat(math.Round(float64(n)/(1<<20)*100)/100, 'f', -1, 64) + " MiB"
}

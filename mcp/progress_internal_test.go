package mcp

import (
	"strconv"
	"strings"
	"testing"
)

// The progress queue's byte bounds, without a client: a batch holds at
// most progressBatch bytes and counts what it drops; once progressTotal
// bytes have been taken, a last message says so and nothing more is sent.
func TestProgressBounds(t *testing.T) {
	p := &progress{wake: make(chan struct{}, 1)}
	line := "log: " + strings.Repeat("x", 995) // 1,000 bytes, 1,001 with its newline
	for range 20 {
		p.send(func() string { return line })
	}
	msg, n, more := p.take()
	if kept := progressBatch / 1001; !more || n != 20 || strings.Count(msg, line) != kept ||
		!strings.HasSuffix(msg, "\n("+strconv.Itoa(20-kept)+" more not sent here; the result has them all)") || len(msg) > progressBatch+100 {
		t.Fatalf("first batch: %d entries of %d bytes, n=%d, more=%v, ends %q", strings.Count(msg, line), len(msg), n, more, msg[max(0, len(msg)-80):])
	}
	if msg, _, _ := p.take(); msg != "" {
		t.Fatalf("an empty queue gave %q", msg)
	}
	var total int
	for i := 0; ; i++ {
		p.send(func() string { return line })
		msg, _, _ := p.take()
		if strings.HasPrefix(msg, "(no more progress") {
			break
		}
		total += len(msg)
		if i > progressTotal/1000+10 {
			t.Fatal("progressTotal does not bound what is sent")
		}
	}
	if total > progressTotal {
		t.Fatalf("%d bytes sent, more than %d", total, progressTotal)
	}
	p.send(func() string { return line })
	if msg, _, _ := p.take(); msg != "" {
		t.Fatalf("sent after the total: %q", msg)
	}
}

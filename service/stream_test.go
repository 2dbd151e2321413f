package service

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLineSplitter: output written in any pieces comes out as its lines;
// a line over streamMaxLine comes in pieces of whole characters.
func TestLineSplitter(t *testing.T) {
	var got []string
	l := &lineSplitter{emit: func(s string) { got = append(got, s) }}
	l.Write([]byte("ab"))
	l.Write([]byte("c\n\nd"))
	l.Write([]byte("e\nf"))
	l.flush()
	if strings.Join(got, "|") != "abc||de|f" {
		t.Fatalf("%q", got)
	}
	got = nil
	long := strings.Repeat("é", streamMaxLine) // two bytes each
	l.Write([]byte("x" + long + "\n"))
	if len(got) != 3 || strings.Join(got, "") != "x"+long {
		t.Fatalf("%d pieces", len(got))
	}
	for _, p := range got {
		if len(p) > streamMaxLine || !utf8.ValidString(p) {
			t.Fatalf("a piece of %d bytes, valid %v", len(p), utf8.ValidString(p))
		}
	}
}

// TestLogQueueBounds: the queue holds at most streamMaxLines lines and
// streamMaxBytes bytes; once a line is dropped, the following ones are too
// until the queue is taken, so the count of dropped lines stands after the
// kept ones.
func TestLogQueueBounds(t *testing.T) {
	q := newLogQueue()
	for range streamMaxLines + 10 {
		q.push("x")
	}
	lines, dl, _ := q.take()
	if len(lines) != streamMaxLines || dl != 10 {
		t.Fatalf("%d lines, %d dropped", len(lines), dl)
	}
	big := strings.Repeat("y", streamMaxLine)
	for range streamMaxBytes/streamMaxLine + 1 {
		q.push(big)
	}
	q.push("z") // fits, but follows a dropped line
	lines, dl, db := q.take()
	if len(lines) != streamMaxBytes/streamMaxLine || dl != 2 || db != int64(len(big)+1) {
		t.Fatalf("%d lines, %d dropped (%d bytes)", len(lines), dl, db)
	}
	q.push("after")
	if lines, dl, _ := q.take(); len(lines) != 1 || dl != 0 {
		t.Fatalf("after a take: %q, %d dropped", lines, dl)
	}
}

func TestStreamType(t *testing.T) {
	for accept, want := range map[string]string{
		"": "", "application/json": "", "*/*": "", "application/x-ndjson": typeNDJSON, "text/event-stream": typeSSE,
		"text/event-stream;q=0, application/x-ndjson": typeNDJSON, "application/json, text/event-stream;q=0.9": typeSSE,
		"application/x-ndjson;q=0.0": "",
	} {
		if got := streamType(accept); got != want {
			t.Errorf("%q: %q, want %q", accept, got, want)
		}
	}
}

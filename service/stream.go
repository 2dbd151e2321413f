package service

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// A client that asks for it (Accept: application/x-ndjson or
// text/event-stream) gets an execution's output as it is written: one event
// per line of output, then the result, the same object as the default
// response. The events are JSON objects with a "type":
//
//	{"type":"log","text":"a line, without its newline"}
//	{"type":"dropped","lines":N,"bytes":B}   lines the client was too slow for
//	{"type":"result","result":{...}}          the default response's object; last
//	{"type":"error","status":500,"error":"..."} instead of a result; last
//
// As NDJSON each is a line; as server-sent events each is "event: <type>"
// and "data: <the same JSON>". A request refused before its first event
// (400, 401, 403, 409, 413, 503) is answered as without streaming: its
// status and {"error": ...}.

// StreamEvent is one event of a streamed execution.
type StreamEvent struct {
	// Type is "log", "dropped", "result" or "error".
	Type string `json:"type"`
	// Text is a line of output (log), without its newline.
	Text string `json:"text,omitempty"`
	// Lines and Bytes count what was dropped (dropped).
	Lines int64 `json:"lines,omitempty"`
	Bytes int64 `json:"bytes,omitempty"`
	// Result is the response (result): an ExecuteResponse on /execute, a
	// V1Response on /v1/execute.
	Result any `json:"result,omitempty"`
	// Status and Error say what failed (error).
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// The bounds of a stream: the lines waiting for a slow client, their bytes,
// and the length of a line (a longer one arrives in pieces). A line that
// does not fit is dropped, never waited for: the code's output does not
// wait on the network, and a client that reads slowly costs the server, per
// execution, the lines waiting (streamMaxBytes at most), the batch being
// written (those lines, taken, as JSON: at most six bytes a byte for
// control characters, twice for the usual escapes) and a partial line
// (streamMaxLine).
const (
	streamMaxLines = 1024
	streamMaxBytes = 256 << 10
	streamMaxLine  = 16 << 10
	// streamWriteTimeout bounds the sending of one batch of events: a
	// client that reads nothing for that long loses its execution, as one
	// that disconnects does.
	streamWriteTimeout = time.Minute
)

// Stream types, as Accept names them.
const (
	typeNDJSON = "application/x-ndjson"
	typeSSE    = "text/event-stream"
)

// streamType is the stream an Accept header asks for, the first listed
// (with a q above 0), or "" for the default response.
func streamType(accept string) string {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q <= 0 {
			continue
		}
		switch mt {
		case typeNDJSON, typeSSE:
			return mt
		}
	}
	return ""
}

// logQueue holds the lines on their way to a client, within the stream's
// bounds. Once a line is dropped, the following ones are too until the
// writer takes the queue, so that a dropped event stands where the lines
// were. Safe for concurrent use.
type logQueue struct {
	mu           sync.Mutex
	lines        []string
	bytes        int
	dropping     bool
	droppedLines int64
	droppedBytes int64
	wake         chan struct{}
}

func newLogQueue() *logQueue { return &logQueue{wake: make(chan struct{}, 1)} }

func (q *logQueue) push(line string) {
	q.mu.Lock()
	if q.dropping || len(q.lines) >= streamMaxLines || q.bytes+len(line) > streamMaxBytes {
		q.dropping = true
		q.droppedLines++
		q.droppedBytes += int64(len(line))
		q.mu.Unlock()
	} else {
		q.lines = append(q.lines, line)
		q.bytes += len(line)
		q.mu.Unlock()
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take empties the queue: its lines, then how many were dropped after them.
func (q *logQueue) take() (lines []string, droppedLines, droppedBytes int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	lines, droppedLines, droppedBytes = q.lines, q.droppedLines, q.droppedBytes
	q.lines, q.bytes, q.dropping, q.droppedLines, q.droppedBytes = nil, 0, false, 0, 0
	return
}

// lineSplitter cuts written output into lines of at most streamMaxLine
// bytes (whole characters) for emit. Safe for concurrent use.
type lineSplitter struct {
	mu      sync.Mutex
	partial []byte
	emit    func(string)
}

func (l *lineSplitter) Write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.partial = append(l.partial, p...)
			l.emitPieces()
			return
		}
		l.partial = append(l.partial, p[:i]...)
		p = p[i+1:]
		l.emitPieces()
		l.emit(string(l.partial))
		l.partial = l.partial[:0]
	}
}

// emitPieces emits the partial line in pieces while it is longer than
// streamMaxLine, keeping the rest.
func (l *lineSplitter) emitPieces() {
	b := l.partial
	for len(b) > streamMaxLine {
		n := pieceLen(b)
		l.emit(string(b[:n]))
		b = b[n:]
	}
	l.partial = append(l.partial[:0], b...)
}

// flush emits what is left of a last line without a newline.
func (l *lineSplitter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.emit(string(l.partial))
		l.partial = nil
	}
}

// pieceLen is how much of b goes in a piece: streamMaxLine bytes, back to
// the start of a character.
func pieceLen(b []byte) int {
	n := streamMaxLine
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}

// eventWriter writes a stream's events.
type eventWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	kind    string
	started bool
	buf     bytes.Buffer
	enc     *json.Encoder // on buf; <, > and & as themselves
}

func (e *eventWriter) add(ev StreamEvent) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	if e.kind == typeSSE {
		e.buf.WriteString("event: ")
		e.buf.WriteString(ev.Type)
		e.buf.WriteString("\ndata: ")
	}
	// The JSON and the newline that ends its line; a value that does not
	// encode leaves the line empty.
	if e.enc.Encode(ev) != nil {
		e.buf.WriteByte('\n')
	}
	if e.kind == typeSSE {
		e.buf.WriteByte('\n')
	}
}

// send writes the events added since the last send, the headers first.
func (e *eventWriter) send() error {
	if !e.started {
		e.started = true
		e.w.Header().Set("Content-Type", e.kind)
		e.w.Header().Set("Cache-Control", "no-cache")
		e.w.Header().Set("X-Accel-Buffering", "no") // nginx: pass it on as it comes
		e.w.WriteHeader(http.StatusOK)
	}
	e.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	_, err := e.w.Write(e.buf.Bytes())
	e.buf.Reset()
	if err == nil {
		err = e.rc.Flush()
	}
	return err
}

// executeStream runs a request and streams its output to the client as
// events of kind: the lines as they are written, then the result.
func (s *Server) executeStream(w http.ResponseWriter, r *http.Request, req ExecuteRequest, v1 bool, kind string) {
	ctx, cancel := context.WithCancel(requestContext(r))
	defer cancel()
	q := newLogQueue()
	req.Log = q.push
	var resp *V1Response
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err = s.Execute(ctx, req, s.dispatcher(req.ExecutionID, req.CallbackURL))
	}()
	ew := &eventWriter{w: w, rc: http.NewResponseController(w), kind: kind}
	failed := false // the client is gone: the run is cancelled, its lines discarded
	forward := func() {
		lines, dl, db := q.take()
		if failed || len(lines) == 0 && dl == 0 {
			return
		}
		for _, l := range lines {
			ew.add(StreamEvent{Type: "log", Text: l})
		}
		if dl > 0 {
			s.metrics.streamDropped(dl)
			ew.add(StreamEvent{Type: "dropped", Lines: dl, Bytes: db})
		}
		if ew.send() != nil {
			failed = true
			cancel()
		}
	}
wait:
	for {
		select {
		case <-q.wake:
			forward()
		case <-done:
			break wait
		}
	}
	forward()
	if failed {
		return
	}
	if err != nil {
		status := errorStatus(err)
		if !ew.started {
			writeError(w, status, err.Error())
			return
		}
		ew.add(StreamEvent{Type: "error", Status: status, Error: err.Error()})
		ew.send()
		return
	}
	var result any = resp.ExecuteResponse
	if v1 {
		result = resp
	}
	ew.add(StreamEvent{Type: "result", Result: result})
	ew.send()
}

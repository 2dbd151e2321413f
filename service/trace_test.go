package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock/internal/tracing/tracingtest"
	"github.com/airlockrun/airlock/service"
)

// An execution is a span, airlock.execute, with its runtime and status,
// continuing the trace of the request's traceparent header; the run under
// it is its child. A refused request's span says why, not the message.
func TestTraceExecute(t *testing.T) {
	rec := tracingtest.Record(t)
	prevProp := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prevProp) })
	url := newServer(t, service.Config{})
	ctx, caller := otel.Tracer("test").Start(context.Background(), "client")
	post := func(code string) int {
		body, _ := json.Marshal(map[string]any{"code": code, "runtime": "javascript"})
		req, _ := http.NewRequest(http.MethodPost, url+"/execute", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post(`console.log("s3cr3t"); export default 1`); st != 200 {
		t.Fatalf("status %d", st)
	}
	if st := post(`   `); st != 400 {
		t.Fatalf("empty code: status %d", st)
	}
	caller.End()
	var execs []sdktrace.ReadOnlySpan
	var runs []sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		execs, runs = nil, nil
		for _, s := range rec.Ended() {
			switch s.Name() {
			case "airlock.execute":
				execs = append(execs, s)
			case "airlock.run":
				runs = append(runs, s)
			}
		}
		if len(execs) == 2 && len(runs) == 1 {
			break
		}
	}
	if len(execs) != 2 || len(runs) != 1 {
		t.Fatalf("%d execute spans and %d run spans, want 2 and 1", len(execs), len(runs))
	}
	attr := func(s sdktrace.ReadOnlySpan, key string) string {
		for _, kv := range s.Attributes() {
			if string(kv.Key) == key {
				return kv.Value.Emit()
			}
		}
		return ""
	}
	for _, e := range execs {
		if e.Parent().SpanID() != caller.SpanContext().SpanID() || e.SpanKind() != trace.SpanKindServer {
			t.Errorf("execute span not the client's child (kind %v)", e.SpanKind())
		}
		if attr(e, "airlock.runtime") != "javascript" {
			t.Errorf("runtime %q", attr(e, "airlock.runtime"))
		}
		for _, kv := range e.Attributes() {
			if bytes.Contains([]byte(kv.Value.Emit()), []byte("s3cr3t")) || bytes.Contains([]byte(kv.Value.Emit()), []byte("empty")) {
				t.Errorf("execute span holds a text: %s=%s", kv.Key, kv.Value.Emit())
			}
		}
	}
	ok, refused := execs[0], execs[1]
	if attr(ok, "airlock.status") == "" {
		ok, refused = refused, ok
	}
	if attr(ok, "airlock.status") != "success" || runs[0].Parent().SpanID() != ok.SpanContext().SpanID() {
		t.Errorf("execute: status %q, run under it: %v", attr(ok, "airlock.status"), runs[0].Parent().SpanID() == ok.SpanContext().SpanID())
	}
	if attr(refused, "error.type") != "400" {
		t.Errorf("refused execute: error.type %q", attr(refused, "error.type"))
	}
}

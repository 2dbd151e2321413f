package service

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock/internal/tracing"
)

// TracerName is the instrumentation scope of the service's spans (README,
// "Traces"): an execution's, airlock.execute, with its runtime and status,
// and each tool callback's, execute_tool. They go to the global tracer
// provider, which records nothing until a program installs one (airlock
// serve does when the OTEL_* variables ask for it). Neither the code, nor
// the files, nor a tool's arguments or answer, nor an error's text is
// recorded (RATIONALE.md, "What a trace holds").
const TracerName = "github.com/airlockrun/airlock/service"

const (
	attrRuntime  = attribute.Key("airlock.runtime")
	attrStatus   = attribute.Key("airlock.status")
	attrExitCode = attribute.Key("airlock.exit_code")
	attrSession  = attribute.Key("airlock.session")
)

// requestContext is r's context, with the trace context of the request's
// headers (traceparent) when a provider is installed and the program set a
// propagator: the execution's span continues the caller's trace.
func requestContext(r *http.Request) context.Context {
	if !tracing.Enabled() {
		return r.Context()
	}
	return otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
}

// startExecute starts an execution's span; nil when not traced.
func startExecute(ctx context.Context, req *ExecuteRequest) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return ctx, nil // before the options are made
	}
	ctx, span := tracing.Start(ctx, TracerName, "airlock.execute", trace.WithSpanKind(trace.SpanKindServer))
	if span != nil {
		rt := strings.ToLower(req.Runtime)
		switch rt {
		case "python", "node", "javascript", "typescript":
		case "":
			rt = "python"
		default:
			rt = "unsupported" // not the client's text
		}
		span.SetAttributes(attrRuntime.String(rt), attrSession.Bool(req.SessionID != ""))
	}
	return ctx, span
}

// endExecute ends an execution's span with its status, or the refusal.
func endExecute(span trace.Span, resp *V1Response, err error) {
	switch {
	case err != nil:
		kind := "error"
		if re, ok := err.(*RequestError); ok {
			kind = strconv.Itoa(re.Status) // the HTTP status code, as semantic conventions have it
		}
		tracing.Fail(span, kind, kind)
	case resp != nil:
		span.SetAttributes(attrStatus.String(resp.Status), attrExitCode.Int(resp.ExitCode))
		if resp.Status != "success" {
			tracing.Fail(span, resp.Status, resp.Status)
		}
	}
	span.End()
}

// traceCalls makes each of dispatch's tool callbacks a span, named by the
// tool.
func traceCalls(dispatch Dispatcher) Dispatcher {
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		ctx, span := tracing.StartTool(ctx, TracerName, name, "extension")
		if span == nil {
			return dispatch(ctx, name, args)
		}
		data, err := dispatch(ctx, name, args)
		if err != nil {
			tracing.Fail(span, "error", "the tool call failed")
		}
		span.End()
		return data, err
	}
}

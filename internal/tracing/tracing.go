// Package tracing is what the library's packages share to make
// OpenTelemetry spans through the API only: whether a program installed a
// tracer provider (Enabled), checked without allocating, so that a run or a
// call costs nothing more while none is; the library's tracers; and the
// spans and attributes its packages make alike (a tool call's span, a
// failure's error.type and status). The library never installs a provider
// or an exporter: the commands do.
package tracing

import (
	"context"
	"reflect"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of the root package's spans.
const Scope = "github.com/airlockrun/airlock"

// initial is the global provider the API starts with, the delegating
// no-op one, as long as it is: nil if a provider was installed before this
// package was initialised.
var initial = func() trace.TracerProvider {
	tp := otel.GetTracerProvider()
	if reflect.TypeOf(tp).String() == "*global.tracerProvider" {
		return tp
	}
	return nil
}()

// Enabled reports whether a program installed a tracer provider
// (otel.SetTracerProvider): an atomic load and a comparison.
func Enabled() bool { return otel.GetTracerProvider() != initial }

// Start starts a span of scope's tracer, from the installed provider, as a
// child of ctx's and returns it, or, when no provider is installed or the
// span does not record (sampled out), ctx and nil: the caller does
// nothing more. A caller checks Enabled first when making the options
// would allocate. The tracer is asked of the provider installed now, not
// kept: a program may install another.
func Start(ctx context.Context, scope, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !Enabled() {
		return ctx, nil
	}
	sctx, span := otel.GetTracerProvider().Tracer(scope).Start(ctx, name, opts...)
	if !span.IsRecording() {
		span.End()
		return ctx, nil
	}
	return sctx, span
}

// Recording reports whether ctx carries a span that records: a host call's
// span is made only under one.
func Recording(ctx context.Context) bool {
	return ctx != nil && Enabled() && trace.SpanFromContext(ctx).IsRecording()
}

// The semantic conventions' attributes the library's packages share.
const (
	// ErrorType is what failed, a name of few values: never an error's
	// text, which may hold secrets and user data.
	ErrorType     = attribute.Key("error.type")
	attrOperation = attribute.Key("gen_ai.operation.name")
	attrToolName  = attribute.Key("gen_ai.tool.name")
	attrToolType  = attribute.Key("gen_ai.tool.type")
)

// Fail marks span as failed: errType as its error.type, and an error
// status with description.
func Fail(span trace.Span, errType, description string) {
	span.SetAttributes(ErrorType.String(errType))
	span.SetStatus(codes.Error, description)
}

// StartTool starts a tool call's span, "execute_tool" and the tool's name,
// with the GenAI semantic conventions' attributes (toolType is
// gen_ai.tool.type: "function", "extension"), as Start does: nil when not
// traced. The span's options are made only when a provider is installed.
func StartTool(ctx context.Context, scope, name, toolType string) (context.Context, trace.Span) {
	if !Enabled() {
		return ctx, nil
	}
	return Start(ctx, scope, "execute_tool "+name, trace.WithAttributes(
		attrOperation.String("execute_tool"), attrToolName.String(name), attrToolType.String(toolType)))
}

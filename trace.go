package airlock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock/internal/tracing"
)

// TracerName is the instrumentation scope of the spans the library makes
// (README, "Traces"): a run's ("airlock.run"), each host call's
// ("airlock.call"). They go to the global tracer provider (otel.Tracer),
// which records nothing until a program installs one: the library never
// installs an exporter.
const TracerName = tracing.Scope

// The attributes of a run's span. Neither the source, nor the values that
// cross, nor an error's message are recorded: they may hold secrets and
// user data (RATIONALE.md, "What a trace holds").
const (
	attrLanguage = attribute.Key("airlock.language")
	attrFn       = attribute.Key("airlock.function")
	attrStatus   = attribute.Key("airlock.status")
	attrErrType  = attribute.Key("error.type")
	attrDuration = attribute.Key("airlock.duration_ms")
)

// startRunSpan starts a run's span, a child of ctx's, and returns the
// context that carries it; span is nil when the global provider does not
// record (the no-op one), and the run costs nothing more then.
func startRunSpan(ctx context.Context, opts *Options) (context.Context, trace.Span) {
	sctx, span := tracing.Start(ctx, TracerName, "airlock.run", trace.WithSpanKind(trace.SpanKindInternal))
	if span == nil {
		return ctx, nil
	}
	lang := "javascript"
	if opts.Language == TypeScript {
		lang = "typescript"
	}
	fn := opts.Execute.Fn
	if fn == "" {
		fn = "default"
	}
	span.SetAttributes(attrLanguage.String(lang), attrFn.String(fn))
	return sctx, span
}

// endRunSpan ends span when exec settles, with its status and its error's
// name; or at once, with err, when the run did not start.
func endRunSpan(span trace.Span, exec *Execution, err error) {
	if err != nil || exec == nil {
		span.SetStatus(codes.Error, "the run did not start")
		span.SetAttributes(attrErrType.String("start"))
		span.End()
		return
	}
	go func() {
		<-exec.done
		res := exec.result
		span.SetAttributes(attrStatus.String(string(res.Status)), attrDuration.Int64(res.Duration.Milliseconds()))
		if res.Status != StatusSuccess {
			name := string(res.Status)
			if res.Error != nil && res.Error.Name != "" {
				name = res.Error.Name
			}
			span.SetAttributes(attrErrType.String(name))
			span.SetStatus(codes.Error, string(res.Status))
		}
		span.End()
	}()
}

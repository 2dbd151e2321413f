package airlock

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock/internal/tracing"
)

// TracerName is the instrumentation scope of the spans the library makes
// (README, "Traces"): a run's ("airlock.run"), each host call's
// ("airlock.call"). They go to the global tracer provider, which records
// nothing until a program installs one: the library never installs an
// exporter.
const TracerName = tracing.Scope

// The attributes of a run's span. Neither the source, nor the values that
// cross, nor an error's message are recorded: they may hold secrets and
// user data (RATIONALE.md, "What a trace holds").
const (
	attrLanguage = attribute.Key("airlock.language")
	attrFn       = attribute.Key("airlock.function")
	attrStatus   = attribute.Key("airlock.status")
	attrDuration = attribute.Key("airlock.duration_ms")
)

// runSpan is a run's span, passed from Runtime.Run to the run it starts in
// the context (runSpanKey), claimed once: a run started by a host function
// of this one, with this one's context, does not take it.
type runSpan struct {
	span    trace.Span
	claimed atomic.Bool
}

type runSpanKey struct{}

// startRunSpan starts a run's span, a child of ctx's, and returns the
// context that carries it; span is nil when the global provider does not
// record (none is installed), and the run costs nothing more then.
func startRunSpan(ctx context.Context, opts *Options) (context.Context, *runSpan) {
	if !tracing.Enabled() {
		// Before the span's options are made: they would be allocated.
		return ctx, nil
	}
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
	rs := &runSpan{span: span}
	return context.WithValue(sctx, runSpanKey{}, rs), rs
}

// claimRunSpan is the span Runtime.Run started for the run of ctx, which
// the run ends as it settles (runSpan.end), before its Execution is done:
// a program that exits after Wait has the span to flush. nil if there is
// none, or it is another run's.
func claimRunSpan(ctx context.Context) *runSpan {
	if !tracing.Enabled() {
		return nil
	}
	rs, _ := ctx.Value(runSpanKey{}).(*runSpan)
	if rs == nil || !rs.claimed.CompareAndSwap(false, true) {
		return nil
	}
	return rs
}

// end ends the span with the run's status and its error's name.
func (rs *runSpan) end(res *Result) {
	if rs == nil {
		return
	}
	span := rs.span
	span.SetAttributes(attrStatus.String(string(res.Status)), attrDuration.Int64(res.Duration.Milliseconds()))
	if res.Status != StatusSuccess {
		name := string(res.Status)
		if res.Error != nil && res.Error.Name != "" {
			name = res.Error.Name
		}
		tracing.Fail(span, name, string(res.Status))
	}
	span.End()
}

// endRunSpan ends rs when the run did not start, with err; a run that
// started ends it as it settles, or, a run that did not claim it (in a
// worker process), when its Execution is done.
func endRunSpan(rs *runSpan, exec *Execution, err error) {
	if err != nil || exec == nil {
		tracing.Fail(rs.span, "start", "the run did not start")
		rs.span.End()
		return
	}
	if rs.claimed.CompareAndSwap(false, true) {
		go func() {
			<-exec.done
			rs.end(exec.result)
		}()
	}
}

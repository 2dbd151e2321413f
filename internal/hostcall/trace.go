package hostcall

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/tracing"
)

// A host call's span, "airlock.call", is made only under a span that
// records (the run's, or the caller's of an executor's step): a Host
// looks at its Ctx once, at its first call, and each call after costs
// the load of Host.trace. The span holds the Go function's name and
// whether the call is asynchronous; neither the arguments nor the result
// nor an error's text, which may hold user data (RATIONALE.md, "What a
// trace holds").
const spanName = "airlock.call"

// The values of Host.trace.
const (
	traceUnknown int32 = iota
	traceOff
	traceOn
)

// The attributes of a host call's span.
const (
	attrFunction = attribute.Key("airlock.function")
	attrAsync    = attribute.Key("airlock.call.async")
)

// traced reports whether the calls are traced: whether the span in Ctx
// records, looked at once.
func (h *Host) traced() bool {
	if t := h.trace.Load(); t != traceUnknown {
		return t == traceOn
	}
	return h.decideTrace()
}

func (h *Host) decideTrace() bool {
	t := traceOff
	if tracing.Recording(h.Ctx) {
		t = traceOn
	}
	h.trace.Store(t)
	return t == traceOn
}

// startCall starts f's call's span under Ctx's.
func (h *Host) startCall(f *Func) (context.Context, trace.Span) {
	return otel.GetTracerProvider().Tracer(tracing.Scope).Start(h.Ctx, spanName, trace.WithAttributes(
		attrFunction.String(f.Name()), attrAsync.Bool(f.Async)))
}

// callTraced is Call for a traced call of f: the function is given the
// context of the call's span, which ends with the call, or, for an
// asynchronous function, when it returns.
func (h *Host) callTraced(f *Func, in []engine.Arg, encoded []byte, rep *engine.Reply) {
	ctx, span := h.startCall(f)
	switch {
	case f.Async:
		*rep = h.call(ctx, f, in, encoded, span)
		if rep.Kind == engine.ReplyAsync {
			return // the function ends the span when it returns
		}
	case f.typed != nil && encoded == nil:
		h.callTyped(ctx, f, in, rep)
	default:
		*rep = h.call(ctx, f, in, encoded, nil)
	}
	endCallSpan(span, rep)
}

// answerTraced is Answer for a traced call.
func (h *Host) answerTraced(id int, list []byte) ([]byte, string) {
	f := h.Funcs.At(id)
	if f == nil {
		return h.answer(h.Ctx, id, list)
	}
	ctx, span := h.startCall(f)
	out, errText := h.answer(ctx, id, list)
	if errText != "" {
		failSpan(span, errText)
	}
	span.End()
	return out, errText
}

// endCallSpan ends a call's span with its reply.
func endCallSpan(span trace.Span, rep *engine.Reply) {
	if rep.Kind == engine.ReplyError {
		text, _ := rep.Value.(string)
		failSpan(span, text)
	}
	span.End()
}

// failSpan marks a call's span failed. The error's text is not recorded,
// only whether the host refused the call (stopped, unknown function) or
// the function failed.
func failSpan(span trace.Span, text string) {
	kind := "error"
	switch text {
	case TextStopped:
		kind = "stopped"
	case TextUnknown:
		kind = "unknown_function"
	}
	tracing.Fail(span, kind, kind)
}

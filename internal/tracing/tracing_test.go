package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"
)

// Enabled tells the API's initial provider from an installed one by the
// initial one's type name, which the API does not export: a release that
// renames it would make Enabled true for every program, and each run and
// call would make its span's options for nothing. This pins the name.
func TestEnabled(t *testing.T) {
	if initial == nil {
		t.Fatalf("the initial provider, a %T, was not recognised", otel.GetTracerProvider())
	}
	if Enabled() || Recording(context.Background()) {
		t.Fatal("enabled with no provider installed")
	}
	if ctx, span := Start(context.Background(), Scope, "x"); span != nil || ctx != context.Background() {
		t.Fatal("a span with no provider installed")
	}
	otel.SetTracerProvider(noop.NewTracerProvider())
	if !Enabled() {
		t.Error("not enabled with a provider installed")
	}
	if _, span := Start(context.Background(), Scope, "x"); span != nil {
		t.Error("a span that does not record was returned")
	}
	otel.SetTracerProvider(initial)
	if Enabled() {
		t.Error("enabled once the initial provider is back")
	}
}

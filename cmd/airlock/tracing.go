package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// tracesWanted reports whether the OTEL_* environment asks for traces
// exported by OTLP, and a warning when it asks for something this build
// cannot do. Only which variables are set, and the exporter's and
// protocol's names, are looked at here: the SDK and the exporter read the
// values (endpoint, headers, timeout, sampler, service name, batching).
// Traces are exported when OTEL_TRACES_EXPORTER names otlp, or when it is
// unset and an OTLP endpoint is (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): a command never sends traces to the
// specification's default endpoint unasked.
func tracesWanted(getenv func(string) string) (bool, string) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, ""
	}
	want := false
	if exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp != "" {
		for e := range strings.SplitSeq(exp, ",") {
			switch e = strings.ToLower(strings.TrimSpace(e)); e {
			case "otlp":
				want = true
			case "none":
				return false, ""
			default:
				return false, fmt.Sprintf("OTEL_TRACES_EXPORTER=%s: only otlp (or none) is built in; no traces are exported", exp)
			}
		}
	} else {
		want = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	if !want {
		return false, ""
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if p := strings.ToLower(strings.TrimSpace(proto)); p != "" && p != "http/protobuf" {
		return false, fmt.Sprintf("OTLP protocol %q: only http/protobuf is built in; no traces are exported", proto)
	}
	return true, ""
}

// flushTimeout bounds the export of the spans left at the command's end.
const flushTimeout = 5 * time.Second

// startTracing installs the OpenTelemetry SDK with an OTLP/HTTP exporter as
// the global tracer provider when the environment asks for traces
// (tracesWanted), with the W3C trace context as the propagator, so that the
// library's spans (README, "Traces") are exported. The function returned
// flushes and shuts the provider down and puts the one before back; it is
// called as the command ends. Export errors go to stderr.
func startTracing(ctx context.Context, stderr io.Writer) (stop func()) {
	want, warning := tracesWanted(os.Getenv)
	if warning != "" {
		fmt.Fprintln(stderr, "airlock: traces:", warning)
	}
	if !want {
		return func() {}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "airlock: traces:", err)
		return func() {}
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read by the SDK,
	// override the defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "airlock"), attribute.String("service.version", version())),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		fmt.Fprintln(stderr, "airlock: traces:", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	prevTP, prevProp, prevEH := otel.GetTracerProvider(), otel.GetTextMapPropagator(), otel.GetErrorHandler()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { fmt.Fprintln(stderr, "airlock: traces:", err) }))
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			fmt.Fprintln(stderr, "airlock: traces:", err)
		}
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		otel.SetErrorHandler(prevEH)
	}
}

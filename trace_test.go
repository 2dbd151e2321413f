package airlock_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/tracing/tracingtest"
)

// installRecorder records every span the library makes
// (tracingtest.Record).
var installRecorder = tracingtest.Record

// endedUnder waits for a span named name under parent to end (a run's span
// ends just after the run settles, on another goroutine) and returns the
// spans under parent that ended.
func endedUnder(t *testing.T, rec *tracetest.SpanRecorder, parent trace.SpanID, name string) []sdktrace.ReadOnlySpan {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var under []sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Parent().SpanID() == parent {
				under = append(under, s)
			}
		}
		if slices.ContainsFunc(under, func(s sdktrace.ReadOnlySpan) bool { return s.Name() == name }) {
			return under
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s span ended under the caller's", name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func attrOf(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantAttr(t *testing.T, s sdktrace.ReadOnlySpan, key, want string) {
	t.Helper()
	v, ok := attrOf(s, key)
	if !ok || v.Emit() != want {
		t.Errorf("span %s: %s = %q (set: %v), want %q", s.Name(), key, v.Emit(), ok, want)
	}
}

func traceAdd(a, b int) int { return a + b }

func traceGreet(m map[string]any) map[string]any { return map[string]any{"hello": m["name"]} }

// A run traced by the program's provider is a span, airlock.run, child of
// the span of the context given to Run, with its status; each of its host
// calls is a span, airlock.call, child of the run's, named by the Go
// function. The values that cross are not in the spans.
func TestTraceRunAndHostCalls(t *testing.T) {
	rec := installRecorder(t)
	ctx, parent := otel.Tracer("test").Start(context.Background(), "caller")
	ex, err := airlock.Run(ctx, `export default add(1, 2) + greet({ name: "s3cr3t" }).hello.length`, airlock.Options{
		Language: airlock.JavaScript,
		Globals:  map[string]any{"add": traceAdd, "greet": traceGreet},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := ex.Wait()
	parent.End()
	if res.Status != airlock.StatusSuccess {
		t.Fatalf("run: %v %v", res.Status, res.Error)
	}
	under := endedUnder(t, rec, parent.SpanContext().SpanID(), "airlock.run")
	if len(under) != 1 {
		t.Fatalf("%d spans under the caller's, want the run's only", len(under))
	}
	run := under[0]
	wantAttr(t, run, "airlock.status", "success")
	wantAttr(t, run, "airlock.language", "javascript")
	wantAttr(t, run, "airlock.function", "default")
	if run.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Error("the run's span is not in the caller's trace")
	}
	var calls []string
	for _, s := range rec.Ended() {
		if s.Parent().SpanID() != run.SpanContext().SpanID() {
			continue
		}
		if s.Name() != "airlock.call" {
			t.Errorf("span %q under the run's", s.Name())
			continue
		}
		v, _ := attrOf(s, "airlock.function")
		calls = append(calls, v.Emit())
		wantAttr(t, s, "airlock.call.async", "false")
		if s.StartTime().Before(run.StartTime()) || s.EndTime().After(run.EndTime()) {
			t.Errorf("call span %s is not within the run's", v.Emit())
		}
	}
	if !slices.Equal(calls, []string{"traceAdd", "traceGreet"}) {
		t.Errorf("call spans %q, want traceAdd then traceGreet", calls)
	}
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "s3cr3t") {
				t.Errorf("span %s holds a value that crossed: %s", s.Name(), kv.Key)
			}
		}
	}
}

// A failed run's span has the error's name, not its message, and the
// span's status is an error; a failed host call's span too.
func TestTraceFailedRun(t *testing.T) {
	rec := installRecorder(t)
	ctx, parent := otel.Tracer("test").Start(context.Background(), "caller")
	fail := func(string) (int, error) { return 0, errFailure }
	ex, err := airlock.Run(ctx, `try { fail("x") } catch {}; throw new TypeError("s3cr3t token")`, airlock.Options{
		Language: airlock.JavaScript,
		Globals:  map[string]any{"fail": fail},
	})
	if err != nil {
		t.Fatal(err)
	}
	ex.Wait()
	parent.End()
	run := endedUnder(t, rec, parent.SpanContext().SpanID(), "airlock.run")[0]
	wantAttr(t, run, "airlock.status", "error")
	wantAttr(t, run, "error.type", "TypeError")
	if run.Status().Code.String() != "Error" || strings.Contains(run.Status().Description, "s3cr3t") {
		t.Errorf("run span status %v %q", run.Status().Code, run.Status().Description)
	}
	var call sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Parent().SpanID() == run.SpanContext().SpanID() {
			call = s
		}
	}
	if call == nil {
		t.Fatal("no call span")
	}
	wantAttr(t, call, "error.type", "error")
	for _, s := range []sdktrace.ReadOnlySpan{run, call} {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "s3cr3t") || strings.Contains(kv.Value.Emit(), "boom") {
				t.Errorf("span %s holds a message: %s=%s", s.Name(), kv.Key, kv.Value.Emit())
			}
		}
	}
}

type failure struct{}

func (failure) Error() string { return "boom" }

var errFailure error = failure{}

// An executor's step has no span of its own; its host calls are spans
// under the caller's span.
func TestTraceExecutorHostCalls(t *testing.T) {
	rec := installRecorder(t)
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Cleanup(context.Background())
	ctx, parent := otel.Tracer("test").Start(context.Background(), "caller")
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ex.SendTools(ctx, map[string]any{"add": traceAdd}); err != nil {
		t.Fatal(err)
	}
	if _, err := ex.Run(ctx, `return add(1, 2)`); err != nil {
		t.Fatal(err)
	}
	parent.End()
	under := endedUnder(t, rec, parent.SpanContext().SpanID(), "airlock.call")
	v, _ := attrOf(under[0], "airlock.function")
	if len(under) != 1 || v.Emit() != "traceAdd" {
		t.Errorf("spans under the caller's: %d, function %q", len(under), v.Emit())
	}
}

// With no tracer provider installed, a run records nothing and its host
// calls cost what they did: a typed call allocates nothing more (the
// benchmarks of BENCHMARKS.md, "Traces off", measure the time).
func TestTraceOffRecordsNothing(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{})
	defer rt.Close()
	run := func(ctx context.Context, n int) {
		ex, err := rt.Run(ctx, `let s = 0; for (let i = 0; i < n; i++) s += add(i, 1); export default s`, airlock.Options{
			Language: airlock.JavaScript,
			Globals:  map[string]any{"add": traceAdd, "n": n},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res := ex.Wait(); res.Status != airlock.StatusSuccess {
			t.Fatal(res.Error)
		}
	}
	// The allocations of 1000 more calls in a run, with no provider: what
	// the loop's calls add over a run of one call.
	perCall := func(ctx context.Context) float64 {
		one := testing.AllocsPerRun(20, func() { run(ctx, 1) })
		many := testing.AllocsPerRun(20, func() { run(ctx, 1001) })
		return (many - one) / 1000
	}
	if a := perCall(context.Background()); a >= 0.5 {
		t.Errorf("a host call allocates %.2f times with tracing off", a)
	}
	// A provider that is installed but a context whose span does not
	// record (sampled out) costs no span either.
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sdktrace.NeverSample()))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	run(context.Background(), 3)
	otel.SetTracerProvider(prev)
	if n := len(rec.Started()); n != 0 {
		t.Errorf("%d spans started under a sampler that samples none", n)
	}
}

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP traces endpoint on loopback that keeps the
// spans it receives, with their resources' service names.
type collector struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			t.Errorf("the collector got %s %s, %d bytes it cannot read", r.Method, r.URL.Path, len(body))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					c.services = append(c.services, kv.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(c.Close)
	return c
}

// named is the spans received named name.
func (c *collector) named(name string) []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range c.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// airlock run, with OTEL_EXPORTER_OTLP_ENDPOINT set, sends the run's span
// and its host call's to the endpoint before it exits: the SDK is
// installed for the command and flushed at its end.
func TestOTLPRun(t *testing.T) {
	c := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.URL)
	t.Setenv("OTEL_SERVICE_NAME", "airlock-test")
	code, out, errs := cli(t, "", "run", "--input", `[{"id":1,"flagged":true},{"id":2}]`, "../../examples/scripts/report.js")
	if code != 0 || out != "{ scanned: 2 }\n" || errs != "[report] 1\n" {
		t.Fatalf("report: %d %q %q", code, out, errs)
	}
	runs := c.named("airlock.run")
	if len(runs) != 1 {
		t.Fatalf("%d airlock.run spans received, want 1", len(runs))
	}
	run := runs[0]
	if got := attrString(run, "airlock.status"); got != "success" {
		t.Errorf("airlock.status = %q", got)
	}
	calls := c.named("airlock.call")
	if len(calls) != 1 || string(calls[0].ParentSpanId) != string(run.SpanId) || string(calls[0].TraceId) != string(run.TraceId) {
		t.Fatalf("%d airlock.call spans under the run's, want the report call's", len(calls))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.services {
		if s != "airlock-test" {
			t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", s)
		}
	}
}

// airlock agent sends its turn, steps, model calls (with the tokens the
// endpoint counted) and tool calls, and the runs under them.
func TestOTLPAgent(t *testing.T) {
	c := newCollector(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.URL+"/v1/traces")
	code, out, errs := notesAgent(t)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	turns := c.named("invoke_agent code")
	steps := c.named("airlock.agent.step")
	tools := c.named("execute_tool fs.read-file")
	if len(turns) != 1 || len(steps) != 2 || len(tools) != 1 {
		t.Fatalf("received %d turn, %d step and %d fs.read-file spans, want 1, 2 and 1", len(turns), len(steps), len(tools))
	}
	var chats []*tracepb.Span
	c.mu.Lock()
	for _, s := range c.spans {
		if attrString(s, "gen_ai.operation.name") == "chat" {
			chats = append(chats, s)
		}
	}
	c.mu.Unlock()
	if len(chats) != 2 {
		t.Fatalf("%d chat spans, want 2", len(chats))
	}
	for _, ch := range chats {
		if attrInt(ch, "gen_ai.usage.input_tokens") != 7 || attrInt(ch, "gen_ai.usage.output_tokens") != 3 || attrString(ch, "gen_ai.provider.name") != "openai" {
			t.Errorf("chat span %s: %v", ch.Name, ch.Attributes)
		}
	}
	if attrString(tools[0], "gen_ai.tool.name") != "fs.read-file" {
		t.Errorf("tool span: %v", tools[0].Attributes)
	}
}

// With no OTEL_* variable, a command installs nothing: the environment
// decides, and names it cannot honour are said on stderr.
func TestTracesWanted(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
		warn bool
	}{
		{nil, false, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, false},
	} {
		want, warn := tracesWanted(func(k string) string { return c.env[k] })
		if want != c.want || (warn != "") != c.warn {
			t.Errorf("%v: %v %q, want %v (warning: %v)", c.env, want, warn, c.want, c.warn)
		}
	}
}

func attrString(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

func attrInt(s *tracepb.Span, key string) int64 {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetIntValue()
		}
	}
	return -1
}

// lockedBuffer is a writer read while the command writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// airlock serve sends an execution's span, and the run's under it, and
// flushes them when it stops.
func TestOTLPServe(t *testing.T) {
	c := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--allow-no-token", "--workspace", t.TempDir()}, strings.NewReader(""), &stdout, &stderr)
	}()
	addr := regexp.MustCompile(`"addr":"(127\.0\.0\.1:\d+)"`)
	var m []string
	for deadline := time.Now().Add(60 * time.Second); m == nil; time.Sleep(10 * time.Millisecond) {
		select {
		case code := <-exited:
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen: %s", stderr.String())
		}
		m = addr.FindStringSubmatch(stderr.String())
	}
	resp, err := http.Post("http://"+m[1]+"/execute", "application/json", strings.NewReader(`{"runtime": "javascript", "code": "export default 1 + 1"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	cancel()
	if code := <-exited; code != 0 {
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	}
	execs, runs := c.named("airlock.execute"), c.named("airlock.run")
	if len(execs) != 1 || len(runs) != 1 {
		t.Fatalf("received %d execute and %d run spans, want 1 and 1", len(execs), len(runs))
	}
	if string(runs[0].ParentSpanId) != string(execs[0].SpanId) || attrString(execs[0], "airlock.status") != "success" ||
		attrString(execs[0], "airlock.runtime") != "javascript" {
		t.Errorf("execute span %v, run span's parent %x", execs[0].Attributes, runs[0].ParentSpanId)
	}
}

package service

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads /metrics and parses it as the Prometheus text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return fams
}

// sample is the metric of a family with exactly these labels, or nil.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		match := len(got) == len(labels)/2
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && got[labels[i]] == labels[i+1]
		}
		if match {
			return m
		}
	}
	return nil
}

// value is a counter's or gauge's value (-1 when there is none).
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	m := sample(fams, name, labels...)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return -1
}

// TestMetrics: the metrics were hand-written Prometheus text, counters
// only. They now come from the Prometheus client: executions by runtime
// and status with a duration histogram each, executions in flight,
// rejections, tool callbacks by outcome with their times, the session
// workspaces' bytes and the stream's dropped lines, with the Go runtime's
// and the process's; /metrics parses as the exposition format.
func TestMetrics(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is not installed: the python runtime's metrics cannot be tested")
	}
	_, url := openAPIServer(t, Config{MaxConcurrent: 1, Insecure: os.Getenv("AIRLOCK_TEST_INSECURE") == "1"})
	release := make(chan struct{})
	held := make(chan struct{})
	var once sync.Once
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct{ Name string }
		json.NewDecoder(r.Body).Decode(&call)
		switch call.Name {
		case "hold":
			once.Do(func() { close(held) })
			<-release
		case "fail":
			w.Write([]byte(`{"error":"broken"}`))
			return
		}
		w.Write([]byte(`{"data":"1"}`))
	}))
	defer cb.Close()
	post := func(body string) int {
		t.Helper()
		resp, err := http.Post(url+"/execute", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	post(`{"runtime":"javascript","session_id":"js","callback_url":"` + cb.URL + `","code":"await callTool('ok'); try { await callTool('fail') } catch {} writeFile('a.txt', 'x'.repeat(1000)); setResult(1)"}`)
	post(`{"runtime":"javascript","code":"null.f()"}`)
	post(`{"runtime":"javascript","session_id":"in","code":"setResult(2)","files":[{"name":"in.txt","data":"enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6eno="}]}`) // 200 bytes in, none written
	post(`{"runtime":"python","session_id":"py","code":"open('b.txt', 'w').write('y' * 500)"}`)
	done := make(chan struct{})
	go func() {
		defer close(done)
		post(`{"runtime":"javascript","callback_url":"` + cb.URL + `","code":"await callTool('hold')"}`)
	}()
	<-held
	fams := scrape(t, url)
	if v := value(fams, "airlock_executions_in_flight", "runtime", "javascript"); v != 1 {
		t.Errorf("in flight during a held run: %v", v)
	}
	if status := post(`{"runtime":"javascript","code":"1"}`); status != 503 {
		t.Fatalf("busy: %d", status)
	}
	close(release)
	<-done

	fams = scrape(t, url)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"airlock_executions_total", []string{"runtime", "javascript", "status", "success"}, 3},
		{"airlock_executions_total", []string{"runtime", "javascript", "status", "error"}, 1},
		{"airlock_executions_total", []string{"runtime", "python", "status", "success"}, 1},
		{"airlock_executions_in_flight", []string{"runtime", "javascript"}, 0},
		{"airlock_executions_in_flight", []string{"runtime", "python"}, 0},
		{"airlock_rejected_total", nil, 1},
		{"airlock_tool_callbacks_total", []string{"runtime", "javascript", "outcome", "ok"}, 2},
		{"airlock_tool_callbacks_total", []string{"runtime", "javascript", "outcome", "error"}, 1},
		{"airlock_workspace_bytes", nil, 1700},
		{"airlock_stream_dropped_lines_total", nil, 0},
	} {
		if got := value(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Each execution's time is in its histogram, with the buckets.
	for _, c := range []struct {
		runtime, status string
		count           uint64
	}{{"javascript", "success", 3}, {"javascript", "error", 1}, {"python", "success", 1}} {
		if fams["airlock_execution_duration_seconds"].GetType() != dto.MetricType_HISTOGRAM {
			t.Fatalf("airlock_execution_duration_seconds is a %v", fams["airlock_execution_duration_seconds"].GetType())
		}
		m := sample(fams, "airlock_execution_duration_seconds", "runtime", c.runtime, "status", c.status)
		if m == nil || m.Histogram.GetSampleCount() != c.count || len(m.Histogram.Bucket) != len(runBuckets)+1 || m.Histogram.GetSampleSum() <= 0 {
			t.Errorf("histogram %s/%s: %v", c.runtime, c.status, m)
		}
	}
	if m := sample(fams, "airlock_tool_callback_duration_seconds", "runtime", "javascript"); fams["airlock_tool_callback_duration_seconds"].GetType() != dto.MetricType_HISTOGRAM || m.Histogram.GetSampleCount() != 3 {
		t.Errorf("tool callback histogram: %v", m)
	}
	if fams["go_goroutines"] == nil || fams["process_resident_memory_bytes"] == nil {
		t.Error("no Go runtime or process metrics")
	}
	// A deleted workspace leaves the gauge.
	req, _ := http.NewRequest(http.MethodDelete, url+"/workspace/js", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("delete: %v %v", resp, err)
	}
	if got := value(scrape(t, url), "airlock_workspace_bytes"); got != 700 {
		t.Errorf("workspace bytes after a deletion: %v", got)
	}
}

// BenchmarkExecuteJS is a trivial javascript execution in process, the
// metrics included (the histogram's observation, the in-flight gauge).
//
//	go test -run '^$' -bench 'BenchmarkExecuteJS|BenchmarkRunMetrics' -count 6 ./service
func BenchmarkExecuteJS(b *testing.B) {
	srv, err := New(Config{Workspace: b.TempDir()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	req := ExecuteRequest{Runtime: "javascript", Code: "setResult(1)"}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := srv.Execute(ctx, req, nil)
		if err != nil || resp.Output != "1" {
			b.Fatal(resp, err)
		}
	}
}

// BenchmarkRunMetrics is what the metrics cost one execution: the
// in-flight gauge up and down, the tool-call wrapper made, the count and
// the histogram's observation.
func BenchmarkRunMetrics(b *testing.B) {
	m := newMetrics()
	b.ReportAllocs()
	for b.Loop() {
		done := m.running("javascript")
		_ = m.countCalls("javascript", nil)
		m.observe("javascript", "success", 3*time.Millisecond)
		done()
	}
}

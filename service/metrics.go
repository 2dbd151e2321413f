package service

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, on a registry of its own
// (two servers in one process do not share them), served at /metrics by
// the Prometheus client, with the Go runtime's and the process's.
type metrics struct {
	reg      *prometheus.Registry
	handler  http.Handler
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
	rejected prometheus.Counter
	calls    *prometheus.CounterVec
	callTime *prometheus.HistogramVec
	wsBytes  prometheus.Gauge
	dropped  prometheus.Counter

	// byRuntime holds each runtime's series, made at the start (so that
	// they read 0, not absent, before the first execution, and a run
	// looks none up by its labels).
	byRuntime map[string]*runtimeMetrics

	mu       sync.Mutex
	sessions map[string]int64 // workspace directory → bytes at its last measure
}

// runtimeMetrics are the series of one runtime.
type runtimeMetrics struct {
	inFlight   prometheus.Gauge
	ok, failed prometheus.Counter
	callTime   prometheus.Observer
	runs       map[string]prometheus.Counter  // status →
	duration   map[string]prometheus.Observer // status →
}

// runtimes are the runtimes with the statuses of their executions.
var runtimes = map[string][]string{
	"python": {"success", "error", "terminated"}, "node": {"success", "error", "terminated"},
	"command":    {"success", "error", "terminated"}, // the legacy python-runtime's /execute
	"javascript": {"success", "error", "memory", "terminated", "link_error"},
	"typescript": {"success", "error", "memory", "terminated", "link_error"},
}

// runBuckets span an execution's times: a millisecond for a small
// javascript run to the 300 s cap.
var runBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), sessions: map[string]int64{}}
	f := promauto.With(m.reg)
	m.runs = f.NewCounterVec(prometheus.CounterOpts{Name: "airlock_executions_total", Help: "Executions by runtime and status."}, []string{"runtime", "status"})
	m.duration = f.NewHistogramVec(prometheus.HistogramOpts{Name: "airlock_execution_duration_seconds", Help: "Time an execution ran, by runtime and status.", Buckets: runBuckets}, []string{"runtime", "status"})
	m.inFlight = f.NewGaugeVec(prometheus.GaugeOpts{Name: "airlock_executions_in_flight", Help: "Executions running now, by runtime."}, []string{"runtime"})
	m.rejected = f.NewCounter(prometheus.CounterOpts{Name: "airlock_rejected_total", Help: "Requests refused with 503 because the server was busy (its executions or the bodies being read at the cap)."})
	m.calls = f.NewCounterVec(prometheus.CounterOpts{Name: "airlock_tool_callbacks_total", Help: "Tool callbacks the code made, by runtime and outcome (ok, error)."}, []string{"runtime", "outcome"})
	m.callTime = f.NewHistogramVec(prometheus.HistogramOpts{Name: "airlock_tool_callback_duration_seconds", Help: "Time a tool callback took, by runtime."}, []string{"runtime"})
	m.wsBytes = f.NewGauge(prometheus.GaugeOpts{Name: "airlock_workspace_bytes", Help: "Bytes in the session workspaces, as measured at the end of each one's last execution."})
	m.dropped = f.NewCounter(prometheus.CounterOpts{Name: "airlock_stream_dropped_lines_total", Help: "Lines of output a streaming client was too slow for."})
	m.byRuntime = map[string]*runtimeMetrics{}
	for rt, statuses := range runtimes {
		r := &runtimeMetrics{
			inFlight: m.inFlight.WithLabelValues(rt),
			ok:       m.calls.WithLabelValues(rt, "ok"), failed: m.calls.WithLabelValues(rt, "error"),
			callTime: m.callTime.WithLabelValues(rt),
			runs:     map[string]prometheus.Counter{}, duration: map[string]prometheus.Observer{},
		}
		for _, st := range statuses {
			r.runs[st] = m.runs.WithLabelValues(rt, st)
			r.duration[st] = m.duration.WithLabelValues(rt, st)
		}
		m.byRuntime[rt] = r
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// observe counts an execution that ended.
func (m *metrics) observe(runtime, status string, d time.Duration) {
	if r := m.byRuntime[runtime]; r != nil && r.runs[status] != nil {
		r.runs[status].Inc()
		r.duration[status].Observe(d.Seconds())
		return
	}
	m.runs.WithLabelValues(runtime, status).Inc()
	m.duration.WithLabelValues(runtime, status).Observe(d.Seconds())
}

// running counts an execution of runtime (one of runtimes) as running
// until the returned function is called.
func (m *metrics) running(runtime string) func() {
	g := m.byRuntime[runtime].inFlight
	g.Inc()
	return g.Dec
}

func (m *metrics) reject() { m.rejected.Inc() }

// streamDropped counts lines a streaming client was too slow for.
func (m *metrics) streamDropped(n int64) { m.dropped.Add(float64(n)) }

// countCalls counts and times the tool callbacks of an execution.
func (m *metrics) countCalls(runtime string, dispatch Dispatcher) Dispatcher {
	r := m.byRuntime[runtime]
	ok, failed, took := r.ok, r.failed, r.callTime
	return func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		start := time.Now()
		data, err := dispatch(ctx, name, args)
		took.Observe(time.Since(start).Seconds())
		if err != nil {
			failed.Inc()
		} else {
			ok.Inc()
		}
		return data, err
	}
}

// workspace records a session workspace's bytes (id its directory).
func (m *metrics) workspace(id string, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wsBytes.Add(float64(bytes - m.sessions[id]))
	m.sessions[id] = bytes
}

// workspaceGone forgets a session workspace that was deleted or evicted.
func (m *metrics) workspaceGone(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wsBytes.Sub(float64(m.sessions[id]))
	delete(m.sessions, id)
}

func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }

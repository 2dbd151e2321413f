package service

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
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
	"javascript": {"success", "error", "memory", "terminated", "link_error"},
	"typescript": {"success", "error", "memory", "terminated", "link_error"},
}

// runBuckets span an execution's times: a millisecond for a small
// javascript run to the 300 s cap.
var runBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), sessions: map[string]int64{}}
	f := promauto{m.reg}
	m.runs = f.counterVec("airlock_executions_total", "Executions by runtime and status.", "runtime", "status")
	m.duration = f.histogramVec("airlock_execution_duration_seconds", "Time an execution ran, by runtime and status.", runBuckets, "runtime", "status")
	m.inFlight = f.gaugeVec("airlock_executions_in_flight", "Executions running now, by runtime.", "runtime")
	m.rejected = f.counter("airlock_rejected_total", "Requests refused with 503 because the server was busy (its executions or the bodies being read at the cap).")
	m.calls = f.counterVec("airlock_tool_callbacks_total", "Tool callbacks the code made, by runtime and outcome (ok, error).", "runtime", "outcome")
	m.callTime = f.histogramVec("airlock_tool_callback_duration_seconds", "Time a tool callback took, by runtime.", prometheus.DefBuckets, "runtime")
	m.wsBytes = f.gauge("airlock_workspace_bytes", "Bytes in the session workspaces, as measured at the end of each one's last execution.")
	m.dropped = f.counter("airlock_stream_dropped_lines_total", "Lines of output a streaming client was too slow for.")
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

// promauto makes and registers metrics on a registry.
type promauto struct{ reg *prometheus.Registry }

func (p promauto) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	p.reg.MustRegister(c)
	return c
}

func (p promauto) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	p.reg.MustRegister(h)
	return h
}

func (p promauto) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	p.reg.MustRegister(g)
	return g
}

func (p promauto) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	p.reg.MustRegister(c)
	return c
}

func (p promauto) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	p.reg.MustRegister(g)
	return g
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

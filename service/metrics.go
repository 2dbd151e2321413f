package service

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"
)

// metrics are the server's counters, in the Prometheus text format.
type metrics struct {
	mu       sync.Mutex
	runs     map[[2]string]int64   // runtime, status → count
	seconds  map[[2]string]float64 // runtime, status → total duration
	rejected int64
	dropped  int64
}

func newMetrics() *metrics {
	return &metrics{runs: map[[2]string]int64{}, seconds: map[[2]string]float64{}}
}

func (m *metrics) observe(runtime, status string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{runtime, status}
	m.runs[k]++
	m.seconds[k] += d.Seconds()
}

func (m *metrics) reject() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rejected++
}

// streamDropped counts lines a streaming client was too slow for.
func (m *metrics) streamDropped(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropped += n
}

func (m *metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	keys := make([][2]string, 0, len(m.runs))
	for k := range m.runs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	fmt.Fprintln(w, "# HELP airlock_executions_total Executions by runtime and status.")
	fmt.Fprintln(w, "# TYPE airlock_executions_total counter")
	for _, k := range keys {
		fmt.Fprintf(w, "airlock_executions_total{runtime=%q,status=%q} %d\n", k[0], k[1], m.runs[k])
	}
	fmt.Fprintln(w, "# HELP airlock_execution_seconds_total Time spent executing, by runtime and status.")
	fmt.Fprintln(w, "# TYPE airlock_execution_seconds_total counter")
	for _, k := range keys {
		fmt.Fprintf(w, "airlock_execution_seconds_total{runtime=%q,status=%q} %g\n", k[0], k[1], m.seconds[k])
	}
	fmt.Fprintln(w, "# HELP airlock_rejected_total Executions refused with 503 because the server was busy.")
	fmt.Fprintln(w, "# TYPE airlock_rejected_total counter")
	fmt.Fprintf(w, "airlock_rejected_total %d\n", m.rejected)
	fmt.Fprintln(w, "# HELP airlock_stream_dropped_lines_total Lines of output a streaming client was too slow for.")
	fmt.Fprintln(w, "# TYPE airlock_stream_dropped_lines_total counter")
	fmt.Fprintf(w, "airlock_stream_dropped_lines_total %d\n", m.dropped)
}

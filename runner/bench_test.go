package runner_test

import (
	"bytes"
	"context"
	"net/http"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// BenchmarkExecute is the latency of a hello-world through the service, per
// runtime, against a bare interpreter spawn measured in the same run.
func BenchmarkExecute(b *testing.B) {
	srv, url := serve(b, service.Config{})
	r := runner.NewHTTPRunner(url)
	defer r.Close()
	// The bare spawns run the same executables as the service.
	for _, c := range []struct{ name, runtime, code, bare string }{
		{"python", "python", "set_result('hello')", srv.PythonBinary()},
		{"node", "node", "setResult('hello')", srv.NodeBinary()},
		{"javascript", "javascript", "setResult('hello')", ""},
	} {
		if c.bare != "" {
			arg := map[string][]string{"python": {"-c", "print('hello')"}, "node": {"-e", "console.log('hello')"}}[c.runtime]
			b.Run(c.name+"/bare-spawn", func(b *testing.B) {
				for b.Loop() {
					if err := exec.Command(c.bare, arg...).Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(c.name+"/service", func(b *testing.B) {
			for b.Loop() {
				res, err := r.Run(context.Background(), runner.CodeRequest{Code: c.code, Runtime: c.runtime}, nil)
				if err != nil || res.Output != `"hello"` {
					b.Fatalf("%+v, %v", res, err)
				}
			}
		})
	}
}

// BenchmarkJavaScriptThroughput is hello-world executions per second of the
// in-process javascript runtime over loopback HTTP, 8 clients at once.
func BenchmarkJavaScriptThroughput(b *testing.B) {
	_, url := serve(b, service.Config{MaxConcurrent: 64})
	body := []byte(`{"code":"setResult('hello')","runtime":"javascript"}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan struct{}, b.N)
	for i := 0; i < b.N; i++ {
		work <- struct{}{}
	}
	close(work)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				resp, err := client.Post(url+"/execute", "application/json", bytes.NewReader(body))
				if err != nil || resp.StatusCode != 200 {
					b.Error(err)
					return
				}
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "exec/s")
}

package service_test

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/service"
)

// With Config.Fetch, javascript executions have fetch under the policy:
// an allowed host answers, with the secret added by the server; another
// host is refused; without it there is no fetch; with workers the server
// refuses the configuration.
func TestServiceFetch(t *testing.T) {
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "key=%t", r.Header.Get("X-Key") == "server-secret")
	}))
	defer api.Close()
	roots := x509.NewCertPool()
	roots.AddCert(api.Certificate())
	policy := &airlock.FetchPolicy{Allow: []string{"api.example.com"}, RootCAs: roots,
		Secrets: map[string]map[string]string{"api.example.com": {"X-Key": "server-secret"}},
		Resolve: map[string]string{"api.example.com:443": strings.TrimPrefix(api.URL, "https://")}}
	code := `const r = await fetch("https://api.example.com/");
let refused = ""; try { await fetch("https://else.example.net/"); } catch (e) { refused = e.name; }
setResult({ text: await r.text(), refused });`
	run := func(url string) map[string]any {
		req, _ := json.Marshal(map[string]any{"code": code, "runtime": "javascript", "timeout": 60})
		resp, err := http.Post(url+"/v1/execute", "application/json", bytes.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		b, _ := io.ReadAll(resp.Body)
		json.Unmarshal(b, &out)
		return out
	}
	out := run(newServer(t, service.Config{Fetch: policy}))
	if out["status"] != "success" || !strings.Contains(fmt.Sprint(out["output"]), `"text":"key=true"`) ||
		!strings.Contains(fmt.Sprint(out["output"]), `"refused":"TypeError"`) || strings.Contains(fmt.Sprint(out), "server-secret") {
		t.Fatalf("with fetch: %v", out)
	}
	out = run(newServer(t, service.Config{}))
	if out["status"] == "success" || !strings.Contains(fmt.Sprint(out), "fetch is not defined") {
		t.Fatalf("without fetch: %v", out)
	}
	if _, err := service.New(service.Config{Fetch: policy, Workers: 1, Workspace: t.TempDir()}, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("fetch with workers was accepted")
	}
}

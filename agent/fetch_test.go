package agent_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
)

// fetchInterpreter is an Interpreter with fetch to api.example.com, a
// local TLS server that says whether the secret arrived. (Resolve maps the
// name to loopback: nothing is looked up or dialled beyond it.)
func fetchInterpreter(t *testing.T) (*agent.Interpreter, *airlock.Fetcher) {
	t.Helper()
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"authorized":%t}`, r.Header.Get("X-Key") == "agent-s3cret")
	}))
	t.Cleanup(api.Close)
	roots := x509.NewCertPool()
	roots.AddCert(api.Certificate())
	f := airlock.Fetch(airlock.FetchPolicy{
		Allow:   []string{"api.example.com"},
		Secrets: map[string]map[string]string{"api.example.com": {"X-Key": "agent-s3cret"}},
		Resolve: map[string]string{"api.example.com:443": strings.TrimPrefix(api.URL, "https://")},
		RootCAs: roots,
	})
	it := agent.NewInterpreter(agent.Config{})
	if err := it.Register("fetch", f); err != nil {
		t.Fatal(err)
	}
	return it, f
}

// A Fetcher registered on the Interpreter as fetch is the code's fetch in
// every mode: a CodeAgent's steps (an executor) and code mode's
// executions (a fresh sandbox each); its requests are in its record, and
// each step's and execution's own in theirs.
func TestFetchInTheAgent(t *testing.T) {
	code := `const r = await fetch("https://api.example.com/me"); const data = await r.json();`
	t.Run("CodeAgent", func(t *testing.T) {
		it, f := fetchInterpreter(t)
		m := &fakeModel{script: []agent.Completion{codeReply(code + "\nfinal_answer(data.authorized)")}}
		a := &agent.CodeAgent{Model: m, Interpreter: it, Executor: airlock.ExecutorOptions{Timeout: 20 * time.Second}}
		tr, err := a.Run(context.Background(), "call the API")
		if err != nil || fmt.Sprint(tr.FinalAnswer) != "true" {
			t.Fatalf("%v, %+v", err, tr)
		}
		if recs := f.Records(); len(recs) != 1 || recs[0].Status != 200 {
			t.Errorf("records %+v", recs)
		}
		if fs := tr.Steps[0].Fetches; len(fs) != 1 || fs[0].Host != "api.example.com" || fs[0].Path != "/me" || fs[0].Status != 200 {
			t.Errorf("the step's fetches: %+v", fs)
		}
		if p := m.request(0).Messages[0].Content; !strings.Contains(p, "fetch(") {
			t.Errorf("the prompt does not show fetch:\n%s", p)
		}
	})
	t.Run("Execute", func(t *testing.T) {
		it, _ := fetchInterpreter(t)
		x := it.Execute(context.Background(), code+"\ncomplete({ response: String(data.authorized) })", agent.ExecuteOptions{})
		if x.Status != airlock.StatusSuccess || x.Output != "true" {
			t.Fatalf("%+v", x)
		}
		if len(x.Fetches) != 1 || x.Fetches[0].Status != 200 {
			t.Errorf("the execution's fetches: %+v", x.Fetches)
		}
		// The next execution reports its own requests only.
		x = it.Execute(context.Background(), `complete({ response: "none" })`, agent.ExecuteOptions{})
		if len(x.Fetches) != 0 {
			t.Errorf("a later execution's fetches: %+v", x.Fetches)
		}
	})
}

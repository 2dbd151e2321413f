package mcp_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/mcp"
)

// With Options.Fetch, programs have fetch to the allowed hosts, with the
// secrets added outside the sandbox, and run_code's description names the
// hosts; a host not allowed is refused. (The server is on loopback, the
// allowed name mapped to it by Resolve: nothing is looked up or dialled
// beyond it.)
func TestRunCode_Fetch(t *testing.T) {
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"authorized":%t}`, r.Header.Get("Authorization") == "Bearer mcp-s3cret")
	}))
	defer api.Close()
	roots := x509.NewCertPool()
	roots.AddCert(api.Certificate())
	s := newServer(t, mcp.Options{Fetch: &airlock.FetchPolicy{
		Allow:   []string{"api.example.com"},
		Secrets: map[string]map[string]string{"api.example.com": {"Authorization": "Bearer mcp-s3cret"}},
		Resolve: map[string]string{"api.example.com:443": strings.TrimPrefix(api.URL, "https://")},
		RootCAs: roots,
	}})
	cs := client(t, s)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := tools.Tools[0].Description; !strings.Contains(d, "Network: fetch") || !strings.Contains(d, "these hosts only: api.example.com.") {
		t.Errorf("description: %s", d)
	}
	r := runCode(t, cs, map[string]any{"language": "javascript", "code": `
const data = await (await fetch("https://api.example.com/me")).json();
let refused = "";
try { await fetch("https://other.example.net/"); } catch (e) { refused = e.message; }
export default { data, refused };`})
	if r.isError || !strings.Contains(r.text, "authorized: true") || !strings.Contains(r.text, "other.example.net") || strings.Contains(r.text, "s3cret") {
		t.Errorf("%+v", r)
	}
}

package service_test

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/service"
)

// With Config.Fetch, javascript executions have fetch under the policy:
// an allowed host answers, with the secret added by the server; another
// host is refused, with or without worker processes; without it there is
// no fetch.
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
	for _, workers := range []int{0, 1} { // in the server's process, and in a worker process
		out := run(newServer(t, service.Config{Fetch: policy, Workers: workers}))
		if out["status"] != "success" || !strings.Contains(fmt.Sprint(out["output"]), `"text":"key=true"`) ||
			!strings.Contains(fmt.Sprint(out["output"]), `"refused":"TypeError"`) || strings.Contains(fmt.Sprint(out), "server-secret") {
			t.Fatalf("with fetch, %d workers: %v", workers, out)
		}
	}
	out := run(newServer(t, service.Config{}))
	if out["status"] == "success" || !strings.Contains(fmt.Sprint(out), "fetch is not defined") {
		t.Fatalf("without fetch: %v", out)
	}
}

// With Fetch, the jail's Python and Node reach an allowed host through the
// server's proxy (HTTPS_PROXY, the jail's own CA), the host's secret added
// by the server; a host not allowed is refused at the proxy, and nothing
// else is reachable (the server's loopback is not the jail's). The test
// server is on the host's loopback, which only the proxy can reach.
func TestServiceFetch_PythonAndNode(t *testing.T) {
	if os.Getenv("AIRLOCK_TEST_INSECURE") == "1" {
		t.Skip("the proxy is the jail's way out; without bubblewrap the code has the host's network")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bubblewrap: python and node are refused")
	}
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "key=%t path=%s", r.Header.Get("X-Key") == "jail-secret", r.URL.Path)
	}))
	defer api.Close()
	roots := x509.NewCertPool()
	roots.AddCert(api.Certificate())
	apiAddr := strings.TrimPrefix(api.URL, "https://")
	policy := &airlock.FetchPolicy{Allow: []string{"api.example.com"}, RootCAs: roots,
		Secrets: map[string]map[string]string{"api.example.com": {"X-Key": "jail-secret"}},
		Resolve: map[string]string{"api.example.com:443": apiAddr}}
	url := newServer(t, service.Config{Fetch: policy})
	for _, c := range []struct{ runtime, code string }{
		{"python", `
import json, os, socket, urllib.request, urllib.error
text = urllib.request.urlopen("https://api.example.com/py").read().decode()
try:
    urllib.request.urlopen("https://else.example.net/")
    refused = "no"
except (urllib.error.URLError, OSError) as e:
    refused = str(e)
try:
    socket.create_connection(("127.0.0.1", ` + apiAddr[strings.LastIndex(apiAddr, ":")+1:] + `), timeout=5)
    direct = "reached"
except OSError as e:
    direct = "refused"
import http.server, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"local")
    def log_message(self, *a): pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
local = urllib.request.urlopen("http://127.0.0.1:%d/" % srv.server_port).read().decode()
set_result({"text": text, "refused": refused, "direct": direct, "local": local, "secret_seen": "jail-secret" in json.dumps(dict(os.environ))})
`},
		{"node", `
const http = require("http"), tls = require("tls"), net = require("net");
const proxy = new URL(process.env.HTTPS_PROXY);
const viaProxy = (host) => new Promise((resolve, reject) => {
  http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: host + ":443" })
    .on("connect", (res, socket) => {
      if (res.statusCode !== 200) { socket.destroy(); return resolve("CONNECT " + res.statusCode); }
      const s = tls.connect({ socket, servername: host }, () => s.write("GET /js HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n"));
      let buf = ""; s.on("data", (d) => { buf += d; }); s.on("end", () => resolve(buf)); s.on("error", reject);
    }).on("error", reject).end();
});
const text = (await viaProxy("api.example.com")).split("\r\n\r\n")[1];
const fetched = await (await fetch("https://api.example.com/fetch")).text(); // Node's own fetch
const refused = await viaProxy("else.example.net");
const direct = await new Promise((resolve) => net.connect(` + apiAddr[strings.LastIndex(apiAddr, ":")+1:] + `, "127.0.0.1").on("connect", () => resolve("reached")).on("error", () => resolve("refused")));
setResult({ text, fetched, refused, direct, secret_seen: JSON.stringify(process.env).includes("jail-secret") });
`},
	} {
		out := map[string]any{}
		if err := json.Unmarshal(execute(t, url, c.runtime, c.code), &out); err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		json.Unmarshal([]byte(fmt.Sprint(out["output"])), &res)
		want := "key=true path=/py"
		if c.runtime == "node" {
			want = "key=true path=/js"
		}
		if c.runtime == "node" && (res["fetched"] != "key=true path=/fetch" || out["logs"] != "") { // Node's own fetch, through the proxy, and no warning of it
			t.Errorf("node: fetch: %v", out)
		}
		if c.runtime == "python" && res["local"] != "local" { // the jail's own loopback is off the proxy (NO_PROXY)
			t.Errorf("python: a server on the jail's loopback: %v", out)
		}
		if res["text"] != want || !strings.Contains(fmt.Sprint(res["refused"]), "403") || res["direct"] != "refused" || res["secret_seen"] != false {
			t.Errorf("%s: %v", c.runtime, out)
		}
	}
}

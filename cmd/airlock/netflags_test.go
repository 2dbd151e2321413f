package main

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `airlock run --allow-net`: the program gets fetch to the hosts named,
// the secrets file's headers reach the server and appear nowhere in what
// the command prints, another host is refused by name, and the net flags
// without --allow-net are usage errors. (The server is on loopback, named
// by --resolve and trusted by --ca-file.)
func TestCLI_AllowNet(t *testing.T) {
	net, dir, secrets := allowNetAPI(t, "k-123-secret")
	file := filepath.Join(dir, "f.js")
	os.WriteFile(file, []byte(`
const r = await fetch("https://api.example.com/me", { headers: { "x-api-key": "guess" } });
let refused = "";
try { await fetch("https://other.example.net/"); } catch (e) { refused = e.message; }
console.log(refused);
export default await r.text();`), 0o644)
	code, out, errs := exitCode(t, command(t, append([]string{"run", file}, net...)...))
	if code != 0 || out != "'authorized=true'\n" || !strings.Contains(errs, "other.example.net refused") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = exitCode(t, command(t, append([]string{"run", file, "--json"}, net...)...))
	if code != 0 || strings.Contains(out+errs, "k-123-secret") {
		t.Fatalf("--json: exit %d, the secret printed: %q %q", code, out, errs)
	}
	// Without --allow-net there is no fetch.
	code, _, errs = exitCode(t, command(t, "run", file))
	if code != 1 || !strings.Contains(errs, "fetch is not defined") {
		t.Fatalf("without --allow-net: exit %d, stderr %q", code, errs)
	}
	// (a secrets file that is not JSON: the error quotes none of it)
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte(`{"api.example.com": {"X-Api-Key": "k-123-secret"`), 0o600)
	for _, bad := range [][]string{{"--secrets", secrets}, {"--allow-http"}, {"--resolve", "a:1=b:2"},
		{"--allow-net", "x", "--secrets", broken},
		{"--allow-net", "x", "--resolve", "nonsense"}, {"--allow-net", "x", "--ca-file", file}} {
		code, _, errs := exitCode(t, command(t, append([]string{"run", file}, bad...)...))
		if code != 2 || strings.Contains(errs, "k-123-secret") {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errs)
		}
	}
}

// The same flags give fetch to `airlock repl`'s steps and to `airlock
// agent`'s code (each mode); the secret is never printed.
func TestCLI_AllowNetInTheOtherCommands(t *testing.T) {
	net, _, _ := allowNetAPI(t, "k-456-secret")

	code, out, errs := cli(t, "await (await fetch('https://api.example.com/')).text()\n", append([]string{"repl", "--tools", "none"}, net...)...)
	if code != 0 || !strings.Contains(out, "authorized=true") || strings.Contains(out+errs, "k-456-secret") {
		t.Errorf("repl: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = cli(t, "typeof fetch\n", "repl", "--tools", "none")
	if code != 0 || !strings.Contains(out, "'undefined'") {
		t.Errorf("repl without --allow-net: exit %d, stdout %q", code, out)
	}

	t.Setenv("OPENAI_API_KEY", "k")
	for _, mode := range []struct{ name, reply string }{
		{"code", "```js\nconst t = await (await fetch('https://api.example.com/')).text();\nfinal_answer(t)\n```"},
		{"codemode", "```js\nconst t = await (await fetch('https://api.example.com/')).text();\ncomplete({ response: t })\n```"},
	} {
		srv := model(t, mode.reply)
		code, out, errs := cli(t, "", append([]string{"agent", "--mode", mode.name, "--base-url", srv.URL + "/v1", "call the API"}, net...)...)
		if code != 0 || !strings.Contains(out, "Final answer: authorized=true") || strings.Contains(out+errs, "k-456-secret") {
			t.Errorf("agent --mode %s: exit %d\n%s\n%s", mode.name, code, out, errs)
		}
	}

}

// allowNetAPI is a TLS server on loopback, named api.example.com by the
// flags net returns, that answers "authorized=true" when the request has
// secret as its X-Api-Key, which the secrets file (in dir) gives the host.
func allowNetAPI(t *testing.T, secret string) (net []string, dir, secrets string) {
	t.Helper()
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "authorized=%t", r.Header.Get("X-Api-Key") == secret)
	}))
	t.Cleanup(api.Close)
	dir = t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}), 0o600)
	secrets = filepath.Join(dir, "secrets.json")
	os.WriteFile(secrets, []byte(`{"api.example.com": {"X-Api-Key": "`+secret+`"}}`), 0o600)
	return []string{"--allow-net", "api.example.com", "--secrets", secrets, "--ca-file", ca,
		"--resolve", "api.example.com:443=" + strings.TrimPrefix(api.URL, "https://")}, dir, secrets
}

package service_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/airlockrun/airlock/service"
)

// filesClient speaks the files API of a server at url for a session, with
// a bearer token when token is set.
type filesClient struct {
	t            *testing.T
	url, session string
	token        string
}

func (c *filesClient) do(method, path string, body io.Reader, header map[string]string) (int, []byte, http.Header) {
	c.t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	u := c.url + "/v1/files/" + path
	if c.session != "" {
		u += sep + "session_id=" + c.session
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// (RoundTrip: a redirect is an answer, not followed)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

func (c *filesClient) want(status int, method, path string, body io.Reader) []byte {
	c.t.Helper()
	got, b, _ := c.do(method, path, body, nil)
	if got != status {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, got, b, status)
	}
	return b
}

// The files API in sandboxd's shape: a file written is read back whole,
// with its parents made; HEAD says its length; a directory is listed; the
// mode asked for is kept; a multipart body's "file" part is the file;
// deleting a file, a directory that is not empty (a conflict unless
// recursive), a missing file (404); and what the API wrote is what an
// execution of the same session reads.
func TestFilesAPI_RoundTrip(t *testing.T) {
	url := newServer(t, service.Config{})
	c := &filesClient{t: t, url: url, session: "files-1"}
	c.want(http.StatusNotFound, "GET", "src/main.py", nil)
	c.want(http.StatusNoContent, "PUT", "src/main.py", strings.NewReader("print('hi')\n"))
	if got := string(c.want(http.StatusOK, "GET", "src/main.py", nil)); got != "print('hi')\n" {
		t.Fatalf("read back %q", got)
	}
	// sandboxd's clients encode the slashes of a path (%2F)
	if got := string(c.want(http.StatusOK, "GET", "src%2Fmain.py", nil)); got != "print('hi')\n" {
		t.Fatalf("read back by an encoded path %q", got)
	}
	_, _, h := c.do("HEAD", "src/main.py", nil, nil)
	if h.Get("Content-Length") != "12" || h.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("HEAD headers %v", h)
	}
	c.want(http.StatusNoContent, "PUT", "src/run.sh?mode=0755", strings.NewReader("#!/bin/sh\n"))
	c.want(http.StatusNoContent, "PUT", "src/main.py", strings.NewReader("print('again')\n")) // overwrite
	var listing struct {
		Path    string
		Entries []struct {
			Name, Type, Mode string
			ModifiedAt       string `json:"modified_at"`
			Size             int64
		}
	}
	if err := json.Unmarshal(c.want(http.StatusOK, "GET", "src/", nil), &listing); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range listing.Entries {
		got[e.Name] = e.Type + " " + e.Mode
	}
	if listing.Path != "/src" || len(got) != 2 || got["main.py"] != "file 0644" || got["run.sh"] != "file 0755" {
		t.Fatalf("listing %+v", listing)
	}
	if err := json.Unmarshal(c.want(http.StatusOK, "GET", "", nil), &listing); err != nil || listing.Path != "/" ||
		len(listing.Entries) != 1 || listing.Entries[0].Type != "directory" {
		t.Fatalf("root listing %+v, %v", listing, err)
	}

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("note", "not the file")
	fw, _ := mw.CreateFormFile("file", "data.csv")
	fw.Write([]byte("a,b\n1,2\n"))
	mw.Close()
	if st, b, _ := c.do("PUT", "data.csv", &form, map[string]string{"Content-Type": mw.FormDataContentType()}); st != http.StatusNoContent {
		t.Fatalf("multipart PUT: %d %s", st, b)
	}
	if got := string(c.want(http.StatusOK, "GET", "data.csv", nil)); got != "a,b\n1,2\n" {
		t.Fatalf("multipart file %q", got)
	}

	// the session's code reads what the API wrote
	req, _ := json.Marshal(map[string]any{"code": `setResult(readFile("data.csv"))`, "runtime": "javascript", "session_id": "files-1"})
	resp, err := http.Post(url+"/v1/execute", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `a,b`) || !strings.Contains(string(b), `1,2`) {
		t.Fatalf("the execution read %s", b)
	}

	c.want(http.StatusConflict, "DELETE", "src", nil)
	c.want(http.StatusNoContent, "DELETE", "src/run.sh", nil)
	c.want(http.StatusNotFound, "DELETE", "src/run.sh", nil)
	c.want(http.StatusNoContent, "DELETE", "src?recursive=true", nil)
	c.want(http.StatusNotFound, "GET", "src/main.py", nil)
	c.want(http.StatusForbidden, "DELETE", "", nil) // the workspace itself: DELETE /workspace/{id}
	c.want(http.StatusBadRequest, "PUT", "", strings.NewReader("x"))
	c.want(http.StatusNoContent, "PUT", "dir/f", strings.NewReader("x"))
	c.want(http.StatusConflict, "PUT", "dir", strings.NewReader("x")) // a directory is not overwritten
	c.want(http.StatusBadRequest, "PUT", "x?mode=777", strings.NewReader("x"))
	c.want(http.StatusBadRequest, "DELETE", "data.csv?recursive=maybe", nil)

	c.session = ""
	c.want(http.StatusBadRequest, "GET", "data.csv", nil)
	if st, b, _ := c.do("GET", "data.csv", nil, map[string]string{"X-Session-ID": "files-1"}); st != http.StatusOK || string(b) != "a,b\n1,2\n" {
		t.Fatalf("by header: %d %s", st, b)
	}
	if st, _, h := c.do("POST", "data.csv", nil, nil); st != http.StatusMethodNotAllowed || h.Get("Allow") == "" {
		t.Fatalf("POST: %d %v", st, h)
	}

	var health struct {
		Status string
	}
	resp, err = http.Get(url + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if resp.StatusCode != 200 || health.Status != "ok" {
		t.Fatalf("health %d %+v", resp.StatusCode, health)
	}
	var meta struct {
		Env map[string]string
	}
	resp, err = http.Get(url + "/v1/metadata")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if !strings.HasPrefix(meta.Env["AIRLOCK_RUNTIMES"], "javascript,typescript") || meta.Env["AIRLOCK_WORKSPACE_QUOTA_BYTES"] == "" {
		t.Fatalf("metadata %+v", meta)
	}
}

// A session's files belong to the credential that made the session: another
// token reads, writes and deletes none of them; no token at all is refused.
func TestFilesAPI_Ownership(t *testing.T) {
	url := newServer(t, service.Config{Tokens: []string{"alice-token", "bob-token"}})
	alice := &filesClient{t: t, url: url, session: "shared-name", token: "alice-token"}
	bob := &filesClient{t: t, url: url, session: "shared-name", token: "bob-token"}
	alice.want(http.StatusNoContent, "PUT", "secret.txt", strings.NewReader("alice's"))
	bob.want(http.StatusForbidden, "GET", "secret.txt", nil)
	bob.want(http.StatusForbidden, "GET", "", nil)
	bob.want(http.StatusForbidden, "PUT", "secret.txt", strings.NewReader("bob's"))
	bob.want(http.StatusForbidden, "DELETE", "secret.txt", nil)
	anonymous := &filesClient{t: t, url: url, session: "shared-name"}
	anonymous.want(http.StatusUnauthorized, "GET", "secret.txt", nil)
	if got := string(alice.want(http.StatusOK, "GET", "secret.txt", nil)); got != "alice's" {
		t.Fatalf("alice reads %q", got)
	}
}

// A write is bounded by what is left of the workspace quota: a body past it
// is refused (413), leaves nothing behind, and the file it would have
// replaced is intact.
func TestFilesAPI_Quota(t *testing.T) {
	url := newServer(t, service.Config{WorkspaceQuotaBytes: 4096})
	c := &filesClient{t: t, url: url, session: "quota-1"}
	c.want(http.StatusNoContent, "PUT", "a.bin", bytes.NewReader(make([]byte, 1000)))
	c.want(http.StatusRequestEntityTooLarge, "PUT", "a.bin", bytes.NewReader(make([]byte, 5000)))
	if got := c.want(http.StatusOK, "GET", "a.bin", nil); len(got) != 1000 {
		t.Fatalf("the file is %d bytes after a refused write", len(got))
	}
	var listing struct{ Entries []struct{ Name string } }
	json.Unmarshal(c.want(http.StatusOK, "GET", "", nil), &listing)
	if len(listing.Entries) != 1 {
		t.Fatalf("left behind: %+v", listing.Entries)
	}
	// Writes of one session are measured one after the other: of four
	// uploads at once that each fit alone, one fits.
	var wg sync.WaitGroup
	statuses := make(chan int, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _, _ := c.do("PUT", fmt.Sprintf("p%d.bin", i), bytes.NewReader(make([]byte, 2500)), nil)
			statuses <- st
		}()
	}
	wg.Wait()
	close(statuses)
	ok := 0
	for st := range statuses {
		if st == http.StatusNoContent {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d uploads of 2500 bytes fit in a 4096-byte quota holding 1000", ok)
	}
	// A path is bounded (64 parts): its directories would be entries.
	c.want(http.StatusBadRequest, "PUT", strings.Repeat("d/", 64)+"f", strings.NewReader("x"))
}

// Hostile paths: "..", encoded or not, absolute paths, NUL, and a symbolic
// link (left by code) that leads out of the workspace: none reads or
// writes outside it (a PUT or DELETE of the link's own name replaces or
// removes the link, not what it points to). (A ".." that ServeMux sees
// unencoded it answers with a redirect to the cleaned path, outside the
// files API; the encoded ones below reach the handler.)
func TestFilesAPI_HostilePaths(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "host.txt"), []byte("host"), 0o644)
	url := newServer(t, service.Config{Workspace: root})
	c := &filesClient{t: t, url: url, session: "hostile-1"}
	c.want(http.StatusNoContent, "PUT", "ok.txt", strings.NewReader("ok"))
	ws := filepath.Join(root, "hostile-1")
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "host.txt"), filepath.Join(ws, "host-link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"%2E%2E/hostile-1/ok.txt", "..%2Fhostile-1%2Fok.txt", "a/%2e%2e/%2e%2e/x", "%2Fetc%2Fpasswd",
		"x%00y", "out/host.txt", "host-link"} {
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			var body io.Reader
			if method == "PUT" {
				body = strings.NewReader("written")
			}
			st, b, _ := c.do(method, p, body, nil)
			if p == "host-link" && method != "GET" {
				// the link itself, an entry of the workspace, is replaced
				// or removed; what it points to is not touched (below)
				continue
			}
			if st != http.StatusForbidden && st != http.StatusNotFound && st != http.StatusBadRequest && st != http.StatusMovedPermanently {
				t.Errorf("%s %s: %d %s", method, p, st, b)
			}
			if strings.Contains(string(b), root) || strings.Contains(string(b), outside) {
				t.Errorf("%s %s: the answer names a host path: %s", method, p, b)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "host.txt")); err != nil || string(b) != "host" {
		t.Fatalf("the file outside: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("written outside: %v", entries)
	}
}

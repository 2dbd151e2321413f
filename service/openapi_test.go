package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"iter"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/airlockrun/airlock"
)

// loadOpenAPI loads and validates the committed document with
// kin-openapi (OpenAPI 3.1: its schemas as JSON Schema 2020-12).
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json does not validate: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	return doc
}

// docPath is the document's path of a ServeMux pattern: "{x...}" is "{x}".
func docPath(pattern string) string {
	return strings.ReplaceAll(strings.ReplaceAll(pattern, "...}", "}"), "{$}", "")
}

// wildcard is a ServeMux pattern's wildcard.
var wildcard = regexp.MustCompile(`\{(\w+)(\.\.\.)?\}`)

var allMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodTrace}

// TestOpenAPIRoutes: the document describes exactly the routes the
// server registers on its mux, each with the methods it answers (any other
// is a 405 naming the one), their path parameters, the request headers
// the server reads and the response headers it sets; the server serves
// the committed document.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	srv, url := openAPIServer(t, Config{})
	var registered []string
	for _, r := range srv.routes() {
		registered = append(registered, docPath(r.pattern))
		item := doc.Paths.Find(docPath(r.pattern))
		if item == nil {
			continue // reported below
		}
		var want []string
		for _, w := range wildcard.FindAllStringSubmatch(r.pattern, -1) {
			want = append(want, w[1])
		}
		for m, op := range item.Operations() {
			var got []string
			for _, p := range op.Parameters {
				if p.Value.In == "path" {
					got = append(got, p.Value.Name)
				}
			}
			if !slices.Equal(want, got) {
				t.Errorf("%s %s: path parameters %v in the document, %v on the mux", m, r.pattern, got, want)
			}
		}
	}
	described := doc.Paths.Keys()
	sort.Strings(registered)
	sort.Strings(described)
	if !slices.Equal(registered, described) {
		t.Fatalf("the mux registers %v, the document describes %v", registered, described)
	}
	// The methods: a described one is answered (not 405), any other is 405
	// with Allow naming the described one; /health answers any method, as
	// the reference's, and says so.
	for _, path := range described {
		item := doc.Paths.Value(path)
		ops := item.Operations()
		anyMethod := false
		for _, op := range ops {
			anyMethod = anyMethod || op.Extensions["x-airlock-any-method"] == true
		}
		concrete := strings.ReplaceAll(path, "{session_id}", "s")
		for _, m := range allMethods {
			req, _ := http.NewRequest(m, url+concrete, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			_, isDescribed := ops[m]
			switch {
			case isDescribed || anyMethod:
				if resp.StatusCode == http.StatusMethodNotAllowed {
					t.Errorf("%s %s: 405, but the document describes it", m, path)
				}
			case resp.StatusCode != http.StatusMethodNotAllowed:
				t.Errorf("%s %s: %d, but the document does not describe it", m, path, resp.StatusCode)
			case len(ops) == 1 && ops[resp.Header.Get("Allow")] == nil:
				t.Errorf("%s %s: Allow %q", m, path, resp.Header.Get("Allow"))
			}
		}
	}
	// The request headers the server reads are the document's header
	// parameters, and Authorization (its security scheme).
	read := map[string]bool{}
	for _, lit := range sourceCalls(t, "Header.Get") {
		read[lit] = true
	}
	params := map[string]bool{}
	for _, path := range described {
		for _, op := range doc.Paths.Value(path).Operations() {
			for _, p := range op.Parameters {
				if p.Value.In == "header" {
					params[p.Value.Name] = true
				}
			}
		}
	}
	if s := doc.Components.SecuritySchemes["bearer"]; s == nil || s.Value.Scheme != "bearer" {
		t.Fatal("no bearer security scheme")
	}
	params["Authorization"] = true
	// Content-Type tells apart the media types of a request body that has
	// more than one (the files API's PUT: raw bytes or a multipart form).
	for _, path := range described {
		for _, op := range doc.Paths.Value(path).Operations() {
			if op.RequestBody != nil && len(op.RequestBody.Value.Content) > 1 {
				params["Content-Type"] = true
			}
		}
	}
	if fmt.Sprint(sortedKeys(read)) != fmt.Sprint(sortedKeys(params)) {
		t.Errorf("the server reads the headers %v, the document describes %v", sortedKeys(read), sortedKeys(params))
	}
	// The response headers the server sets are the document's (and
	// Content-Type, which its media types say).
	set := map[string]bool{}
	for _, lit := range sourceCalls(t, "Header.Set") {
		set[lit] = true
	}
	headers := map[string]bool{"Content-Type": true}
	for _, path := range described {
		for _, op := range doc.Paths.Value(path).Operations() {
			for _, resp := range op.Responses.Map() {
				for h := range resp.Value.Headers {
					headers[h] = true
				}
			}
		}
	}
	if fmt.Sprint(sortedKeys(set)) != fmt.Sprint(sortedKeys(headers)) {
		t.Errorf("the server sets the headers %v, the document describes %v", sortedKeys(set), sortedKeys(headers))
	}
	// The served document is the committed one.
	resp, err := http.Get(url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(b, openAPI) || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/openapi.json serves %d bytes (%s), not the document", len(b), resp.Header.Get("Content-Type"))
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sourceFiles is the package's code (not its tests), parsed, by file
// name, in the order of the names.
func sourceFiles(t *testing.T) iter.Seq2[string, *ast.File] {
	t.Helper()
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	return func(yield func(string, *ast.File) bool) {
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !yield(f, file) {
				return
			}
		}
	}
}

// sourceCalls is the string literals the package's code (not its tests)
// passes first to calls of a selector ending in name ("Header.Get").
func sourceCalls(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, file := range sourceFiles(t) {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				inner, ok := sel.X.(*ast.SelectorExpr)
				if c, isCall := sel.X.(*ast.CallExpr); isCall { // w.Header().Set
					inner, ok = c.Fun.(*ast.SelectorExpr)
				}
				if ok && inner.Sel.Name+"."+sel.Sel.Name == name {
					if lit, ok := call.Args[0].(*ast.BasicLit); ok {
						s, _ := strconv.Unquote(lit.Value)
						out = append(out, s)
					}
				}
			}
			return true
		})
	}
	return out
}

// sourceStatuses is the HTTP statuses the package's code names
// (http.StatusXxx), as numbers.
func sourceStatuses(t *testing.T) map[int]bool {
	t.Helper()
	codes := map[string]int{}
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			codes["Status"+strings.NewReplacer(" ", "", "-", "", "'", "").Replace(text)] = code
		}
	}
	codes["StatusRequestEntityTooLarge"] = http.StatusRequestEntityTooLarge
	out := map[int]bool{}
	for f, file := range sourceFiles(t) {
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, isIdent := sel.X.(*ast.Ident); isIdent && x.Name == "http" && strings.HasPrefix(sel.Sel.Name, "Status") {
				code, known := codes[sel.Sel.Name]
				if !known {
					t.Fatalf("%s: http.%s is not a status this test knows", f, sel.Sel.Name)
				}
				out[code] = true
			}
			return true
		})
	}
	return out
}

// openAPIServer is a server on httptest, with the config's tokens.
func openAPIServer(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	cfg.Workspace = t.TempDir()
	srv, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return srv, hs.URL
}

// TestOpenAPIStatuses: every status the server's code names is in the
// document, and every response the document describes (operation and
// status) is produced by a real request here, its headers and body
// validated against the document by kin-openapi (undocumented statuses
// and fields fail: the response schemas allow no other property). Streams
// are validated event by event. What cannot be produced from outside is
// listed with the reason.
func TestOpenAPIStatuses(t *testing.T) {
	doc := loadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	inDoc := map[int]bool{}
	want := map[string]bool{} // "path method status"
	for _, path := range doc.Paths.Keys() {
		for m, op := range doc.Paths.Value(path).Operations() {
			for code := range op.Responses.Map() {
				c, _ := strconv.Atoi(code)
				inDoc[c] = true
				want[path+" "+m+" "+code] = true
			}
		}
	}
	if fmt.Sprint(sortedInts(sourceStatuses(t))) != fmt.Sprint(sortedInts(inDoc)) {
		t.Errorf("the code names the statuses %v, the document %v", sortedInts(sourceStatuses(t)), sortedInts(inDoc))
	}
	// Not produced here: a 500 of a deletion needs the machine to fail (a
	// workspace that cannot be removed); a 409 of an execution needs its
	// session to be in the middle of a deletion.
	unreached := map[string]string{
		"/workspace/{session_id} DELETE 500": "the machine failing",
		"/execute POST 409":                  "a race with a deletion",
		"/v1/execute POST 409":               "a race with a deletion",
		"/v1/files/{path} GET 500":           "the machine failing",
		"/v1/files/{path} PUT 500":           "the machine failing",
		"/v1/files/{path} DELETE 500":        "the machine failing",
		"/v1/health GET 503":                 "a server shutting down",
		"/list/{path} GET 500":               "the machine failing",
	}

	// A server whose python cannot start: an execution fails with 500.
	broken, brokenURL := openAPIServer(t, Config{Insecure: true})
	broken.jail.python, broken.jail.prlimit, broken.jail.bwrap = "/nonexistent/python3", "", ""
	_, url := openAPIServer(t, Config{Tokens: []string{"t1", "t2"}, MaxConcurrent: 1, MaxRequestBytes: 4096})
	// A callback that holds an execution until released.
	release := make(chan struct{})
	held := make(chan struct{})
	var heldOnce sync.Once
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct{ Name string }
		json.NewDecoder(r.Body).Decode(&call)
		if call.Name == "hold" {
			heldOnce.Do(func() { close(held) })
			<-release
		}
		w.Write([]byte(`{"data":"1"}`))
	}))
	defer cb.Close()

	produced := map[string]bool{}
	base := url
	var send func(req *http.Request, wantStatus int)
	do := func(method, path, token, accept, body string, wantStatus int) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		send(req, wantStatus)
	}
	// upload posts a multipart form whose part "file" has the file name.
	upload := func(path, token, filename, data string, wantStatus int) {
		t.Helper()
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile("file", filename)
		io.WriteString(fw, data)
		mw.Close()
		req, _ := http.NewRequest("POST", base+path, &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		send(req, wantStatus)
	}
	send = func(req *http.Request, wantStatus int) {
		t.Helper()
		method, path := req.Method, req.URL.Path
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != wantStatus {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, data, wantStatus)
		}
		lookup := req
		if wantStatus == http.StatusMethodNotAllowed {
			// A 405 is described on the operation the path has.
			lookup = req.Clone(req.Context())
			lookup.Method, _, _ = strings.Cut(resp.Header.Get("Allow"), ", ")
		}
		if path == "/workspace/" {
			// No session_id: the template needs one to match, and the
			// operation describes the 400.
			lookup = req.Clone(req.Context())
			lookup.URL.Path += "_"
		}
		route, params, err := router.FindRoute(lookup)
		if err != nil {
			t.Fatalf("%s %s: the document has no route: %v", method, path, err)
		}
		stream := resp.Header.Get("Content-Type") == typeNDJSON || resp.Header.Get("Content-Type") == typeSSE
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
			Status:                 resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(data)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: stream},
		}
		if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
			t.Fatalf("%s %s → %d %s: %v", method, path, resp.StatusCode, data, err)
		}
		if stream {
			validateEvents(t, doc, route, resp.Header.Get("Content-Type"), data)
		}
		produced[route.Path+" "+lookup.Method+" "+strconv.Itoa(resp.StatusCode)] = true
	}

	for _, path := range []string{"/execute", "/v1/execute"} {
		ok := `{"code":"console.log('a <b>'); writeFile('o.txt', 'hi'); setResult({n: 1}, ['o.txt'])","runtime":"javascript","session_id":"mine","execution_id":"e","timeout":10}`
		do("POST", path, "t1", "", ok, 200)
		do("POST", path, "t1", "application/json", `{"code":"const a = 1;\nnull.f();","runtime":"typescript"}`, 200)
		do("POST", path, "t1", typeNDJSON, ok, 200)
		do("POST", path, "t1", typeSSE, `{"code":"console.log(1);\nnull.f();","runtime":"javascript"}`, 200)
		do("POST", path, "t1", "", `{"code":"1","runtime":"cobol"}`, 400)
		do("POST", path, "", "", ok, 401)
		do("POST", path, "t2", "", ok, 403)
		do("GET", path, "t1", "", "", 405)
		do("POST", path, "t1", "", `{"code":"`+strings.Repeat("x", 5000)+`"}`, 413)
	}
	base = brokenURL
	do("POST", "/execute", "", "", `{"code":"print(1)","runtime":"python"}`, 500)
	do("POST", "/v1/execute", "", typeNDJSON, `{"code":"print(1)","runtime":"python"}`, 500)
	base = url
	do("DELETE", "/workspace/mine", "t2", "", "", 403)
	do("DELETE", "/workspace/mine", "t1", "", "", 204)
	do("DELETE", "/workspace/", "t1", "", "", 400)
	do("DELETE", "/workspace/mine", "", "", "", 401)
	do("GET", "/workspace/mine", "t1", "", "", 405)
	do("GET", "/health", "", "", "", 200)
	do("GET", "/metrics", "t1", "", "", 200)
	do("GET", "/metrics", "t1", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited", "", 200)
	do("GET", "/metrics", "", "", "", 401)
	do("POST", "/metrics", "t1", "", "", 405)
	// The files API (sandboxd's shape), in session fs.
	do("PUT", "/v1/files/a%2Fb.txt?session_id=fs", "t1", "", "hello", 204)
	do("GET", "/v1/files/a%2Fb.txt?session_id=fs", "t1", "", "", 200)
	do("GET", "/v1/files/a?session_id=fs", "t1", "", "", 200)
	do("GET", "/v1/files/a%2Fb.txt", "t1", "", "", 400)
	do("GET", "/v1/files/a%2Fb.txt?session_id=fs", "", "", "", 401)
	do("GET", "/v1/files/a%2Fb.txt?session_id=fs", "t2", "", "", 403)
	do("GET", "/v1/files/a%2Fnone?session_id=fs", "t1", "", "", 404)
	do("POST", "/v1/files/a%2Fb.txt?session_id=fs", "t1", "", "", 405)
	do("HEAD", "/v1/files/a%2Fb.txt?session_id=fs", "t1", "", "", 200)
	do("HEAD", "/v1/files/a%2Fb.txt", "t1", "", "", 400)
	do("HEAD", "/v1/files/a%2Fb.txt?session_id=fs", "t2", "", "", 403)
	do("HEAD", "/v1/files/a%2Fnone?session_id=fs", "t1", "", "", 404)
	do("PUT", "/v1/files/a%2Fb.txt?session_id=fs&mode=9", "t1", "", "x", 400)
	do("PUT", "/v1/files/a%2Fb.txt?session_id=fs", "", "", "x", 401)
	do("PUT", "/v1/files/a%2Fb.txt?session_id=fs", "t2", "", "x", 403)
	do("PUT", "/v1/files/a?session_id=fs", "t1", "", "x", 409)
	do("DELETE", "/v1/files/a?session_id=fs&recursive=maybe", "t1", "", "", 400)
	do("DELETE", "/v1/files/a?session_id=fs", "", "", "", 401)
	do("DELETE", "/v1/files/a?session_id=fs", "t2", "", "", 403)
	do("DELETE", "/v1/files/a?session_id=fs", "t1", "", "", 409)
	do("DELETE", "/v1/files/a?session_id=fs&recursive=true", "t1", "", "", 204)
	do("DELETE", "/v1/files/a?session_id=fs", "t1", "", "", 404)
	do("GET", "/v1/health", "", "", "", 200)
	do("HEAD", "/v1/health", "", "", "", 200)
	do("POST", "/v1/health", "", "", "", 405)
	do("GET", "/v1/metadata", "t1", "", "", 200)
	do("GET", "/v1/metadata", "", "", "", 401)
	do("POST", "/v1/metadata", "t1", "", "", 405)
	_, small := openAPIServer(t, Config{WorkspaceQuotaBytes: 100})
	base = small
	do("PUT", "/v1/files/big?session_id=fs", "", "", strings.Repeat("x", 200), 413)
	base = url
	do("GET", "/openapi.json", "", "", "", 200)
	do("POST", "/openapi.json", "", "", "", 405)
	// agent-sandbox's legacy python-runtime API, in session legacy (by
	// X-Sandbox-ID, its router's header, on the upload).
	do("GET", "/", "", "", "", 200)
	do("POST", "/", "", "", "", 405)
	do("POST", "/execute", "t1", "", `{"command":"echo hi; echo err >&2; exit 3","session_id":"legacy"}`, 200)
	do("POST", "/v1/execute", "t1", "", `{"command":"echo hi"}`, 400)
	do("POST", "/v1/execute", "t1", "", `{"code":"echo hi","runtime":"command"}`, 400)
	do("POST", "/execute", "t1", "", `{"code":"echo hi","runtime":"command"}`, 400)
	upload("/upload?session_id=legacy", "t1", "d/in.txt", "data", 200)
	upload("/upload?session_id=legacy", "t1", "../out.txt", "data", 403)
	upload("/upload?session_id=legacy", "", "in.txt", "data", 401)
	upload("/upload?session_id=legacy", "t2", "in.txt", "data", 403)
	upload("/upload", "t1", "in.txt", "data", 400)
	do("POST", "/upload?session_id=legacy", "t1", "", `{"not":"multipart"}`, 400)
	do("GET", "/upload?session_id=legacy", "t1", "", "", 405)
	base = small
	upload("/upload?session_id=fs", "", "big", strings.Repeat("x", 200), 413)
	base = url
	for _, ep := range []string{"/download/d%2Fin.txt", "/list/d", "/exists/d%2Fin.txt"} {
		do("GET", ep+"?session_id=legacy", "t1", "", "", 200)
		do("GET", ep, "t1", "", "", 400)
		do("GET", ep+"?session_id=legacy", "", "", "", 401)
		do("GET", ep+"?session_id=legacy", "t2", "", "", 403)
		do("POST", ep+"?session_id=legacy", "t1", "", "", 405)
	}
	do("GET", "/download/none?session_id=legacy", "t1", "", "", 404)
	do("GET", "/list/d%2Fin.txt?session_id=legacy", "t1", "", "", 404)
	// An execution holding the only slot, in session "held": another is
	// refused (503), and the session cannot be deleted (409).
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest("POST", url+"/execute", strings.NewReader(`{"code":"await callTool('hold')","runtime":"javascript","session_id":"held","callback_url":"`+cb.URL+`"}`))
		req.Header.Set("Authorization", "Bearer t1")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-held
	do("POST", "/execute", "t1", "", `{"code":"1","runtime":"javascript"}`, 503)
	do("POST", "/v1/execute", "t1", typeNDJSON, `{"code":"1","runtime":"javascript"}`, 503)
	do("DELETE", "/workspace/held", "t1", "", "", 409)
	close(release)
	<-done

	for k := range want {
		if !produced[k] && unreached[k] == "" {
			t.Errorf("the document describes %s, which no request here produced", k)
		}
	}
	for k := range unreached {
		if !want[k] {
			t.Errorf("%s is listed as unreached but not described", k)
		}
	}
}

func sortedInts(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// validateEvents checks each event of a stream against the schema the
// document gives the stream's media type.
func validateEvents(t *testing.T, doc *openapi3.T, route *routers.Route, kind string, data []byte) {
	t.Helper()
	schema := route.Operation.Responses.Status(200).Value.Content.Get(kind).Schema.Value
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if kind == typeSSE {
			var ok bool
			if line, ok = strings.CutPrefix(line, "data: "); !ok {
				continue
			}
		}
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse()); err != nil {
			t.Fatalf("event %s: %v", line, err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("a stream without events")
	}
}

// TestOpenAPITypes: the schemas of the document have exactly the JSON
// fields of the Go types the server encodes (reflection fills every field
// of each, nested ones too, and the encoded keys are compared with the
// schema's properties and their JSON types), and a response schema
// requires exactly the fields always present (those without omitempty).
func TestOpenAPITypes(t *testing.T) {
	doc := loadOpenAPI(t)
	schemas := doc.Components.Schemas
	for name, v := range map[string]struct {
		value    any
		response bool
	}{
		"File":             {&File{}, true},
		"ExecuteRequest":   {&ExecuteRequest{}, false},
		"ExecuteResponse":  {&ExecuteResponse{}, true},
		"V1Response":       {&V1Response{}, true},
		"ScriptError":      {&airlock.ScriptError{}, true},
		"StreamEvent":      {&StreamEvent{Result: &ExecuteResponse{}}, true},
		"V1StreamEvent":    {&StreamEvent{Result: &V1Response{}}, true},
		"FileError":        {&fileError{}, true},
		"FileEntry":        {&fileEntry{}, true},
		"DirectoryListing": {&directoryListing{Entries: []fileEntry{{}}}, true},
	} {
		t.Run(name, func(t *testing.T) {
			ref := schemas[name]
			if ref == nil {
				t.Fatalf("no schema %s", name)
			}
			fill(reflect.ValueOf(v.value).Elem())
			if se, ok := v.value.(*StreamEvent); ok {
				fill(reflect.ValueOf(se.Result).Elem())
			}
			b, err := json.Marshal(v.value)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			json.Unmarshal(b, &got)
			compareSchema(t, name, ref.Value, got)
			if !v.response {
				return
			}
			zero := reflect.New(reflect.TypeOf(v.value).Elem()).Interface()
			b, _ = json.Marshal(zero)
			var present map[string]any
			json.Unmarshal(b, &present)
			var always []string
			for k := range present {
				always = append(always, k)
			}
			sort.Strings(always)
			required := slices.Clone(ref.Value.Required)
			sort.Strings(required)
			if !slices.Equal(always, required) {
				t.Errorf("%s: always encoded %v, required %v", name, always, required)
			}
		})
	}
	for name := range schemas {
		switch name {
		case "Error", "Health", "FilesHealth", "Metadata", "LegacyHealth", "LegacyMessage", "LegacyEntry", "LegacyExists",
			"CommandResponse": // maps in the code, checked by TestOpenAPIStatuses on every response
		case "File", "ExecuteRequest", "ExecuteResponse", "V1Response", "ScriptError", "StreamEvent", "V1StreamEvent",
			"FileError", "FileEntry", "DirectoryListing":
		default:
			t.Errorf("schema %s is not checked against a Go type", name)
		}
	}
}

// fill sets every field of v, nested ones too, to a value that is not
// zero; interfaces and functions are left as they are.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("x"))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

// compareSchema compares an encoded value with its schema: an object's
// keys with the properties, recursively, and each value's JSON type.
func compareSchema(t *testing.T, at string, s *openapi3.Schema, v any) {
	t.Helper()
	kind := map[bool]string{}
	switch x := v.(type) {
	case map[string]any:
		kind[true] = "object"
		var keys, props []string
		for k := range x {
			keys = append(keys, k)
		}
		for k := range s.Properties {
			props = append(props, k)
		}
		sort.Strings(keys)
		sort.Strings(props)
		if !slices.Equal(keys, props) {
			t.Errorf("%s: the Go type encodes %v, the schema has %v", at, keys, props)
		}
		for k, xv := range x {
			if p := s.Properties[k]; p != nil {
				compareSchema(t, at+"."+k, p.Value, xv)
			}
		}
	case []any:
		kind[true] = "array"
		if s.Items != nil && len(x) > 0 {
			compareSchema(t, at+"[]", s.Items.Value, x[0])
		}
	case string:
		kind[true] = "string"
	case bool:
		kind[true] = "boolean"
	case float64:
		kind[true] = "number"
		if x == float64(int64(x)) && s.Type.Is("integer") {
			kind[true] = "integer"
		}
	}
	if s.Type == nil || !slices.Contains(s.Type.Slice(), kind[true]) {
		t.Errorf("%s: the Go type encodes a %s, the schema says %v", at, kind[true], s.Type)
	}
}

package service

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
)

// The legacy python-runtime API: the endpoints of agent-sandbox's example
// runtime (examples/python-runtime-sandbox), which its Go and Python
// clients speak with their legacy runtime. POST /execute with a command
// body ({"command": "..."}, told from seed 004's {"code": ...}) runs the
// command in the jail and answers {stdout, stderr, exit_code}; POST
// /upload (a multipart form's "file", its file name the path), GET
// /download/{path}, /list/{path} and /exists/{path} reach the session's
// workspace, under the files API's rules (token, owner, quota, paths that
// stay inside the workspace); GET / is its health check. A request names
// its session as the files API's do, or by X-Sandbox-ID (agent-sandbox's
// router header), or gets Config.DefaultSession.

// legacyRoutes are the legacy API's endpoints (POST /execute is
// execute's, told by its body).
func (s *Server) legacyRoutes() []route {
	return []route{
		{"/{$}", func(w http.ResponseWriter, r *http.Request) {
			if allowMethod(w, r, http.MethodGet) {
				writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "message": "Sandbox Runtime is active."})
			}
		}},
		{"/upload", s.legacyUpload},
		{"/download/{path...}", s.legacyFile("download")},
		{"/list/{path...}", s.legacyFile("list")},
		{"/exists/{path...}", s.legacyFile("exists")},
	}
}

// legacyMessage is the legacy API's error body.
func legacyMessage(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

// sessionOf is the session a files or legacy request names: session_id in
// the query, else X-Session-ID, else X-Sandbox-ID, else the server's
// default session; "" when none.
func (s *Server) sessionOf(r *http.Request) string {
	for _, v := range []string{r.URL.Query().Get("session_id"), r.Header.Get("X-Session-ID"), r.Header.Get("X-Sandbox-ID")} {
		if v != "" {
			return v
		}
	}
	return s.cfg.DefaultSession
}

// legacyRequest checks a legacy files request's method and token, and
// finds its session; when it answers the request itself, ok is false.
func (s *Server) legacyRequest(w http.ResponseWriter, r *http.Request, method string) (session, cred string, ok bool) {
	if !allowMethod(w, r, method) {
		return "", "", false
	}
	if cred, ok = s.authorize(w, r); !ok {
		return "", "", false
	}
	if session = s.sessionOf(r); session == "" {
		legacyMessage(w, http.StatusBadRequest, "a session is required (session_id, X-Session-ID or X-Sandbox-ID; or the server's --default-session)")
		return "", "", false
	}
	return session, cred, true
}

// executeCommand answers a command body of POST /execute in the legacy
// shape.
func (s *Server) executeCommand(w http.ResponseWriter, r *http.Request, req ExecuteRequest) {
	if req.SessionID == "" {
		req.SessionID = s.sessionOf(r)
	}
	if req.Timeout <= 0 {
		req.Timeout = 300 // the legacy runtime's default
	}
	resp, err := s.Execute(requestContext(r), req, s.dispatcher(req.ExecutionID, req.CallbackURL))
	if err != nil {
		legacyMessage(w, errorStatus(err), publicMessage(err))
		return
	}
	stderr := resp.stderr
	if resp.Status == "terminated" || resp.ExitCode == -1 && resp.Error != "" {
		stderr += "Failed to execute command: " + resp.Error
	}
	writeJSON(w, http.StatusOK, map[string]any{"stdout": resp.stdout, "stderr": stderr, "exit_code": resp.ExitCode})
}

// legacyUpload serves POST /upload: the form's "file" written to the
// workspace at its file name (a relative path; parents are made).
func (s *Server) legacyUpload(w http.ResponseWriter, r *http.Request) {
	session, cred, ok := s.legacyRequest(w, r, http.MethodPost)
	if !ok {
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		legacyMessage(w, http.StatusBadRequest, "a multipart form with a part named \"file\" is required")
		return
	}
	part, err := mr.NextPart()
	for err == nil && part.FormName() != "file" {
		part, err = mr.NextPart()
	}
	if err != nil {
		legacyMessage(w, http.StatusBadRequest, "the form has no part named \"file\"")
		return
	}
	// The part's file name, as sent (FileName would keep its last element);
	// a part header, not the request's.
	var params map[string]string
	if cd := part.Header["Content-Disposition"]; len(cd) > 0 {
		_, params, _ = mime.ParseMediaType(cd[0])
	}
	filename := params["filename"]
	name, err := filePath(filename)
	if err != nil || name == "." {
		legacyMessage(w, http.StatusForbidden, "Access denied")
		return
	}
	if err := s.ws.check(session, cred); err != nil {
		legacyMessage(w, errorStatus(err), publicMessage(err))
		return
	}
	rec := &bodyRecorder{header: http.Header{}}
	r2 := r.Clone(r.Context())
	r2.Body, r2.Header = io.NopCloser(part), r.Header.Clone()
	r2.Header.Del("Content-Type") // the part itself is the body
	r2.URL.RawQuery = ""
	r2.SetPathValue("path", name)
	s.putFile(rec, r2, session, cred, name)
	if rec.status != http.StatusNoContent {
		var e fileError
		json.Unmarshal(rec.body, &e)
		status := rec.status
		if status == http.StatusForbidden {
			e.Message = "Access denied"
		}
		legacyMessage(w, status, "File upload failed: "+e.Message)
		return
	}
	legacyMessage(w, http.StatusOK, fmt.Sprintf("File '%s' uploaded successfully.", filename))
}

// legacyFile serves GET /download/{path}, /list/{path} and /exists/{path}.
func (s *Server) legacyFile(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		session, cred, ok := s.legacyRequest(w, r, http.MethodGet)
		if !ok {
			return
		}
		raw := r.PathValue("path")
		name, err := filePath(raw)
		if err != nil {
			legacyMessage(w, http.StatusForbidden, "Access denied")
			return
		}
		if err := s.ws.check(session, cred); err != nil {
			legacyMessage(w, errorStatus(err), publicMessage(err))
			return
		}
		var info fs.FileInfo
		root, err := os.OpenRoot(s.ws.dir(session))
		if err == nil {
			defer root.Close()
			info, err = root.Stat(name)
		}
		switch op {
		case "exists":
			writeJSON(w, http.StatusOK, map[string]any{"path": raw, "exists": err == nil})
		case "list":
			if err != nil || !info.IsDir() {
				legacyMessage(w, http.StatusNotFound, "Path is not a directory")
				return
			}
			listing, err := listDir(root, name)
			if err != nil {
				legacyMessage(w, http.StatusInternalServerError, "List files failed")
				return
			}
			entries := make([]map[string]any, len(listing.Entries))
			for i, e := range listing.Entries {
				fi, _ := root.Stat(name + "/" + e.Name)
				mtime := 0.0
				if fi != nil {
					mtime = float64(fi.ModTime().UnixNano()) / 1e9
				}
				entries[i] = map[string]any{"name": e.Name, "size": e.Size, "type": e.Type, "mod_time": mtime}
			}
			writeJSON(w, http.StatusOK, entries)
		case "download":
			if err != nil || !info.Mode().IsRegular() {
				legacyMessage(w, http.StatusNotFound, "File not found")
				return
			}
			r2 := r.Clone(r.Context())
			r2.SetPathValue("path", name)
			serveFile(w, r2, root, name)
		}
	}
}

// bodyRecorder keeps what a handler answered, for another answer made
// of it.
type bodyRecorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *bodyRecorder) Header() http.Header { return r.header }
func (r *bodyRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}
func (r *bodyRecorder) WriteHeader(status int) { r.status = status }

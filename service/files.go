package service

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The files API: a session's workspace read and written over HTTP, in the
// shape of agent-sandbox's sandboxd REST API (its filesystem/v1 spec:
// /v1/files/{path} with GET, HEAD, PUT and DELETE, /v1/health,
// /v1/metadata), so that its clients can move files in and out of an
// Airlock session. A sandboxd serves one sandbox; a server serves many
// sessions, so a request names its session, as session_id in the query,
// the X-Session-ID or X-Sandbox-ID header, or gets Config.DefaultSession
// (sessionOf). The service's rules hold: the bearer token, the
// session's owner, the workspace quota, and paths that stay inside the
// workspace (no "..", no absolute path, no NUL; a symbolic link that leads
// out of it is not followed: os.Root).

// fileError is the files API's error body (sandboxd's Error schema).
type fileError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeFileError answers with the status and the code sandboxd gives it.
func writeFileError(w http.ResponseWriter, status int, msg string) {
	code := map[int]string{
		http.StatusBadRequest:            "INVALID_ARGUMENT",
		http.StatusForbidden:             "PERMISSION_DENIED",
		http.StatusNotFound:              "NOT_FOUND",
		http.StatusMethodNotAllowed:      "METHOD_NOT_ALLOWED",
		http.StatusConflict:              "CONFLICT",
		http.StatusRequestEntityTooLarge: "RESOURCE_EXHAUSTED",
		http.StatusServiceUnavailable:    "UNAVAILABLE",
	}[status]
	if code == "" {
		code = "INTERNAL"
	}
	writeJSON(w, status, fileError{Code: code, Message: msg})
}

// fileEntry is an entry of a directory listing (sandboxd's FileEntry).
type fileEntry struct {
	Name       string `json:"name"`
	Size       int64  `json:"size"`
	Type       string `json:"type"` // "file" or "directory"
	ModifiedAt string `json:"modified_at"`
	Mode       string `json:"mode"`
}

// directoryListing is a directory's listing (sandboxd's DirectoryListing).
type directoryListing struct {
	Path    string      `json:"path"`
	Entries []fileEntry `json:"entries"`
}

// filePath is the workspace-relative name of a request's path: "." for the
// workspace itself, else a clean relative name. A path that would leave
// the workspace is refused.
func filePath(p string) (string, error) {
	p = strings.TrimSuffix(p, "/")
	if p == "" || p == "." {
		return ".", nil
	}
	return cleanName(p)
}

var fileMode = regexp.MustCompile(`^0[0-7]{3}$`)

// files serves /v1/files/{path...}.
func (s *Server) files(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT, DELETE")
		writeFileError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	cred, ok := s.authorize(w, r)
	if !ok {
		return
	}
	session := s.sessionOf(r)
	if session == "" {
		writeFileError(w, http.StatusBadRequest, "session_id is required (in the query, the X-Session-ID or X-Sandbox-ID header, or the server's --default-session)")
		return
	}
	name, err := filePath(r.PathValue("path"))
	if err != nil {
		writeFileError(w, http.StatusForbidden, "path traversal outside the workspace is forbidden: "+err.Error())
		return
	}
	if err := s.ws.check(session, cred); err != nil {
		writeFileError(w, errorStatus(err), publicMessage(err))
		return
	}
	if r.Method == http.MethodPut {
		s.putFile(w, r, session, cred, name)
		return
	}
	// Reading and deleting do not make a workspace: one that does not exist
	// has no files.
	root, err := os.OpenRoot(s.ws.dir(session))
	if err != nil {
		writeFileError(w, http.StatusNotFound, "no such file or directory: "+r.PathValue("path"))
		return
	}
	defer root.Close()
	if r.Method == http.MethodDelete {
		s.deleteFile(w, r, root, name)
		return
	}
	info, err := root.Stat(name)
	if err != nil {
		writeFSError(w, err, r.PathValue("path"))
		return
	}
	if info.IsDir() {
		listing, err := listDir(root, name)
		if err != nil {
			writeFSError(w, err, r.PathValue("path"))
			return
		}
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			return
		}
		writeJSON(w, http.StatusOK, listing)
		return
	}
	serveFile(w, r, root, name)
}

// serveFile answers a GET or HEAD of a file of the workspace with its bytes.
func serveFile(w http.ResponseWriter, r *http.Request, root *os.Root, name string) {
	f, err := openFile(root, name, os.O_RDONLY, 0)
	if err != nil {
		writeFSError(w, err, r.PathValue("path"))
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		writeFileError(w, http.StatusInternalServerError, "file system error on "+r.PathValue("path"))
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size(), 10))
	w.Header().Set("Last-Modified", info.ModTime().UTC().Format(http.TimeFormat))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		io.Copy(w, io.LimitReader(f, info.Size()))
	}
}

// listDir lists a directory of the workspace. Entries that are neither
// files nor directories (links, FIFOs, ...) are left out, as the schema
// has no type for them.
func listDir(root *os.Root, name string) (*directoryListing, error) {
	d, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := &directoryListing{Path: path.Clean("/" + name), Entries: []fileEntry{}}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		kind := "file"
		switch {
		case info.IsDir():
			kind = "directory"
		case !info.Mode().IsRegular():
			continue
		}
		out.Entries = append(out.Entries, fileEntry{Name: e.Name(), Size: info.Size(), Type: kind,
			ModifiedAt: info.ModTime().UTC().Format(time.RFC3339Nano), Mode: fmt.Sprintf("%04o", info.Mode().Perm())})
	}
	return out, nil
}

// putFile writes a request's body (raw, or the part named "file" of a
// multipart form) to a file of the session's workspace: into a temporary
// file beside it, renamed over it once whole, so that a reader never sees
// half a file; parents are made. The body is bounded by what is left of
// the workspace quota.
func (s *Server) putFile(w http.ResponseWriter, r *http.Request, session, cred, name string) {
	if name == "." {
		writeFileError(w, http.StatusBadRequest, "a file path is required")
		return
	}
	perm := os.FileMode(0o644)
	if m := r.URL.Query().Get("mode"); m != "" {
		if !fileMode.MatchString(m) {
			writeFileError(w, http.StatusBadRequest, `mode must be octal permission bits such as "0644"`)
			return
		}
		v, _ := strconv.ParseUint(m, 8, 32)
		perm = os.FileMode(v)
	}
	if len(name) > maxPathBytes || strings.Count(name, "/") >= maxPathParts {
		writeFileError(w, http.StatusBadRequest, fmt.Sprintf("the path is longer than %d bytes or %d parts", maxPathBytes, maxPathParts))
		return
	}
	dir, id, err := s.ws.acquire(session, cred)
	if err != nil {
		writeFileError(w, errorStatus(err), publicMessage(err))
		return
	}
	defer s.ws.release(id, false)
	defer s.ws.uploadLock(id)()
	root, err := os.OpenRoot(dir)
	if err != nil {
		writeFileError(w, http.StatusInternalServerError, "the workspace could not be opened")
		return
	}
	defer root.Close()
	if info, err := root.Stat(name); err == nil && info.IsDir() {
		writeFileError(w, http.StatusConflict, "the path is a directory")
		return
	}
	// room for the file and each directory the path may make
	room, err := s.quota().room(dir, 0, strings.Count(name, "/")+1)
	if err != nil {
		writeFileError(w, http.StatusRequestEntityTooLarge, err.Error())
		return
	}
	body := io.Reader(http.MaxBytesReader(w, r.Body, room))
	if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
		part, err := filePart(body, params["boundary"])
		if err != nil {
			writeFileError(w, http.StatusBadRequest, err.Error())
			return
		}
		body = part
	}
	if parent := path.Dir(name); parent != "." {
		if err := mkdirAll(root, parent, s.ws.owner); err != nil {
			writeFSError(w, err, r.PathValue("path"))
			return
		}
	}
	var b [8]byte
	rand.Read(b[:])
	tmp := path.Join(path.Dir(name), ".airlock-upload-"+hex.EncodeToString(b[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		writeFSError(w, err, r.PathValue("path"))
		return
	}
	_, err = io.Copy(f, body)
	if err == nil && s.ws.owner != nil {
		err = f.Chown(s.ws.owner.uid, s.ws.owner.gid)
	}
	if err == nil {
		err = f.Chmod(perm) // as asked, whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeFileError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%v: %d bytes were left", errOverQuota, room))
			return
		}
		writeFSError(w, err, r.PathValue("path"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// filePart is the part named "file" of a multipart body.
func filePart(body io.Reader, boundary string) (io.Reader, error) {
	if boundary == "" {
		return nil, errors.New("a multipart body needs a boundary")
	}
	mr := multipart.NewReader(body, boundary)
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil, errors.New(`the multipart body has no part named "file"`)
		}
		if p.FormName() == "file" {
			return p, nil
		}
	}
}

// deleteFile removes a file, or a directory (with what is in it when
// recursive=true; a directory not empty is a conflict otherwise). The
// workspace itself is not removed here (DELETE /workspace/{session_id}).
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request, root *os.Root, name string) {
	if name == "." {
		writeFileError(w, http.StatusForbidden, "the workspace itself is deleted with DELETE /workspace/{session_id}")
		return
	}
	recursive := false
	if v := r.URL.Query().Get("recursive"); v != "" {
		var err error
		if recursive, err = strconv.ParseBool(v); err != nil {
			writeFileError(w, http.StatusBadRequest, "recursive must be true or false")
			return
		}
	}
	info, err := root.Lstat(name)
	if err != nil {
		writeFSError(w, err, r.PathValue("path"))
		return
	}
	if info.IsDir() && recursive {
		err = root.RemoveAll(name)
	} else {
		err = root.Remove(name)
	}
	if err != nil {
		if info.IsDir() && !recursive {
			writeFileError(w, http.StatusConflict, "the directory is not empty (recursive=true removes it with what it holds)")
			return
		}
		writeFSError(w, err, r.PathValue("path"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxPathBytes and maxPathParts bound a path the files API writes: a PUT
// makes the directories of its path, each an entry of the quota.
const (
	maxPathBytes = 4096
	maxPathParts = 64
)

// publicMessage is what a client is told of err: a request error's text,
// else nothing of the server's own paths.
func publicMessage(err error) string {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Msg
	}
	return "the server could not use the workspace"
}

// writeFSError answers with a file system error, naming the path as the
// request gave it.
func writeFSError(w http.ResponseWriter, err error, given string) {
	writeFileError(w, fsStatus(err), fsMessage(err, given))
}

// fsStatus is the status of a file system error.
func fsStatus(err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, errNotRegular), strings.Contains(err.Error(), "path escapes"):
		return http.StatusForbidden
	case errors.Is(err, fs.ErrExist):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// fsMessage is what a file system error says, with the path as the
// request gave it (never the server's own directories).
func fsMessage(err error, given string) string {
	switch fsStatus(err) {
	case http.StatusNotFound:
		return "no such file or directory: " + given
	case http.StatusForbidden:
		var pe *fs.PathError
		if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "path escapes") {
			return "path traversal outside the workspace is forbidden: " + given
		}
		if errors.Is(err, errNotRegular) {
			return given + " is not a regular file"
		}
		return "permission denied: " + given
	case http.StatusConflict:
		return "already exists: " + given
	}
	return "file system error on " + given
}

// health serves /v1/health (sandboxd's HealthResponse).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeFileError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if s.closed.Load() {
		writeFileError(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "uptime_seconds": int64(time.Since(s.started).Seconds())})
}

// metadata serves /v1/metadata: what the server is configured with that
// a client may know (never a token or a path of the host).
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r, http.MethodGet) {
		return
	}
	if _, ok := s.authorize(w, r); !ok {
		return
	}
	var runtimes []string
	for _, rt := range []string{"javascript", "typescript", "python", "node"} {
		if s.unavailable(rt) == nil {
			runtimes = append(runtimes, rt)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"env": map[string]string{
		"AIRLOCK_RUNTIMES":              strings.Join(runtimes, ","),
		"AIRLOCK_WORKSPACE_QUOTA_BYTES": strconv.FormatInt(s.cfg.WorkspaceQuotaBytes, 10),
		"AIRLOCK_WORKSPACE_MAX_ENTRIES": strconv.Itoa(s.cfg.WorkspaceMaxEntries),
		"AIRLOCK_SESSION_TTL_SECONDS":   strconv.FormatInt(int64(s.cfg.SessionTTL.Seconds()), 10),
	}})
}

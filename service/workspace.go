package service

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// workspaces are the session directories under one root, with the time
// each was last used and the credential that made it. A session id is
// any non-empty string: a plain name is its directory's name, anything
// else is hashed (dirName), so no id is refused for its characters and
// none can leave the root.
type workspaces struct {
	root     string
	ttl      time.Duration
	mu       sync.Mutex
	used     map[string]time.Time // directory → last use
	busy     map[string]int       // directory → executions running in it
	owners   map[string]string    // directory → credential, as read or written
	deleting map[string]bool
	// uploads serialise the files API's writes of a session, so that each
	// measures the quota after the one before (uploading: directory →
	// its lock, made on first use).
	uploads map[string]*sync.Mutex
	// owner, when set, is given each workspace (the jail's user).
	owner *jailUser
}

var plainSession = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ownersDir holds, for each workspace, the credential that made it: out of
// the workspaces (a name no directory of theirs can have), never in a jail.
const ownersDir = ".owners"

// dirName is a session's directory: the id when it is a plain name (letters,
// digits, '.', '_', '-', at most 64, not starting with a punctuation mark,
// no ".."), else "_" and a hash of it ("chat:42" → "_3f1c…").
func dirName(session string) string {
	if plainSession.MatchString(session) && !strings.Contains(session, "..") {
		return session
	}
	sum := sha256.Sum256([]byte(session))
	return "_" + hex.EncodeToString(sum[:16])
}

func newWorkspaces(root string, ttl time.Duration) (*workspaces, error) {
	if err := os.MkdirAll(filepath.Join(root, ownersDir), 0o700); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	return &workspaces{root: abs, ttl: ttl, used: map[string]time.Time{}, busy: map[string]int{},
		owners: map[string]string{}, deleting: map[string]bool{}, uploads: map[string]*sync.Mutex{}}, nil
}

// dir is a session's workspace directory (which may not exist).
func (w *workspaces) dir(session string) string { return filepath.Join(w.root, dirName(session)) }

// unreadableOwner stands for an owner that could not be read: it matches
// no credential.
const unreadableOwner = "\x00unreadable"

// errSessionOwned and errSessionBusy refuse a session to a request.
var (
	errSessionOwned = &RequestError{Status: http.StatusForbidden, Msg: "session_id belongs to another credential"}
	errSessionBusy  = &RequestError{Status: http.StatusConflict, Msg: "the session is running an execution: delete it once that ends"}
)

// ownerOf is the credential that made a workspace (false when none did;
// unreadableOwner when its record cannot be read); w.mu is held.
func (w *workspaces) ownerOf(id string) (string, bool) {
	if c, ok := w.owners[id]; ok {
		return c, true
	}
	b, err := os.ReadFile(filepath.Join(w.root, ownersDir, id))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		// Unreadable (no file descriptor left, an I/O error): owned by
		// no credential, so that nobody takes it over (not cached).
		return unreadableOwner, true
	}
	w.owners[id] = string(b)
	return string(b), true
}

// check says whether cred may use a session, before any work is done for
// the request (acquire checks again).
func (w *workspaces) check(session, cred string) error {
	if session == "" {
		return nil
	}
	id := dirName(session)
	w.mu.Lock()
	defer w.mu.Unlock()
	if owner, ok := w.ownerOf(id); ok && owner != cred {
		return errSessionOwned
	}
	if w.deleting[id] {
		return errSessionBusy
	}
	return nil
}

// acquire returns the directory of a session (a throwaway one for ""),
// creating it for cred, and marks it in use until release.
func (w *workspaces) acquire(session, cred string) (dir, id string, err error) {
	if session == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = "tmp-" + hex.EncodeToString(b[:])
	} else {
		id = dirName(session)
	}
	dir = filepath.Join(w.root, id)
	w.mu.Lock()
	defer w.mu.Unlock()
	if session != "" {
		if owner, ok := w.ownerOf(id); ok && owner != cred {
			return "", "", errSessionOwned
		} else if !ok {
			if err := os.WriteFile(filepath.Join(w.root, ownersDir, id), []byte(cred), 0o600); err != nil {
				return "", "", err
			}
			w.owners[id] = cred
		}
	}
	if w.deleting[id] {
		return "", "", errSessionBusy
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", "", err
	}
	if w.owner != nil {
		// The jail's user owns it; bubblewrap, root without capabilities,
		// only needs to enter it.
		if err := os.Lchown(dir, w.owner.uid, w.owner.gid); err != nil {
			return "", "", err
		}
		if err := os.Chmod(dir, 0o711); err != nil {
			return "", "", err
		}
	}
	w.used[id] = time.Now()
	w.busy[id]++
	return dir, id, nil
}

// uploadLock locks the uploads of workspace id and returns the unlock.
func (w *workspaces) uploadLock(id string) func() {
	w.mu.Lock()
	m, ok := w.uploads[id]
	if !ok {
		m = &sync.Mutex{}
		w.uploads[id] = m
	}
	w.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// release ends a use; a throwaway workspace is deleted.
func (w *workspaces) release(id string, throwaway bool) {
	w.mu.Lock()
	w.busy[id]--
	if w.busy[id] <= 0 {
		delete(w.busy, id)
	}
	w.used[id] = time.Now()
	if throwaway {
		delete(w.used, id)
	}
	w.mu.Unlock()
	if throwaway {
		os.RemoveAll(filepath.Join(w.root, id))
	}
}

// remove deletes a session's workspace for cred; an unknown one is no
// error. A session running an execution is not deleted (errSessionBusy),
// and nothing starts in it while it is being deleted.
func (w *workspaces) remove(session, cred string) error {
	id := dirName(session)
	w.mu.Lock()
	if owner, ok := w.ownerOf(id); ok && owner != cred {
		w.mu.Unlock()
		return errSessionOwned
	}
	if w.busy[id] > 0 || w.deleting[id] {
		w.mu.Unlock()
		return errSessionBusy
	}
	w.deleting[id] = true
	delete(w.used, id)
	w.mu.Unlock()
	return w.removeDir(id)
}

// removeDir deletes a workspace marked deleting (w.mu not held), with its
// owner when it is gone, and ends the mark.
func (w *workspaces) removeDir(id string) error {
	err := os.RemoveAll(filepath.Join(w.root, id))
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		os.Remove(filepath.Join(w.root, ownersDir, id))
		delete(w.owners, id)
		delete(w.uploads, id)
	}
	delete(w.deleting, id)
	return err
}

// evict deletes the workspaces not used within the TTL and not in use,
// including ones left on disk by an earlier server.
func (w *workspaces) evict(now time.Time) []string {
	entries, _ := os.ReadDir(w.root)
	var gone []string
	for _, e := range entries {
		id := e.Name()
		if id == ownersDir {
			continue
		}
		w.mu.Lock()
		last, known := w.used[id]
		if !known {
			if info, err := e.Info(); err == nil {
				last = info.ModTime()
			}
		}
		stale := w.busy[id] == 0 && !w.deleting[id] && now.Sub(last) > w.ttl
		if stale {
			delete(w.used, id)
			w.deleting[id] = true
		}
		w.mu.Unlock()
		if stale {
			w.removeDir(id)
			gone = append(gone, id)
		}
	}
	return gone
}

var errBadPath = errors.New("invalid file path")

// cleanName checks a file name given for a workspace: relative, no "..",
// no NUL.
func cleanName(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) || filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) {
		return "", fmt.Errorf("%w: %q", errBadPath, name)
	}
	c := filepath.Clean(name)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: %q", errBadPath, name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: %q", errBadPath, name)
		}
	}
	return c, nil
}

// A workdir is an execution's workspace, acquired on first use: a
// javascript run that touches no file creates none.
type workdir struct {
	ws      *workspaces
	session string
	cred    string
	once    sync.Once
	dir, id string
	err     error
	// wrote says that javascript's writeFile wrote in it.
	wrote atomic.Bool
}

func (w *workdir) get() (string, error) {
	w.once.Do(func() { w.dir, w.id, w.err = w.ws.acquire(w.session, w.cred) })
	return w.dir, w.err
}

// release ends the use, if there was one.
func (w *workdir) release() {
	if w.id != "" {
		w.ws.release(w.id, w.session == "")
	}
}

var errNotRegular = errors.New("not a regular file")

// openFile opens a file of the workspace without ever blocking: O_NONBLOCK,
// so that a FIFO, socket or device the code left there cannot hold the
// server in open(2), then fstat of what was opened, refusing anything that
// is not a regular file. root keeps the path inside the workspace (a
// symbolic link that leaves it is refused). A file opened for writing is
// not truncated here: the caller truncates it once it is known regular.
func openFile(root *os.Root, name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := root.OpenFile(name, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
	if err != nil {
		// A FIFO without a reader, or a socket, refuses a non-blocking
		// open (ENXIO): say what it is.
		if info, serr := root.Stat(name); serr == nil && !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: %q is %s", errNotRegular, name, fileKind(info.Mode()))
		}
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %q is %s", errNotRegular, name, fileKind(info.Mode()))
	}
	return f, nil
}

// fileKind names what a non-regular file is, for errors.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// readWorkspaceFile reads a regular file of the workspace, refusing one
// larger than limit bytes.
func readWorkspaceFile(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := openFile(root, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%q is larger than %d bytes", name, limit)
	}
	return b, nil
}

// writeWorkspaceFile writes a regular file of the workspace (creating it),
// refusing to write into anything else, and gives it to owner when owner
// is set (a server running as root gives the jail's user what it writes).
func writeWorkspaceFile(root *os.Root, name string, data []byte, owner *jailUser) error {
	f, err := openFile(root, name, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return err
	}
	_, err = f.Write(data)
	if err == nil && owner != nil {
		err = f.Chown(owner.uid, owner.gid)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

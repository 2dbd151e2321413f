package service

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlockrun/airlock/internal/fetch"
)

//go:embed preludes/prelude.py
var pythonPrelude string

//go:embed preludes/prelude.js
var nodePrelude string

// runRequest is one subprocess execution.
type runRequest struct {
	runtime  string // "python" or "node"
	code     string
	dir      string // the workspace
	timeout  time.Duration
	dispatch Dispatcher
	quota    quota
	room     int64 // bytes left in the quota when the run starts
	// log, when set, is given each line of the output as it is written
	// (ExecuteRequest.Log).
	log func(line string)
}

// runOutcome is what came of it.
type runOutcome struct {
	output    string // the JSON of the value given to set_result, or ""
	stdout    string // a command's standard output (its errors are in logs)
	files     []string
	logs      string
	exitCode  int
	err       string
	timedOut  bool
	overQuota bool
	// workspaceBytes is what the workspace held at the end (up to the
	// quota: the measure stops past it).
	workspaceBytes int64
}

// jail is how subprocesses are started: under bubblewrap, or (insecure)
// directly.
type jail struct {
	bwrap    string // "" when running without bubblewrap
	prlimit  string // "" when the machine has none
	python   string
	node     string
	mounts   []string // bubblewrap's options that build the jail's root
	memory   int64
	procs    int
	install  bool
	maxOut   int
	fileSize int64
	inFlight int // tool calls at once
	// installTimeout bounds one package install.
	installTimeout time.Duration
	pipIndex       string // pip's --index-url, or "" for pip's own configuration
	// user, when set, is the unprivileged user the jail runs as: a server
	// running as root gives it the workspaces (nil otherwise), and
	// setpriv (under /usr, so inside the jail too) becomes it.
	user    *jailUser
	setpriv string
	// rootWithoutSetpriv: the server is root and cannot drop to the
	// jail's user, so python and node are refused.
	rootWithoutSetpriv bool
	// proxy, when set (Config.Fetch, under bubblewrap), is the jail's one
	// way out: an HTTP proxy of the server's, under the fetch policy.
	proxy *jailProxy
}

// jailProxy is what the jail's proxy needs: the policy, the certificate
// authority only the jail trusts (for https, read by the proxy so that it
// can add the secrets), and where each request is logged.
type jailProxy struct {
	policy fetch.Policy
	ca     *fetch.CA
	log    *slog.Logger
}

// logFetch logs a request an execution made (fetch, or the jail's proxy),
// never its headers.
func logFetch(log *slog.Logger, r fetch.Record) {
	log.Info("fetch", "method", r.Method, "host", r.Host, "path", r.Path, "status", r.Status,
		"bytes", r.Bytes, "duration", r.Duration, "allowed", r.Allowed, "error", r.Error)
}

// The jail reaches its proxy at proxyAddr, a TCP port of its own network
// namespace's loopback that the preludes forward to the proxy's socket
// (Python's and Node's clients speak to a proxy over TCP only).
const proxyAddr = "127.0.0.1:3128"

// serve serves the proxy of one execution on a socket in priv until ctx
// ends or wait is called, and returns the environment that points the
// code's clients at it; wait ends it and logs its requests (never a
// header).
func (p *jailProxy) serve(ctx context.Context, j *jail, priv string) (env []string, wait func(), err error) {
	ln, err := net.Listen("unix", filepath.Join(priv, "proxy"))
	if err != nil {
		return nil, nil, err
	}
	if err := writeFiles(priv, map[string]string{"ca.pem": string(p.ca.PEM)}); err != nil {
		ln.Close()
		return nil, nil, err
	}
	if err := j.giveAway(priv, "proxy", "ca.pem"); err != nil {
		ln.Close()
		return nil, nil, err
	}
	f := fetch.New(p.policy)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.ServeProxy(ctx, ln, p.ca)
	}()
	wait = func() {
		cancel()
		<-done
		f.CloseIdle()
		for _, r := range f.Records() {
			logFetch(p.log, r)
		}
	}
	ca := j.inside(priv, "ca.pem")
	env = []string{"AIRLOCK_PROXY_SOCKET=" + j.inside(priv, "proxy"), "AIRLOCK_PROXY_ADDR=" + proxyAddr}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		env = append(env, k+"=http://"+proxyAddr)
	}
	// The jail's own loopback (a server the code starts) is not the proxy's.
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		env = append(env, k+"=localhost,127.0.0.1,::1")
	}
	for _, k := range []string{"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"} {
		env = append(env, k+"="+ca)
	}
	// Node's own fetch and http read the proxy variables from Node 24
	// (and 22.21) when asked to.
	env = append(env, "NODE_USE_ENV_PROXY=1")
	return env, wait, nil
}

// jailUser is the unprivileged user of the jail when the server is root.
type jailUser struct{ uid, gid int }

// jailID is the user and group the code runs as inside its user namespace.
const jailID = 65534

// Inside the jail, the execution's private files (read-only) and the
// workspace (writable) are always at the same paths: no host path shows.
const (
	sandboxRun  = "/run/airlock"
	sandboxWork = "/workspace"
)

// jailRoot is the bubblewrap options that build the jail's root from what
// the runtimes need, on an empty tmpfs: /usr read-only, the top-level
// links or directories of the system's libraries (/bin, /lib, /lib64, ...
// as the machine has them), the dynamic linker's cache, and each
// interpreter's own tree when it lives outside /usr (a pyenv or nvm
// install). Nothing else of the host is there: no /etc, /home, /root,
// /var, /tmp or other workspaces.
//
// Nor is /proc, unless proc: a procfs's mount tables (/proc/self/mountinfo,
// /proc/<pid>/mounts, of every process of the jail) show each bind
// mount's source as its path within its filesystem, the host workspace's
// path among them, and no bubblewrap option hides them (see RATIONALE.md,
// "The jail has no /proc").
func jailRoot(prefixes []string, proc bool) []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		info, err := os.Lstat(d)
		switch {
		case err != nil:
		case info.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case info.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	// Directories bubblewrap makes on the way to a mount point copy their
	// source's mode (a root's 0700 home): they are made searchable first.
	args = append(args, "--perms", "0755", "--dir", "/etc", "--perms", "0755", "--dir", "/run",
		"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache")
	seen := map[string]bool{}
	for _, p := range prefixes {
		if p == "" || p == "/" || p == "/usr" || strings.HasPrefix(p, "/usr/") || seen[p] {
			continue
		}
		seen[p] = true
		var parents []string
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			args = append(args, "--perms", "0755", "--dir", d)
		}
		args = append(args, "--ro-bind", p, p)
	}
	if proc {
		args = append(args, "--proc", "/proc")
	}
	return append(args, "--dev", "/dev", "--size", strconv.Itoa(jailTmpBytes), "--tmpfs", "/tmp")
}

// errTail is how much of the end of the logs an error carries.
const errTail = 4 << 10

// jailTmpBytes bounds the jail's /tmp, a tmpfs (memory).
const jailTmpBytes = 64 << 20

// run runs the code and waits for it, killing its whole process tree at
// the timeout.
func (j *jail) run(ctx context.Context, req runRequest) (*runOutcome, error) {
	priv, err := os.MkdirTemp("", "airlock-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(priv)
	var interp []string
	switch req.runtime {
	case "python":
		if err := writeFiles(priv, map[string]string{"prelude.py": pythonPrelude, "main.py": req.code}); err != nil {
			return nil, err
		}
		interp = []string{j.python, "-u", j.inside(priv, "prelude.py"), j.inside(priv, "main.py")}
	case "command":
		interp = []string{"/bin/sh", "-c", req.code}
	case "node":
		// The code runs in an async function, for top-level await, as a
		// file of its workspace: require, __filename and __dirname resolve
		// there (./helper.js, node_modules). The wrapper shares the first
		// line, so line numbers stay the code's.
		main := `const {callTool,callToolsParallel,setResult,installPackage,stack:__airlockStack}=require(` + strconv.Quote(j.inside(priv, "prelude.js")) +
			`);((require,__filename,__dirname)=>(async()=>{` + req.code +
			"\n})())(require(\"module\").createRequire(process.cwd()+\"/main.js\"),process.cwd()+\"/main.js\",process.cwd())" +
			".catch((e)=>{console.error(__airlockStack(e));process.exitCode=1;});\n"
		if err := writeFiles(priv, map[string]string{"prelude.js": nodePrelude, "main.js": main}); err != nil {
			return nil, err
		}
		interp = []string{j.node, j.inside(priv, "main.js")}
		if j.proxy != nil {
			// Node before 24 (and 22.21) reads no proxy variable for its own
			// fetch; the prelude then sets undici's EnvHttpProxyAgent, which
			// only its internal module gives (the jail, not Node, is the
			// boundary: the code may reach Node's internals as it may run
			// any program of the jail).
			interp = []string{j.node, "--expose-internals", j.inside(priv, "main.js")}
		}
	default:
		return nil, fmt.Errorf("unsupported runtime %q", req.runtime)
	}

	sock := filepath.Join(priv, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	if err := j.giveAway(priv, "prelude.py", "prelude.js", "main.py", "main.js", "sock"); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, req.timeout)
	defer cancel()
	var calls sync.WaitGroup
	install := func(ctx context.Context, manager, spec string) (string, error) {
		return j.installPackage(ctx, manager, spec, req.dir, req.quota)
	}
	go serveCalls(runCtx, ln, req.dispatch, install, &calls, j.inFlight)

	resultR, resultW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer resultR.Close()
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1",
		"AIRLOCK_SOCKET=" + j.inside(priv, "sock")}
	env = append(env, "AIRLOCK_MAX_CALLS="+strconv.Itoa(j.inFlight), "AIRLOCK_MAX_OUTPUT="+strconv.Itoa(j.maxOut))
	if j.install {
		env = append(env, "AIRLOCK_ALLOW_INSTALL=1")
	}
	if j.proxy != nil && req.runtime != "command" { // (the preludes serve the proxy's port)
		penv, wait, err := j.proxy.serve(runCtx, j, priv)
		if err != nil {
			return nil, err
		}
		defer wait()
		env = append(env, penv...)
	}
	var argv []string
	if j.prlimit != "" {
		argv = append(argv, j.prlimit, "--data="+strconv.FormatInt(j.memory, 10), "--cpu="+strconv.Itoa(int(req.timeout.Seconds())+1),
			"--fsize="+strconv.FormatInt(max(1, min(j.fileSize, req.room)), 10), "--nofile=256", "--nproc="+strconv.Itoa(j.procs), "--core=0", "--")
	}
	var argsR *os.File
	if j.bwrap != "" {
		// The options travel on a pipe (--args), so that the jail's
		// /proc/1/cmdline (bubblewrap's) names no host path but the
		// interpreter's.
		opts := []string{"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
			"--new-session", "--die-with-parent", "--hostname", "airlock"}
		if j.user != nil {
			// A root server's bubblewrap builds the jail as root, and
			// setpriv, the first command inside, becomes the unprivileged
			// user for good (no capability left, no_new_privs set by
			// bubblewrap) before the interpreter starts.
			opts = append(opts, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
		} else {
			// Otherwise the code is an unprivileged user of its own user
			// namespace, mapped to the server's.
			opts = append(opts, "--unshare-user", "--uid", strconv.Itoa(jailID), "--gid", strconv.Itoa(jailID), "--cap-drop", "ALL")
		}
		opts = append(opts, j.mounts...)
		opts = append(opts, "--ro-bind", priv, sandboxRun, "--bind", req.dir, sandboxWork, "--chdir", sandboxWork, "--remount-ro", "/", "--clearenv",
			"--setenv", "HOME", sandboxWork)
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			opts = append(opts, "--setenv", k, v)
		}
		var argsW *os.File
		if argsR, argsW, err = os.Pipe(); err != nil {
			return nil, err
		}
		defer argsR.Close()
		go func() { // a pipe's buffer may be smaller than the options
			argsW.Write([]byte(strings.Join(opts, "\x00") + "\x00"))
			argsW.Close()
		}()
		argv = append(argv, j.bwrap, "--args", "4", "--")
		if j.user != nil {
			id := strconv.Itoa(j.user.uid)
			argv = append(argv, j.setpriv, "--reuid="+id, "--regid="+strconv.Itoa(j.user.gid), "--clear-groups",
				"--inh-caps=-all", "--bounding-set=-all", "--")
		}
	}
	argv = append(argv, interp...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = req.dir
	cmd.Env = append(env, "HOME="+req.dir)
	logs := &capped{limit: j.maxOut}
	if req.log != nil {
		logs.lines = &lineSplitter{emit: req.log}
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	var stdout *capped // a command's standard output, apart from its errors (logs)
	if req.runtime == "command" {
		stdout = &capped{limit: j.maxOut}
		cmd.Stdout = stdout
	}
	cmd.ExtraFiles = []*os.File{resultW} // fd 3
	if argsR != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, argsR) // fd 4
	}
	inGroup(cmd)
	cmd.WaitDelay = time.Second // a descendant holding the output open does not hold the response
	if err := cmd.Start(); err != nil {
		resultW.Close()
		return nil, fmt.Errorf("start %s: %w", req.runtime, err)
	}
	resultW.Close()
	results := make(chan []byte, 1)
	tooBig := make(chan struct{})
	go func() { results <- lastResult(resultR, j.maxOut, tooBig) }()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	overQuota := make(chan error, 1)
	go req.quota.watch(runCtx, req.dir, func(err error) { overQuota <- err })
	var werr, quotaErr error
	timedOut := false
	select {
	case werr = <-waited:
	case quotaErr = <-overQuota:
		killGroup(cmd)
		werr = <-waited
	case <-tooBig: // the code would block on a pipe no one reads
		killGroup(cmd)
		werr = <-waited
	case <-runCtx.Done():
		timedOut = errors.Is(runCtx.Err(), context.DeadlineExceeded)
		killGroup(cmd) // the process group: children too
		werr = <-waited
	}
	killGroup(cmd) // anything the code left behind in its group
	logs.flush()
	resultR.SetReadDeadline(time.Now().Add(time.Second))
	raw := <-results
	cancel()
	out := &runOutcome{logs: logs.String(), exitCode: cmd.ProcessState.ExitCode()}
	if stdout != nil {
		out.stdout = stdout.String()
	}
	if quotaErr == nil { // what was written after the last measure
		out.workspaceBytes, _, quotaErr = req.quota.usage(req.dir)
		if !errors.Is(quotaErr, errOverQuota) {
			quotaErr = nil
		}
	} else {
		out.workspaceBytes = req.quota.bytes
	}
	switch {
	case quotaErr != nil:
		out.exitCode, out.overQuota = -1, true
		out.err = quotaErr.Error()
	case timedOut:
		out.exitCode, out.timedOut = -1, true
		out.err = fmt.Sprintf("execution timed out after %s", req.timeout)
	case ctx.Err() != nil:
		out.exitCode, out.err = -1, "execution cancelled"
	case werr != nil:
		// The end of what the code printed says why, as the reference
		// reports it (a traceback, an uncaught error).
		out.err = werr.Error()
		if tail := strings.TrimSpace(logs.String()); tail != "" {
			if len(tail) > errTail {
				tail = "..." + tail[len(tail)-errTail:]
			}
			out.err = tail
		}
	}
	if raw == nil {
		select {
		case <-tooBig:
			out.exitCode = 1
			out.err = fmt.Sprintf("the result is larger than the output cap (%d bytes of JSON): return less, or write it to a file and declare the file", j.maxOut)
			return out, nil
		default:
		}
	}
	if line := lastLine(raw); len(line) > 0 {
		var r struct {
			Data  json.RawMessage `json:"data"`
			Files []string        `json:"files"`
		}
		if err := json.Unmarshal(line, &r); err == nil {
			out.output, out.files = string(r.Data), r.Files
			if req.runtime == "python" && out.output == "null" { // set_result(None), as the reference
				out.output = ""
			}
		} else if out.err == "" {
			out.err = "the result could not be read: " + err.Error()
		}
	}
	return out, nil
}

// giveAway makes the private directory and its files the jail user's,
// when the server is root (the jail then runs as that user).
func (j *jail) giveAway(dir string, names ...string) error {
	if j.user == nil {
		return nil
	}
	for _, n := range names {
		if err := os.Lchown(filepath.Join(dir, n), j.user.uid, j.user.gid); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return os.Lchown(dir, j.user.uid, j.user.gid)
}

// inside is where a private file is seen by the code.
func (j *jail) inside(priv, name string) string {
	if j.bwrap == "" {
		return filepath.Join(priv, name)
	}
	return sandboxRun + "/" + name
}

func writeFiles(dir string, files map[string]string) error {
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return os.Chmod(dir, 0o700)
}

// lastResult reads the result pipe and gives its last line; a line over
// limit closes tooBig and ends the reading (nil).
func lastResult(r io.Reader, limit int, tooBig chan struct{}) []byte {
	br := bufio.NewReaderSize(r, 64<<10)
	var last, cur []byte
	for {
		chunk, err := br.ReadSlice('\n')
		cur = append(cur, chunk...)
		if len(cur) > limit+1 { // +1: the newline
			close(tooBig)
			return nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(bytes.TrimSpace(cur)) > 0 {
			last = cur
		}
		cur = nil
		if err != nil {
			return last
		}
	}
}

func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, "\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

// serveCalls answers the code's tool calls on the Unix socket: one JSON
// line each way per connection, each connection on its own goroutine, at
// most inFlight at once: the next connection is accepted when one ends,
// and until then it waits in the socket's backlog, costing the server
// nothing.
func serveCalls(ctx context.Context, ln net.Listener, dispatch Dispatcher, install func(ctx context.Context, manager, spec string) (string, error), wg *sync.WaitGroup, inFlight int) {
	go func() { <-ctx.Done(); ln.Close() }()
	slots := make(chan struct{}, inFlight)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots }()
			defer wg.Done()
			defer conn.Close()
			line, err := bufio.NewReader(io.LimitReader(conn, 16<<20)).ReadBytes('\n')
			var resp struct {
				Data  *string `json:"data,omitempty"`
				Error string  `json:"error,omitempty"`
			}
			var call struct {
				Name    string          `json:"name"`
				Args    json.RawMessage `json:"args"`
				Install string          `json:"install"` // a package, for pip or npm
				Manager string          `json:"manager"`
			}
			if err != nil && len(line) == 0 || json.Unmarshal(line, &call) != nil || call.Name == "" && call.Install == "" {
				resp.Error = "malformed tool call"
			} else if call.Install != "" {
				if data, err := install(ctx, call.Manager, call.Install); err != nil {
					resp.Error = err.Error()
				} else {
					resp.Data = &data
				}
			} else if data, err := dispatch(ctx, call.Name, call.Args); err != nil {
				resp.Error = err.Error()
			} else {
				resp.Data = &data
			}
			b, _ := json.Marshal(resp)
			conn.Write(append(b, '\n'))
		}()
	}
}

// capped keeps the head of what is written to it that fits limit, as
// capLen counts it (a character at a time; one split between two writes
// counts as the bytes it was split into), then a marker that says how many
// bytes were cut.
type capped struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	used  int // capLen of buf
	cut   int64
	// lines, when set, is given what is kept as it is written.
	lines *lineSplitter
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut > 0 {
		c.cut += int64(len(p))
		return len(p), nil
	}
	i, n, all := capPrefix(p, c.limit-c.used)
	c.buf.Write(p[:i])
	if c.lines != nil {
		c.lines.Write(p[:i])
	}
	c.used += n
	if !all {
		c.cut += int64(len(p) - i)
	}
	return len(p), nil
}

// flush passes on a last line without a newline.
func (c *capped) flush() {
	if c.lines != nil {
		c.lines.flush()
	}
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut > 0 {
		return c.buf.String() + cutMarker(c.cut)
	}
	return c.buf.String()
}

// cutMarker ends output that was cut, saying how much.
func cutMarker(n int64) string {
	return fmt.Sprintf("\n...[output truncated: %d bytes cut]\n", n)
}

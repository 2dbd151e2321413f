// Package service is Airlock's sandbox service (seed 004): an HTTP server
// that runs code an agent wrote — Python and Node.js in subprocesses jailed
// by bubblewrap, JavaScript and TypeScript on the core sandbox in the
// server's process (in worker processes with Config.Workers) — with tool
// calls back to the agent over HTTP, per-session workspaces, and files in
// and out. It speaks the reference protocol (POST /execute, /health, DELETE
// /workspace/{id}) and its own /v1/execute; a client that asks for it
// (Accept: application/x-ndjson or text/event-stream) gets an execution's
// output as it is written, as the events of [StreamEvent], the default
// response's object last.
//
// Deny by default: it listens on loopback (beyond it only with bearer
// tokens, or AllowNoToken), posts callbacks only to loopback and
// CallbackHosts, installs nothing unless AllowInstall, never runs code as
// root, and gives the jail no /proc unless JailProc. A session belongs to
// the token that made it.
package service

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/airlockrun/airlock"
)

// Config configures a server. The zero value of a field means its default.
type Config struct {
	// Addr to listen on (SANDBOX_ADDR); default "127.0.0.1:9000". New
	// refuses an address beyond loopback without Tokens, unless
	// AllowNoToken.
	Addr string
	// Tokens are the bearer tokens clients must send (SANDBOX_TOKENS,
	// comma-separated; --token, repeatable); none means no authentication.
	// Each token is a credential: a session belongs to the one that made it,
	// and another gets 403 for it.
	Tokens []string
	// AllowNoToken lets the server listen beyond loopback without tokens
	// (--allow-no-token): for a network where the operator controls who
	// can connect.
	AllowNoToken bool
	// CallbackHosts are the host names (or addresses) callbacks may go to,
	// besides loopback (SANDBOX_CALLBACK_HOSTS, comma-separated;
	// --callback-hosts). A request with any other callback_url gets 400.
	CallbackHosts []string
	// MaxRequestBytes bounds a request's body, checked before it is read
	// (413 past it) (SANDBOX_MAX_REQUEST, --max-request); default 32 MiB.
	MaxRequestBytes int64
	// MaxCallsInFlight bounds the tool callbacks of one execution running
	// at once, callToolsParallel / call_tools_parallel included: more
	// wait (--max-calls-in-flight); default 8.
	MaxCallsInFlight int
	// Workspace is the root of the session workspaces (SANDBOX_WORKSPACE);
	// default a directory under the system's temporary directory.
	Workspace string
	// PythonBin and NodeBin are the interpreters (SANDBOX_PYTHON_BIN,
	// SANDBOX_NODE_BIN); default "python3" and "node".
	PythonBin, NodeBin string
	// MaxConcurrent executions; more get 503 (SANDBOX_MAX_CONCURRENT);
	// default 4.
	MaxConcurrent int
	// SessionTTL evicts a workspace not used for this long
	// (SANDBOX_SESSION_TTL); default 1h.
	SessionTTL time.Duration
	// MaxOutput caps the logs of a python or node execution, and its
	// result (SANDBOX_MAX_OUTPUT); default 512 KiB. A cap counts a text's
	// bytes, a character whose JSON escape is longer than two bytes (a
	// control character but a line break or tab, U+2028, U+2029, a byte
	// that is not UTF-8) at the escape's six: the response carries a text
	// within the cap in at most twice the cap.
	MaxOutput int
	// JSMaxOutput caps what a javascript or typescript execution returns
	// to the caller, which is usually a model's context
	// (SANDBOX_JS_MAX_OUTPUT, --js-max-output); default 32 KiB, counted as
	// for MaxOutput. Logs past it are cut, with a marker that says how many
	// bytes were; a result whose JSON is larger fails the run at setResult,
	// with an error that says so; the error is cut so that its text
	// (error) and, in /v1/execute, its parts (scriptError, which repeat its
	// name and message) fit it together, each cut text with the marker.
	JSMaxOutput int
	// MaxFileBytes caps a returned file; a larger one comes back as its
	// name, type and size only. Default 10 MiB.
	MaxFileBytes int64
	// MemoryLimitBytes caps a subprocess's address space and a JavaScript
	// sandbox's heap; default 512 MiB (subprocesses) and 64 MiB (JavaScript).
	MemoryLimitBytes int64
	// MaxProcesses bounds a subprocess's processes (RLIMIT_NPROC; binding
	// only when the server does not run as root); default 64.
	MaxProcesses int
	// Fetch, when set, gives javascript and typescript executions fetch
	// under this policy (airlock.Fetch, a Fetcher for each execution; the
	// server logs each request, never a header), and python and node one
	// way out under the same policy: an HTTP proxy of the server's for each
	// execution, which reads https with a certificate authority only the
	// jail trusts (HTTPS_PROXY and SSL_CERT_FILE point the clients there;
	// README, "airlock serve"). Without it they have no network (but under
	// Insecure, where there is no jail, no proxy, and the host's network).
	Fetch *airlock.FetchPolicy
	// DefaultSession is the session of a files or legacy request that
	// names none (session_id, X-Session-ID, X-Sandbox-ID): a server that
	// serves one session, as agent-sandbox places a session in a pod of
	// its own, so that agent-sandbox's clients, which name none, reach it.
	// "" means such a request is refused (400).
	DefaultSession string
	// AllowInstall lets python and node code install packages
	// (install_package / installPackage): the server installs them outside
	// the jail into the session's workspace, wheels only for pip, no
	// scripts for npm. Off by default: the error then says so at once.
	AllowInstall bool
	// InstallTimeout bounds one install (--install-timeout); default 2m.
	InstallTimeout time.Duration
	// PipIndexURL is the package index pip installs from, a PEP 503
	// "simple" index such as a mirror or a private index
	// (SANDBOX_PIP_INDEX_URL); default pip's own configuration, which the
	// installer reads from the server's environment (PIP_INDEX_URL,
	// pip.conf), else PyPI. Only the operator sets it: code names a package,
	// never an index.
	PipIndexURL string
	// Insecure runs Python and Node without bubblewrap. Without it and
	// without bwrap on the machine, those runtimes are refused.
	Insecure bool
	// JailUID is the unprivileged user (and group) the jail runs as when
	// the server runs as root; default 65534 (nobody). The workspaces
	// become its, and the interpreters and the workspace root must be
	// reachable by it (the server says so at start when they are not).
	JailUID int
	// JailProc mounts a procfs at /proc in the jail (SANDBOX_JAIL_PROC=1),
	// for code that needs it (Node's process.memoryUsage and os.cpus,
	// /dev/stdout, psutil, ps). Off by default: a procfs's mount tables
	// show the host path of the workspace (its path within its filesystem,
	// which is all of it when the workspace root is on the root
	// filesystem), the private directory under the system's temporary
	// directory and the interpreters' trees, and /proc shows the host's
	// kernel, processors, memory and load. An operator who turns it on
	// hides the workspace root's path best by making it a filesystem of
	// its own (a volume or a mount): the tables then show only
	// "/<session directory>".
	JailProc bool
	// BwrapBin is the bubblewrap binary; default "bwrap".
	BwrapBin string
	// WorkspaceQuotaBytes bounds the bytes of a session's workspace
	// (SANDBOX_WORKSPACE_QUOTA); default 1 GiB. WorkspaceMaxEntries bounds
	// its files and directories; default 10,000. A run that goes over fails
	// (Python and Node are killed, JavaScript's writeFile throws), and a
	// workspace over either refuses runs until files are deleted.
	WorkspaceQuotaBytes int64
	WorkspaceMaxEntries int
	// Workers is how many worker processes run javascript and typescript
	// (airlock.RuntimeConfig.Workers), so that a fault the engine's own
	// instance does not contain (a bug in the wasm compiler or in the host's
	// Go code) kills a worker, not the server. Default 0 (and negative): in
	// the server's process, where the engine contains stops, memory and
	// faults itself.
	Workers int
}

// ConfigFromEnv reads the seed's environment variables.
func ConfigFromEnv() (Config, error) {
	var c Config
	c.Addr = os.Getenv("SANDBOX_ADDR")
	c.Tokens = splitList(os.Getenv("SANDBOX_TOKENS"))
	c.CallbackHosts = splitList(os.Getenv("SANDBOX_CALLBACK_HOSTS"))
	c.Workspace = os.Getenv("SANDBOX_WORKSPACE")
	c.PythonBin = os.Getenv("SANDBOX_PYTHON_BIN")
	c.NodeBin = os.Getenv("SANDBOX_NODE_BIN")
	c.PipIndexURL = os.Getenv("SANDBOX_PIP_INDEX_URL")
	c.DefaultSession = os.Getenv("SANDBOX_DEFAULT_SESSION")
	switch v := os.Getenv("SANDBOX_JAIL_PROC"); v {
	case "", "0", "false":
	case "1", "true":
		c.JailProc = true
	default:
		return c, fmt.Errorf("SANDBOX_JAIL_PROC=%q: want 1 or 0", v)
	}
	n, err := positiveEnv("SANDBOX_MAX_CONCURRENT", "a positive integer")
	if err != nil {
		return c, err
	}
	c.MaxConcurrent = int(n)
	if v := os.Getenv("SANDBOX_SESSION_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("SANDBOX_SESSION_TTL=%q: want a duration such as 1h", v)
		}
		c.SessionTTL = d
	}
	if n, err = positiveEnv("SANDBOX_MAX_OUTPUT", "a positive number of bytes"); err != nil {
		return c, err
	}
	c.MaxOutput = int(n)
	if n, err = positiveEnv("SANDBOX_JS_MAX_OUTPUT", "a positive number of bytes"); err != nil {
		return c, err
	}
	c.JSMaxOutput = int(n)
	if c.WorkspaceQuotaBytes, err = positiveEnv("SANDBOX_WORKSPACE_QUOTA", "a positive number of bytes"); err != nil {
		return c, err
	}
	if c.MaxRequestBytes, err = positiveEnv("SANDBOX_MAX_REQUEST", "a positive number of bytes"); err != nil {
		return c, err
	}
	return c, nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// positiveEnv reads a positive integer from the environment; 0 when unset.
func positiveEnv(name, want string) (int64, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want %s", name, v, want)
	}
	return n, nil
}

// WithDefaults is the configuration with each zero field set to its
// default, as New uses it.
func (c Config) WithDefaults() Config {
	c.defaults()
	return c
}

func (c *Config) defaults() {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:9000"
	}
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = 32 << 20
	}
	if c.MaxCallsInFlight <= 0 {
		c.MaxCallsInFlight = 8
	}
	if c.Workspace == "" {
		c.Workspace = os.TempDir() + "/airlock-sandbox"
	}
	if c.PythonBin == "" {
		c.PythonBin = "python3"
	}
	if c.NodeBin == "" {
		c.NodeBin = "node"
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = 4
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = time.Hour
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = 512 << 10
	}
	if c.JSMaxOutput <= 0 {
		c.JSMaxOutput = 32 << 10
	}
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = 10 << 20
	}
	if c.MaxProcesses <= 0 {
		c.MaxProcesses = 64
	}
	if c.InstallTimeout <= 0 {
		c.InstallTimeout = 2 * time.Minute
	}
	if c.JailUID <= 0 {
		c.JailUID = 65534
	}
	if c.BwrapBin == "" {
		c.BwrapBin = "bwrap"
	}
	if c.WorkspaceQuotaBytes <= 0 {
		c.WorkspaceQuotaBytes = 1 << 30
	}
	if c.WorkspaceMaxEntries <= 0 {
		c.WorkspaceMaxEntries = 10000
	}
}

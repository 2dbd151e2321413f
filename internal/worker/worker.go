// Package worker is the process boundary of worker-process mode
// (airlock.RuntimeConfig.Workers): sandboxes run in child processes — the
// same binary, re-executed — so that a fatal error or a loop the engine
// cannot interrupt kills a worker, never the host. The host keeps the
// bridged functions: a call from the sandbox travels to the host and back,
// its values as bytes of the codec's binary format (a JSON function's as
// its JSON text). Messages are gob over the child's stdin and stdout;
// synchronous calls take memory both processes share where the system
// has it (shm_linux.go). A worker that dies or does not stop in time is
// killed and replaced; its runs settle with an error.
//
// The package knows processes, messages and slots, not runs: the host's
// side of a run is a [Handler] (the root's), and a run in the worker is
// started by a [StartFunc] (the root's too), with plain values both ways.
package worker

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlockrun/airlock/internal/hostcall"
)

// envWorker marks a process started as a worker.
const envWorker = "AIRLOCK_WORKER_PROCESS"

// envShm names the worker's descriptor of the shared-memory slots.
const envShm = "AIRLOCK_WORKER_SHM"

// msg is one message between host and worker, either way.
type msg struct {
	Kind   string // run, terminate, reply, slot (host → worker); call, report, log, done, poke (worker → host)
	Run    uint64
	Call   uint64
	Fn     int
	Data   []byte // a value in the binary format, or a JSON function's JSON text
	Text   string // a terminate's message
	Err    string
	Spec   *Spec
	Result *Result
	Log    *Log // a console call, streamed when the host's run has Options.Log
}

// Spec is a run, for the worker.
type Spec struct {
	Source, Filename string
	Language         int
	Memory           int64
	Modules          map[string]string
	Fn               string
	Args             []byte // Execute.Args, encoded; nil: none
	Globals          []Value
	Imports          map[string][]Value
	Report           bool
	Log              bool
	MaxDuration      time.Duration
	MaxValueBytes    int
	MaxAsyncCalls    int
}

// Value is a global or an export: a value, encoded, or a host function
// by index.
type Value struct {
	Name  string
	Value []byte
	Fn    int // -1 for a value
	Async bool
	JSON  bool
	Glue  string // the JavaScript that makes the global of the function (fetch, timers), or ""
}

// Result is a run's outcome, for the host.
type Result struct {
	Status   string
	Result   []byte // encoded
	Logs     []Log
	Error    *Error
	Memory   int64
	Duration time.Duration
	// Thrown is set when Error's texts came from the sandbox: the host
	// pays for them from its budget too.
	Thrown bool
}

// Error is a run's error, field for field the root's ScriptError.
type Error struct {
	Name, Message, Stack, Specifier, Filename string
	Line, Column                              int
}

// Log is a console call.
type Log struct {
	Level string
	Args  []byte // the list, encoded
	Time  time.Time
}

// --- the host side ---

// Handler is the host's side of one run in a worker: the pool hands it the
// worker's messages about the run. Its methods may be called on several
// goroutines at once.
type Handler interface {
	// Answer calls host function fn with its encoded arguments, as
	// hostcall.Host.Answer does.
	Answer(fn int, list []byte) (out []byte, errText string)
	// Fail ends the run with an error the sandbox cannot catch: a host
	// function ended its goroutine (runtime.Goexit).
	Fail(msg string)
	// Report and Log are the run's reports and streamed console calls.
	Report(data []byte)
	Log(l *Log)
	// Done settles the run with the worker's result, once.
	Done(r *Result)
	// Lost settles the run whose worker exited before it settled.
	Lost()
}

// Pool is a Runtime's worker processes.
type Pool struct {
	size  int
	mu    sync.Mutex
	procs []*proc
	next  int
}

// NewPool returns a pool of up to size workers, started as runs need them.
func NewPool(size int) *Pool { return &Pool{size: size} }

type proc struct {
	cmd    *exec.Cmd
	enc    *gob.Encoder
	wmu    sync.Mutex
	mu     sync.Mutex
	runs   map[uint64]Handler
	dead   bool
	nextID atomic.Uint64
	killed sync.Once
	calls  *hostShm // shared-memory slots for synchronous calls, or nil
}

// Run is a run sent to a worker.
type Run struct {
	id   uint64
	proc *proc
}

// get returns a live worker, starting one if needed.
func (p *Pool) get() (*proc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.procs) < p.size {
		w, err := start()
		if err != nil {
			return nil, err
		}
		p.procs = append(p.procs, w)
		return w, nil
	}
	for i := 0; i < len(p.procs); i++ {
		p.next = (p.next + 1) % len(p.procs)
		w := p.procs[p.next]
		if !w.isDead() {
			return w, nil
		}
		nw, err := start()
		if err != nil {
			return nil, err
		}
		p.procs[p.next] = nw
		return nw, nil
	}
	return nil, errors.New("airlock: no worker process")
}

// Close kills the workers: their runs settle as lost.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.procs {
		w.kill()
	}
	p.procs = nil
}

// Add gives h a run on a worker: h takes the worker's messages about it
// once the run is started.
func (p *Pool) Add(h Handler) (*Run, error) {
	w, err := p.get()
	if err != nil {
		return nil, err
	}
	r := &Run{id: w.nextID.Add(1), proc: w}
	w.mu.Lock()
	w.runs[r.id] = h
	w.mu.Unlock()
	return r, nil
}

// Start sends the run's spec to its worker.
func (r *Run) Start(spec *Spec) error {
	if err := r.proc.send(&msg{Kind: "run", Run: r.id, Spec: spec}); err != nil {
		r.proc.kill()
		return fmt.Errorf("airlock: worker process: %w", err)
	}
	return nil
}

// Stop tells the worker to stop the run, with text as its error's message.
func (r *Run) Stop(text string) { r.proc.send(&msg{Kind: "terminate", Run: r.id, Text: text}) }

// Kill kills the run's worker, with every run in it.
func (r *Run) Kill() { r.proc.kill() }

// Forget stops handing the worker's messages about the run to its Handler:
// the run has settled.
func (r *Run) Forget() {
	r.proc.mu.Lock()
	delete(r.proc.runs, r.id)
	r.proc.mu.Unlock()
}

func start() (*proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("airlock: worker process: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envWorker+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	calls, shmFile := newHostShm()
	if shmFile != nil {
		cmd.ExtraFiles = []*os.File{shmFile} // fd 3
		cmd.Env = append(cmd.Env, envShm+"=3")
	}
	if err := cmd.Start(); err != nil {
		if shmFile != nil {
			shmFile.Close()
			calls.release()
		}
		return nil, fmt.Errorf("airlock: worker process: %w", err)
	}
	if shmFile != nil {
		shmFile.Close() // the mappings stay
	}
	w := &proc{cmd: cmd, enc: gob.NewEncoder(in), runs: map[uint64]Handler{}, calls: calls}
	go w.read(out)
	return w, nil
}

func (w *proc) send(m *msg) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.enc.Encode(m)
}

// read handles the worker's messages until it exits; then every run it had
// is lost.
func (w *proc) read(out io.Reader) {
	dec := gob.NewDecoder(bufio.NewReader(out))
	for {
		var m msg
		if err := dec.Decode(&m); err != nil {
			break
		}
		if m.Kind == "poke" {
			w.poke()
			continue
		}
		w.mu.Lock()
		h := w.runs[m.Run]
		w.mu.Unlock()
		if h == nil {
			continue
		}
		switch m.Kind {
		case "call":
			go w.call(h, m)
		case "report":
			h.Report(m.Data)
		case "log":
			if m.Log != nil {
				h.Log(m.Log)
			}
		case "done":
			if m.Result != nil {
				h.Done(m.Result)
			}
		}
	}
	w.kill()
	if w.calls != nil {
		w.calls.release()
	}
	w.mu.Lock()
	runs := w.runs
	w.runs = map[uint64]Handler{}
	w.mu.Unlock()
	for _, h := range runs {
		h.Lost()
	}
}

func (w *proc) kill() {
	w.mu.Lock()
	w.dead = true
	w.mu.Unlock()
	w.killed.Do(func() {
		w.cmd.Process.Kill()
		go w.cmd.Wait()
	})
}

func (w *proc) isDead() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dead
}

// call runs a host function for the worker and sends the reply.
func (w *proc) call(h Handler, m msg) {
	reply := &msg{Kind: "reply", Run: m.Run, Call: m.Call, Err: hostcall.ErrGoexit}
	defer func() { w.send(reply) }() // also after a runtime.Goexit
	reply.Data, reply.Err = answer(h, m.Fn, m.Data)
}

// answer is h's answer to a call, and fails the run when the function
// ends the goroutine instead (runtime.Goexit).
func answer(h Handler, fn int, list []byte) (out []byte, errText string) {
	returned := false
	defer func() {
		if !returned {
			h.Fail(hostcall.ErrGoexit)
		}
	}()
	out, errText = h.Answer(fn, list)
	returned = true
	return out, errText
}

package airlock

import (
	"bufio"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/hostcall"
)

// Worker-process mode (RuntimeConfig.Workers): sandboxes run in child
// processes — this same binary, re-executed — so that a fatal error or a
// loop the engine cannot interrupt kills a worker, never the host. The
// host keeps the bridged functions: a call from the sandbox travels to the
// host and back, its values as bytes of the codec's binary format (a JSON
// function's as its JSON text). A worker that dies or
// does not stop in time is killed and replaced; its runs settle with an
// error.

// workerEnv marks a process started as a worker.
const workerEnv = "AIRLOCK_WORKER_PROCESS"

// workerShmEnv names the worker's descriptor of the shared-memory slots.
const workerShmEnv = "AIRLOCK_WORKER_SHM"

func init() {
	if os.Getenv(workerEnv) == "1" {
		os.Unsetenv(workerEnv)
		var slots *workerSlots
		if os.Getenv(workerShmEnv) == "3" {
			slots = openWorkerSlots(os.NewFile(3, "airlock-calls"))
		}
		os.Unsetenv(workerShmEnv)
		serveWorker(os.Stdin, os.Stdout, slots)
		os.Exit(0)
	}
}

// wmsg is one message between host and worker, either way.
type wmsg struct {
	Kind   string // run, terminate, reply (host → worker); call, report, log, done (worker → host)
	Run    uint64
	Call   uint64
	Fn     int
	Data   []byte // a value in the binary format, or a JSON function's JSON text
	Text   string // a terminate's message
	Err    string
	Spec   *wspec
	Result *wresult
	Log    *wlog // a console call, streamed when the host's run has Options.Log
}

// wspec is a run, for the worker.
type wspec struct {
	Source, Filename string
	Language         Language
	Memory           int64
	Modules          map[string]string
	Fn               string
	Args             []byte // Execute.Args, encoded; nil: none
	Globals          []wvalue
	Imports          map[string][]wvalue
	Report           bool
	Log              bool
	MaxDuration      time.Duration
	MaxValueBytes    int
	MaxAsyncCalls    int
}

// wvalue is a global or an export: a value, encoded, or a host function
// by index.
type wvalue struct {
	Name  string
	Value []byte
	Fn    int // -1 for a value
	Async bool
	JSON  bool
}

type wresult struct {
	Status   Status
	Result   []byte // encoded
	Logs     []wlog
	Error    *ScriptError
	Memory   int64
	Duration time.Duration
	// Thrown is set when Error's texts came from the sandbox: the host
	// pays for them from its budget too.
	Thrown bool
}

type wlog struct {
	Level LogLevel
	Args  []byte // the list, encoded
	Time  time.Time
}

// --- the host side ---

type workerPool struct {
	rt    *Runtime
	mu    sync.Mutex
	procs []*workerProc
	next  int
}

type workerProc struct {
	pool   *workerPool
	cmd    *exec.Cmd
	enc    *gob.Encoder
	wmu    sync.Mutex
	mu     sync.Mutex
	runs   map[uint64]*remoteRun
	dead   bool
	nextID atomic.Uint64
	killed sync.Once
	calls  *workerShm // shared-memory slots for synchronous calls, or nil
}

type remoteRun struct {
	stopping atomic.Pointer[string] // the host's reason, once it stopped the run
	failed   atomic.Pointer[string] // set when a host function panicked: the run ends in error
	id       uint64
	proc     *workerProc
	opts     Options
	exec     *Execution
	once     sync.Once
	start    time.Time
	// host answers the worker's calls of the host's functions
	// (hostcall.Host.Answer). Its budget is what is left of the run's
	// MaxValueBytes, counted again on the host's side of the pipe: the
	// worker counts it too, but the host does not rely on a process that
	// runs untrusted code.
	host  *hostcall.Host
	funcs hostcall.Funcs
	// streamed is how many console calls were streamed to Options.Log, and
	// so already counted in the budget when the result brings them again.
	streamed atomic.Int64
}

func newWorkerPool(rt *Runtime) *workerPool { return &workerPool{rt: rt} }

// proc returns a live worker, starting one if needed.
func (p *workerPool) proc() (*workerProc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.procs) < p.rt.cfg.Workers {
		w, err := startWorker(p)
		if err != nil {
			return nil, err
		}
		p.procs = append(p.procs, w)
		return w, nil
	}
	for i := 0; i < len(p.procs); i++ {
		p.next = (p.next + 1) % len(p.procs)
		w := p.procs[p.next]
		w.mu.Lock()
		dead := w.dead
		w.mu.Unlock()
		if !dead {
			return w, nil
		}
		nw, err := startWorker(p)
		if err != nil {
			return nil, err
		}
		p.procs[p.next] = nw
		return nw, nil
	}
	return nil, errors.New("airlock: no worker process")
}

func (p *workerPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.procs {
		w.kill()
	}
	p.procs = nil
}

func startWorker(p *workerPool) (*workerProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("airlock: worker process: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	calls, shmFile := newWorkerShm()
	if shmFile != nil {
		cmd.ExtraFiles = []*os.File{shmFile} // fd 3
		cmd.Env = append(cmd.Env, workerShmEnv+"=3")
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
	w := &workerProc{pool: p, cmd: cmd, enc: gob.NewEncoder(in), runs: map[uint64]*remoteRun{}, calls: calls}
	go w.read(out)
	return w, nil
}

func (w *workerProc) send(m *wmsg) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.enc.Encode(m)
}

// read handles the worker's messages until it exits; then every run it had
// settles with an error.
func (w *workerProc) read(out io.Reader) {
	dec := gob.NewDecoder(bufio.NewReader(out))
	for {
		var m wmsg
		if err := dec.Decode(&m); err != nil {
			break
		}
		if m.Kind == "poke" {
			w.poke()
			continue
		}
		w.mu.Lock()
		r := w.runs[m.Run]
		w.mu.Unlock()
		if r == nil {
			continue
		}
		switch m.Kind {
		case "call":
			go r.call(m)
		case "report":
			if !r.host.Budget.Spend(16 + codec.BinaryCost(m.Data)) {
				r.fail("the run's budget for values crossing to the host is used up by reports")
				continue
			}
			if v, err := codec.DecodeBinaryBytes(m.Data, w.pool.rt.cfg.MaxValueBytes); err == nil {
				r.exec.mu.Lock()
				r.exec.reports = append(r.exec.reports, v)
				r.exec.mu.Unlock()
				if r.opts.Report != nil {
					r.opts.Report(v)
				}
			}
		case "log":
			if m.Log == nil || r.opts.Log == nil {
				continue
			}
			if !r.host.Budget.Spend(16 + codec.BinaryCost(m.Log.Args)) {
				r.fail("the run's budget for values crossing to the host is used up by console output")
				continue
			}
			r.streamed.Add(1)
			v, _ := codec.DecodeBinaryBytes(m.Log.Args, w.pool.rt.cfg.MaxValueBytes)
			args, _ := v.([]any)
			if args == nil {
				args = []any{}
			}
			r.opts.Log(Log{Level: m.Log.Level, Args: args, Time: m.Log.Time})
		case "done":
			r.settle(m.Result)
		}
	}
	w.kill()
	if w.calls != nil {
		w.calls.release()
	}
	w.mu.Lock()
	runs := w.runs
	w.runs = map[uint64]*remoteRun{}
	w.mu.Unlock()
	for _, r := range runs {
		if reason := r.stopping.Load(); reason != nil {
			r.settle(&wresult{Status: StatusTerminated, Error: &ScriptError{Name: "Error", Message: *reason + " (the worker process did not stop in time and was killed)"}})
			continue
		}
		r.settle(&wresult{Status: StatusError, Error: &ScriptError{Name: "InternalError", Message: "the worker process running the sandbox exited"}})
	}
}

func (w *workerProc) kill() {
	w.mu.Lock()
	w.dead = true
	w.mu.Unlock()
	w.killed.Do(func() {
		w.cmd.Process.Kill()
		go w.cmd.Wait()
	})
}

// runRemote starts a run of valid options on a worker process.
func (rt *Runtime) runRemote(ctx context.Context, src string, opts Options, start time.Time) (*Execution, error) {
	r := &remoteRun{opts: opts, start: start, exec: &Execution{done: make(chan struct{}), start: start}}
	h := hostcall.NewHost(0)
	h.Funcs, h.Ctx, h.Limit, h.Spent = &r.funcs, ctx, rt.cfg.MaxValueBytes, errRunBudgetSpent
	h.Results = func(reflect.Value) (int, error) {
		return 0, errors.New("in worker-process mode a host function cannot return a function")
	}
	h.OnPanic = func(err error) { r.fail(err.Error()) }
	h.Budget.Init(rt.cfg.MaxValueBytes)
	r.host = h
	value := func(name string, v any) (wvalue, error) {
		rv := reflect.ValueOf(v)
		if hostcall.IsBridged(rv) {
			id, err := r.funcs.Register(rv)
			if err != nil {
				return wvalue{}, err
			}
			h := r.funcs.At(id)
			return wvalue{Name: name, Fn: id, Async: h.Async, JSON: h.JSON()}, nil
		}
		enc, err := codec.AppendBinary(nil, v, func(reflect.Value) (int, error) {
			return 0, errors.New("in worker-process mode a function must be a global or a module export, not inside a value")
		})
		if err != nil {
			return wvalue{}, fmt.Errorf("airlock: %s: %w", name, err)
		}
		return wvalue{Name: name, Value: enc, Fn: -1}, nil
	}
	_, reportTaken := opts.Globals["report"]
	spec := &wspec{Source: src, Filename: opts.Filename, Language: opts.Language, Memory: opts.MemoryLimitBytes,
		Modules: opts.Modules, Fn: opts.Execute.Fn, Report: !reportTaken, Log: opts.Log != nil, Imports: map[string][]wvalue{},
		MaxDuration: rt.cfg.MaxDuration, MaxValueBytes: rt.cfg.MaxValueBytes, MaxAsyncCalls: rt.cfg.MaxAsyncCalls}
	if spec.Memory == 0 {
		spec.Memory = rt.cfg.MemoryLimitBytes
	}
	if len(opts.Execute.Args) > 0 {
		enc, err := codec.AppendBinary(nil, opts.Execute.Args, func(reflect.Value) (int, error) {
			return 0, errors.New("in worker-process mode Execute.Args cannot hold functions")
		})
		if err != nil {
			return nil, fmt.Errorf("airlock: Execute.Args: %w", err)
		}
		spec.Args = enc
	}
	for _, name := range sortedKeys(opts.Globals) {
		v, err := value(name, opts.Globals[name])
		if err != nil {
			return nil, err
		}
		spec.Globals = append(spec.Globals, v)
	}
	for _, s := range sortedKeys(opts.Imports) {
		for _, name := range sortedKeys(opts.Imports[s]) {
			v, err := value(name, opts.Imports[s][name])
			if err != nil {
				return nil, err
			}
			spec.Imports[s] = append(spec.Imports[s], v)
		}
		if len(opts.Imports[s]) == 0 {
			spec.Imports[s] = []wvalue{}
		}
	}
	w, err := rt.workers.proc()
	if err != nil {
		return nil, err
	}
	r.proc = w
	r.id = w.nextID.Add(1)
	w.mu.Lock()
	w.runs[r.id] = r
	w.mu.Unlock()
	r.exec.job = r
	if err := w.send(&wmsg{Kind: "run", Run: r.id, Spec: spec}); err != nil {
		w.kill()
		return nil, fmt.Errorf("airlock: worker process: %w", err)
	}
	// The context, and the safety cap with a grace period after which the
	// worker is killed: the host owns the end of the run.
	go func() {
		var hard, timeout <-chan time.Time
		if rt.cfg.MaxDuration > 0 {
			t := time.NewTimer(rt.cfg.MaxDuration + rt.cfg.WorkerGrace)
			defer t.Stop()
			hard = t.C
		}
		if opts.Timeout > 0 {
			t := time.NewTimer(opts.Timeout - time.Since(start))
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-r.exec.done:
		case <-timeout:
			r.stop(timeoutMessage(opts.Timeout))
			r.killAfterGrace()
		case <-ctx.Done():
			r.stop(contextMessage(ctx))
			r.killAfterGrace()
		case <-hard:
			msg := capMessage(rt.cfg.MaxDuration)
			r.stopping.CompareAndSwap(nil, &msg)
			r.host.Stop(nil)
			r.proc.kill()
		}
	}()
	return r.exec, nil
}

// terminate is Execution.Terminate's: the worker is told, and killed if
// it does not stop in time.
func (r *remoteRun) terminate(msg string) {
	if r.exec.Running() {
		r.stop(msg)
		go r.killAfterGrace()
	}
}

// stop tells the worker to stop the run, with msg as the reason, unless the
// host has given one already.
func (r *remoteRun) stop(msg string) {
	r.stopping.CompareAndSwap(nil, &msg)
	r.host.Stop(nil) // no host function starts after the host's decision
	r.proc.send(&wmsg{Kind: "terminate", Run: r.id, Text: msg})
}

func (r *remoteRun) killAfterGrace() {
	t := time.NewTimer(r.proc.pool.rt.cfg.WorkerGrace)
	defer t.Stop()
	select {
	case <-r.exec.done:
	case <-t.C:
		r.proc.kill()
	}
}

// call runs a host function for the worker and sends the reply.
func (r *remoteRun) call(m wmsg) {
	reply := &wmsg{Kind: "reply", Run: r.id, Call: m.Call, Err: hostcall.ErrGoexit}
	returned := false
	defer func() { // also after a runtime.Goexit
		if !returned {
			r.fail(hostcall.ErrGoexit)
		}
		r.proc.send(reply)
	}()
	reply.Data, reply.Err = r.host.Answer(m.Fn, m.Data)
	returned = true
}

// fail ends the run with an error the sandbox cannot catch, as a host
// function's panic or runtime.Goexit does in process.
func (r *remoteRun) fail(msg string) {
	r.failed.CompareAndSwap(nil, &msg)
	r.stop(msg)
	go r.killAfterGrace()
}

func (r *remoteRun) settle(wr *wresult) {
	r.once.Do(func() {
		r.proc.mu.Lock()
		delete(r.proc.runs, r.id)
		r.proc.mu.Unlock()
		res := &Result{Status: wr.Status, Error: wr.Error, MemoryUsedBytes: wr.Memory, Logs: []Log{}}
		budget := r.proc.pool.rt.cfg.MaxValueBytes
		if wr.Status == StatusSuccess {
			var v any
			err := codec.ErrTooLarge
			if r.host.Budget.Spend(codec.BinaryCost(wr.Result)) {
				v, err = codec.DecodeBinaryBytes(wr.Result, budget)
			}
			if err != nil {
				res.Status, res.Error = StatusError, &ScriptError{Name: "DataCloneError", Message: err.Error()}
			} else {
				res.Result = v
			}
		}
		// A stop the host decided wins over what the worker reports, as in
		// process: the worker may have ended the run otherwise before it
		// heard of the stop (a call the host refused, say).
		if msg := r.failed.Load(); msg != nil {
			res.Status, res.Error, res.Result = StatusError, &ScriptError{Name: "Error", Message: *msg}, nil
		} else if reason := r.stopping.Load(); reason != nil && res.Status != StatusTerminated {
			res.Status, res.Error, res.Result = StatusTerminated, &ScriptError{Name: "TerminatedError", Message: *reason}, nil
		}
		streamed := int(r.streamed.Load())
		for i, l := range wr.Logs {
			if i >= streamed && !r.host.Budget.Spend(16+codec.BinaryCost(l.Args)) {
				break
			}
			v, _ := codec.DecodeBinaryBytes(l.Args, budget)
			args, _ := v.([]any)
			if args == nil {
				args = []any{}
			}
			res.Logs = append(res.Logs, Log{Level: l.Level, Args: args, Time: l.Time})
		}
		// The error's texts are bounded again, and those from the sandbox
		// paid for again, after the logs, as in process: the host does not
		// rely on the worker.
		if res.Error == wr.Error && wr.Thrown {
			payError(&r.host.Budget, res.Error)
		} else {
			clipError(res.Error)
		}
		res.Reports = r.exec.Reports()
		res.Duration = time.Since(r.start)
		r.exec.result = res
		close(r.exec.done)
	})
}

// --- the worker side ---

// serveWorker runs the runs its host sends, until its input ends.
func serveWorker(in io.Reader, out io.Writer, slots *workerSlots) {
	dec := gob.NewDecoder(bufio.NewReader(in))
	enc := gob.NewEncoder(out)
	var wmu sync.Mutex
	send := func(m *wmsg) {
		wmu.Lock()
		defer wmu.Unlock()
		enc.Encode(m)
	}
	poke := func() { send(&wmsg{Kind: "poke"}) }
	var mu sync.Mutex
	runs := map[uint64]*Execution{}
	pending := map[uint64]chan wmsg{}
	var nextCall atomic.Uint64
	var rt *Runtime
	// A worker that will not stop, for the tests of the host's last resort.
	stuck := os.Getenv("AIRLOCK_WORKER_TEST_STUCK") == "1"
	for {
		var m wmsg
		if err := dec.Decode(&m); err != nil {
			return
		}
		switch m.Kind {
		case "run":
			if rt == nil {
				maxDuration := m.Spec.MaxDuration
				if stuck {
					maxDuration = -1
				}
				rt = NewRuntime(RuntimeConfig{MaxDuration: maxDuration, MaxValueBytes: m.Spec.MaxValueBytes, MaxAsyncCalls: m.Spec.MaxAsyncCalls})
			}
			id := m.Run
			call := func(ctx context.Context, fn int, list []byte, async bool) ([]byte, error) {
				if !async {
					out, err := slots.call(ctx, id, fn, list, poke)
					if err != errNoSlot {
						return out, err
					}
				}
				c := nextCall.Add(1)
				ch := make(chan wmsg, 1)
				mu.Lock()
				pending[c] = ch
				mu.Unlock()
				defer func() { mu.Lock(); delete(pending, c); mu.Unlock() }()
				send(&wmsg{Kind: "call", Run: id, Call: c, Fn: fn, Data: list})
				select {
				case r := <-ch:
					if r.Err != "" {
						return nil, errors.New(r.Err)
					}
					return r.Data, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			ex, err := startWorkerRun(rt, m.Spec, call, func(v any) {
				if enc, err := codec.AppendBinary(nil, v, nil); err == nil {
					send(&wmsg{Kind: "report", Run: id, Data: enc})
				}
			}, func(l Log) {
				if enc, err := codec.AppendBinary(nil, l.Args, nil); err == nil {
					send(&wmsg{Kind: "log", Run: id, Log: &wlog{Level: l.Level, Args: enc, Time: l.Time}})
				}
			})
			if err != nil {
				send(&wmsg{Kind: "done", Run: id, Result: &wresult{Status: StatusError, Error: &ScriptError{Name: "Error", Message: err.Error()}}})
				continue
			}
			mu.Lock()
			runs[id] = ex
			mu.Unlock()
			go func() {
				res := ex.Wait()
				mu.Lock()
				delete(runs, id)
				mu.Unlock()
				wr := toWire(res)
				wr.Thrown = res.Error != nil && res.Error == ex.job.(*run).paid.Load()
				send(&wmsg{Kind: "done", Run: id, Result: wr})
			}()
		case "terminate":
			mu.Lock()
			ex := runs[m.Run]
			mu.Unlock()
			if ex != nil && !stuck {
				ex.job.(*run).halt(StatusTerminated, m.Text)
			}
		case "slot":
			slots.deliver(m)
		case "reply":
			mu.Lock()
			ch := pending[m.Call]
			mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// startWorkerRun starts a run of a spec in the worker, with proxies for the
// host's functions.
func startWorkerRun(rt *Runtime, s *wspec, call func(ctx context.Context, fn int, list []byte, async bool) ([]byte, error), report func(any), logf func(Log)) (*Execution, error) {
	value := func(v wvalue) (any, error) {
		if v.Fn < 0 {
			return codec.DecodeBinaryBytes(v.Value, rt.cfg.MaxValueBytes)
		}
		fn, async := v.Fn, v.Async
		if v.JSON {
			f := JSONFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				out, err := call(ctx, fn, args, async)
				return json.RawMessage(out), err
			})
			if v.Async {
				return Async(f), nil
			}
			return f, nil
		}
		f := func(ctx context.Context, args ...any) (any, error) {
			list, err := codec.AppendBinary(nil, args, nil)
			if err != nil {
				return nil, err
			}
			out, err := call(ctx, fn, list, async)
			if err != nil {
				return nil, err
			}
			return codec.DecodeBinaryBytes(out, rt.cfg.MaxValueBytes)
		}
		if v.Async {
			return Async(f), nil
		}
		return f, nil
	}
	opts := Options{Filename: s.Filename, Language: s.Language, MemoryLimitBytes: s.Memory, Modules: s.Modules,
		Execute: Execute{Fn: s.Fn}}
	if s.Args != nil {
		v, err := codec.DecodeBinaryBytes(s.Args, rt.cfg.MaxValueBytes)
		if err != nil {
			return nil, err
		}
		opts.Execute.Args, _ = v.([]any)
	}
	if len(s.Globals) > 0 {
		opts.Globals = map[string]any{}
		for _, g := range s.Globals {
			v, err := value(g)
			if err != nil {
				return nil, err
			}
			opts.Globals[g.Name] = v
		}
	}
	if len(s.Imports) > 0 {
		opts.Imports = map[string]Module{}
		for spec, exports := range s.Imports {
			m := Module{}
			for _, e := range exports {
				v, err := value(e)
				if err != nil {
					return nil, err
				}
				m[e.Name] = v
			}
			opts.Imports[spec] = m
		}
	}
	if s.Report {
		opts.Report = report
	}
	if s.Log {
		opts.Log = logf
	}
	// The host validated the options (Runtime.Run).
	return rt.runHere(context.Background(), s.Source, opts, time.Now())
}

// toWire is a result for the host.
func toWire(res *Result) *wresult {
	wr := &wresult{Status: res.Status, Error: res.Error, Memory: res.MemoryUsedBytes, Duration: res.Duration}
	if res.Status == StatusSuccess {
		enc, err := codec.AppendBinary(nil, res.Result, nil)
		if err != nil {
			wr.Status, wr.Error = StatusError, &ScriptError{Name: "DataCloneError", Message: err.Error()}
		} else {
			wr.Result = enc
		}
	}
	for _, l := range res.Logs {
		enc, err := codec.AppendBinary(nil, l.Args, nil)
		if err != nil {
			continue
		}
		wr.Logs = append(wr.Logs, wlog{Level: l.Level, Args: enc, Time: l.Time})
	}
	return wr
}

package airlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/hostcall"
	"github.com/airlockrun/airlock/internal/worker"
)

// Worker-process mode (RuntimeConfig.Workers): the Runtime's side of
// internal/worker. The host side of a run in a worker is a remoteRun (its
// calls, reports, logs, budget and stop, and its Result); the worker's
// side starts the run with runHere (startInWorker). A worker is this same
// binary, re-executed: the package's init serves it.

func init() { worker.ServeIfChild(startInWorker) }

// remoteRun is the host side of a run in a worker process
// (worker.Handler).
type remoteRun struct {
	stopping atomic.Pointer[string] // the host's reason, once it stopped the run
	failed   atomic.Pointer[string] // set when a host function panicked: the run ends in error
	rt       *Runtime
	run      *worker.Run
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

// runRemote starts a run of valid options on a worker process.
func (rt *Runtime) runRemote(ctx context.Context, src string, opts Options, start time.Time) (*Execution, error) {
	r := &remoteRun{rt: rt, opts: opts, start: start, exec: &Execution{done: make(chan struct{}), start: start}}
	h := hostcall.NewHost(0)
	h.Funcs, h.Ctx, h.Limit, h.Spent = &r.funcs, ctx, rt.cfg.MaxValueBytes, errRunBudgetSpent
	h.Results = func(reflect.Value) (int, error) {
		return 0, errors.New("in worker-process mode a host function cannot return a function")
	}
	h.OnPanic = func(err error) { r.Fail(err.Error()) }
	h.Budget.Init(rt.cfg.MaxValueBytes)
	r.host = h
	value := func(name string, v any) (worker.Value, error) {
		// A glued value (fetch, timers; validate checked where it is) is
		// its host function, which the worker's run makes into the global
		// by the same glue.
		v, glue, _ := unglue(v)
		rv := reflect.ValueOf(v)
		if hostcall.IsBridged(rv) {
			id, err := r.funcs.Register(rv)
			if err != nil {
				return worker.Value{}, err
			}
			h := r.funcs.At(id)
			return worker.Value{Name: name, Fn: id, Async: h.Async, JSON: h.JSON(), Glue: glue}, nil
		}
		enc, err := codec.AppendBinary(nil, v, func(reflect.Value) (int, error) {
			return 0, errors.New("in worker-process mode a function must be a global or a module export, not inside a value")
		})
		if err != nil {
			return worker.Value{}, fmt.Errorf("airlock: %s: %w", name, err)
		}
		return worker.Value{Name: name, Value: enc, Fn: -1}, nil
	}
	_, reportTaken := opts.Globals["report"]
	spec := &worker.Spec{Source: src, Filename: opts.Filename, Language: int(opts.Language), Memory: opts.MemoryLimitBytes,
		Modules: opts.Modules, Fn: opts.Execute.Fn, Report: !reportTaken, Log: opts.Log != nil, Imports: map[string][]worker.Value{},
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
			spec.Imports[s] = []worker.Value{}
		}
	}
	r.exec.job = r
	wr, err := rt.workers.Add(r)
	if err != nil {
		return nil, err
	}
	r.run = wr
	if err := wr.Start(spec); err != nil {
		return nil, err
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
			r.run.Kill()
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
	r.run.Stop(msg)
}

func (r *remoteRun) killAfterGrace() {
	t := time.NewTimer(r.rt.cfg.WorkerGrace)
	defer t.Stop()
	select {
	case <-r.exec.done:
	case <-t.C:
		r.run.Kill()
	}
}

// Answer runs a host function for the worker.
func (r *remoteRun) Answer(fn int, list []byte) ([]byte, string) { return r.host.Answer(fn, list) }

// Fail ends the run with an error the sandbox cannot catch, as a host
// function's panic or runtime.Goexit does in process.
func (r *remoteRun) Fail(msg string) {
	r.failed.CompareAndSwap(nil, &msg)
	r.stop(msg)
	go r.killAfterGrace()
}

// Report is a value the run reported.
func (r *remoteRun) Report(data []byte) {
	if !r.host.Budget.SpendEntry(data) {
		r.Fail(reportsSpentMessage)
		return
	}
	if v, err := codec.DecodeBinaryBytes(data, r.rt.cfg.MaxValueBytes); err == nil {
		r.exec.mu.Lock()
		r.exec.reports = append(r.exec.reports, v)
		r.exec.mu.Unlock()
		if r.opts.Report != nil {
			r.opts.Report(v)
		}
	}
}

// Log is a console call streamed to Options.Log.
func (r *remoteRun) Log(l *worker.Log) {
	if r.opts.Log == nil {
		return
	}
	if !r.host.Budget.SpendEntry(l.Args) {
		r.Fail(logsSpentMessage)
		return
	}
	r.streamed.Add(1)
	r.opts.Log(r.logOf(l))
}

// logOf decodes a console call.
func (r *remoteRun) logOf(l *worker.Log) Log {
	v, _ := codec.DecodeBinaryBytes(l.Args, r.rt.cfg.MaxValueBytes)
	args, _ := v.([]any)
	if args == nil {
		args = []any{}
	}
	return Log{Level: LogLevel(l.Level), Args: args, Time: l.Time}
}

// Lost settles a run whose worker exited.
func (r *remoteRun) Lost() {
	if reason := r.stopping.Load(); reason != nil {
		r.Done(&worker.Result{Status: string(StatusTerminated), Error: &worker.Error{Name: "Error", Message: *reason + " (the worker process did not stop in time and was killed)"}})
		return
	}
	r.Done(&worker.Result{Status: string(StatusError), Error: &worker.Error{Name: "InternalError", Message: "the worker process running the sandbox exited"}})
}

// Done settles the run with the worker's result.
func (r *remoteRun) Done(wr *worker.Result) {
	r.once.Do(func() {
		r.run.Forget()
		var werr *ScriptError
		if wr.Error != nil {
			e := ScriptError(*wr.Error)
			werr = &e
		}
		res := &Result{Status: Status(wr.Status), Error: werr, MemoryUsedBytes: wr.Memory, Logs: []Log{}}
		if wr.Status == string(StatusSuccess) {
			var v any
			err := codec.ErrTooLarge
			if r.host.Budget.Spend(codec.BinaryCost(wr.Result)) {
				v, err = codec.DecodeBinaryBytes(wr.Result, r.rt.cfg.MaxValueBytes)
			}
			if err != nil {
				res.Status, res.Error = StatusError, &ScriptError{Name: "DataCloneError", Message: err.Error()}
			} else {
				res.Result = v
			}
		}
		// A stop the host decided wins over what the worker reports, as in
		// process: the worker may have ended the run otherwise before it
		// heard of the stop (a call the host refused, say), terminated too
		// but without the host's reason (TestWorkers_HostStopWins saw
		// "terminated" alone once).
		if msg := r.failed.Load(); msg != nil {
			res.Status, res.Error, res.Result = StatusError, &ScriptError{Name: "Error", Message: *msg}, nil
		} else if reason := r.stopping.Load(); reason != nil && (res.Status != StatusTerminated ||
			res.Error == nil || !strings.HasPrefix(res.Error.Message, *reason)) {
			res.Status, res.Error, res.Result = StatusTerminated, &ScriptError{Name: "TerminatedError", Message: *reason}, nil
		}
		streamed := int(r.streamed.Load())
		for i := range wr.Logs {
			if i >= streamed && !r.host.Budget.SpendEntry(wr.Logs[i].Args) {
				break
			}
			res.Logs = append(res.Logs, r.logOf(&wr.Logs[i]))
		}
		// The error's texts are bounded again, and those from the sandbox
		// paid for again, after the logs, as in process: the host does not
		// rely on the worker.
		if res.Error == werr && wr.Thrown {
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

// workerRuntime is the worker process's Runtime, made for its first run.
var workerRuntime struct {
	once sync.Once
	rt   *Runtime
}

// startInWorker starts a run of a spec in the worker process, with proxies
// for the host's functions (worker.StartFunc).
func startInWorker(s *worker.Spec, call worker.CallFunc, report func([]byte), logf func(worker.Log)) (worker.Child, error) {
	workerRuntime.once.Do(func() {
		workerRuntime.rt = NewRuntime(RuntimeConfig{MaxDuration: s.MaxDuration, MaxValueBytes: s.MaxValueBytes, MaxAsyncCalls: s.MaxAsyncCalls})
	})
	rt := workerRuntime.rt
	value := func(v worker.Value) (any, error) {
		if v.Fn < 0 {
			return codec.DecodeBinaryBytes(v.Value, rt.cfg.MaxValueBytes)
		}
		if v.Glue != "" {
			f, err := hostFunc(v, call, rt)
			return &remoteGlued{fn: f, src: v.Glue, name: v.Name}, err
		}
		return hostFunc(v, call, rt)
	}
	opts := Options{Filename: s.Filename, Language: Language(s.Language), MemoryLimitBytes: s.Memory, Modules: s.Modules,
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
		opts.Report = func(v any) {
			if enc, err := codec.AppendBinary(nil, v, nil); err == nil {
				report(enc)
			}
		}
	}
	if s.Log {
		opts.Log = func(l Log) {
			if enc, err := codec.AppendBinary(nil, l.Args, nil); err == nil {
				logf(worker.Log{Level: string(l.Level), Args: enc, Time: l.Time})
			}
		}
	}
	// The host validated the options (Runtime.Run).
	ex, err := rt.runHere(context.Background(), s.Source, opts, time.Now())
	if err != nil {
		return nil, err
	}
	return childRun{ex}, nil
}

// childRun is a run in the worker process (worker.Child).
type childRun struct{ ex *Execution }

func (c childRun) Terminate(text string) { c.ex.job.(*run).halt(StatusTerminated, text) }

// Wait gives the run's result, encoded for the host.
func (c childRun) Wait() *worker.Result {
	res := c.ex.Wait()
	wr := &worker.Result{Status: string(res.Status), Memory: res.MemoryUsedBytes, Duration: res.Duration}
	if res.Error != nil {
		e := worker.Error(*res.Error)
		wr.Error = &e
		wr.Thrown = res.Error == c.ex.job.(*run).paid.Load()
	}
	if res.Status == StatusSuccess {
		enc, err := codec.AppendBinary(nil, res.Result, nil)
		if err != nil {
			wr.Status, wr.Error = string(StatusError), &worker.Error{Name: "DataCloneError", Message: err.Error()}
		} else {
			wr.Result = enc
		}
	}
	for _, l := range res.Logs {
		enc, err := codec.AppendBinary(nil, l.Args, nil)
		if err != nil {
			continue
		}
		wr.Logs = append(wr.Logs, worker.Log{Level: string(l.Level), Args: enc, Time: l.Time})
	}
	return wr
}

// hostFunc is, in a worker, the function that calls the host's function
// v over the pipe.
func hostFunc(v worker.Value, call worker.CallFunc, rt *Runtime) (any, error) {
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

// remoteGlued is, in a worker, a glued value of the host's (fetch,
// timers): its host function, called over the pipe, and its glue.
type remoteGlued struct {
	fn   any
	src  string
	name string
}

func (g *remoteGlued) bridged() any    { return g.fn }
func (g *remoteGlued) glue() string    { return g.src }
func (g *remoteGlued) names() []string { return []string{g.name} }

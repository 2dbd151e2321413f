package worker

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// --- the worker side ---

// CallFunc calls host function fn with its arguments (list: encoded, or a
// JSON function's JSON text) and gives its answer; async calls take the
// pipe, synchronous ones a shared-memory slot where one is free.
type CallFunc func(ctx context.Context, fn int, list []byte, async bool) ([]byte, error)

// A Child is a run in the worker process.
type Child interface {
	// Wait waits for the run to settle and gives its result for the host.
	Wait() *Result
	// Terminate stops the run with text as its error's message.
	Terminate(text string)
}

// StartFunc starts the run of a spec in the worker process: its host
// functions are proxies that call, its reports and streamed console calls
// go to report and log, encoded.
type StartFunc func(s *Spec, call CallFunc, report func(data []byte), log func(Log)) (Child, error)

// ServeIfChild serves as a worker, and exits, when this process was
// started as one by a Pool: the package that bridges a Runtime to the pool
// calls it from its init, so that any binary that imports it can be its
// own worker. Otherwise it returns at once.
func ServeIfChild(start StartFunc) {
	if os.Getenv(envWorker) != "1" {
		return
	}
	os.Unsetenv(envWorker)
	var slots *childShm
	if os.Getenv(envShm) == "3" {
		slots = openChildShm(os.NewFile(3, "airlock-calls"))
	}
	os.Unsetenv(envShm)
	serve(os.Stdin, os.Stdout, slots, start)
	os.Exit(0)
}

// serve runs the runs its host sends, until its input ends.
func serve(in io.Reader, out io.Writer, slots *childShm, start StartFunc) {
	dec := gob.NewDecoder(bufio.NewReader(in))
	enc := gob.NewEncoder(out)
	var wmu sync.Mutex
	send := func(m *msg) {
		wmu.Lock()
		defer wmu.Unlock()
		enc.Encode(m)
	}
	poke := func() { send(&msg{Kind: "poke"}) }
	var mu sync.Mutex
	runs := map[uint64]Child{}
	pending := map[uint64]chan msg{}
	var nextCall atomic.Uint64
	// A worker that will not stop, for the tests of the host's last resort.
	stuck := os.Getenv("AIRLOCK_WORKER_TEST_STUCK") == "1"
	for {
		var m msg
		if err := dec.Decode(&m); err != nil {
			return
		}
		switch m.Kind {
		case "run":
			if m.Spec == nil {
				continue
			}
			if stuck {
				m.Spec.MaxDuration = -1
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
				ch := make(chan msg, 1)
				mu.Lock()
				pending[c] = ch
				mu.Unlock()
				defer func() { mu.Lock(); delete(pending, c); mu.Unlock() }()
				send(&msg{Kind: "call", Run: id, Call: c, Fn: fn, Data: list})
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
			ex, err := start(m.Spec, call, func(data []byte) {
				send(&msg{Kind: "report", Run: id, Data: data})
			}, func(l Log) {
				send(&msg{Kind: "log", Run: id, Log: &l})
			})
			if err != nil {
				send(&msg{Kind: "done", Run: id, Result: &Result{Status: "error", Error: &Error{Name: "Error", Message: err.Error()}}})
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
				send(&msg{Kind: "done", Run: id, Result: res})
			}()
		case "terminate":
			mu.Lock()
			ex := runs[m.Run]
			mu.Unlock()
			if ex != nil && !stuck {
				ex.Terminate(m.Text)
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

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/airlockrun/airlock"
)

// A CallRecord is one tool call made during a run: by the model's code (a
// tool function, parallel()) or, in classic mode, by the model itself.
// Every result kind carries them, in the order the calls started (calls
// made at once, as Promise.all makes them, in the order the host started
// them):
// Execution.Calls, Step.Calls.
type CallRecord struct {
	// Tool is the tool's ID.
	Tool string `json:"tool"`
	// Input is the JSON text of the input.
	Input json.RawMessage `json:"input"`
	// Output is the JSON text of the result, when the call succeeded.
	Output json.RawMessage `json:"output,omitempty"`
	// Error is the message of the call's failure, as the code saw it.
	Error string `json:"error,omitempty"`
	// Denied is set when the policy refused the call (Error says why).
	Denied bool `json:"denied,omitempty"`
	// Start is when the call was made; Duration how long it took, the wait
	// for an approval included.
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"durationNs"`
	// Abandoned is set when the execution (or the step) ended while the
	// call was in flight, at its timeout or its context's end: whatever
	// the tool returns later is dropped.
	Abandoned bool `json:"abandoned,omitempty"`

	ended bool // the call returned
}

// An Action is what a Policy decides for a tool call.
type Action int

const (
	// Allow lets the call run.
	Allow Action = iota
	// Deny refuses it: the code sees an error with the decision's message.
	Deny
	// Ask waits for Policy.Approve, such as a person's answer.
	Ask
)

// A Decision is a policy's verdict on one call.
type Decision struct {
	Action Action
	// Message says why a call is denied; the code sees it in the error.
	Message string
}

// A CallRequest is a tool call about to run, as a policy sees it.
type CallRequest struct {
	// Tool is the tool's ID.
	Tool string
	// Input is the JSON text of the input.
	Input json.RawMessage
}

// A Policy governs the tool calls of a run. The zero Policy allows every
// call and bounds none but by the run's own time. Check and Approve are
// called from the goroutines of the calls, concurrently when calls run at
// once (parallel(), Promise.all, a classic message's calls).
type Policy struct {
	// Check runs before each call and decides it; nil allows every call.
	Check func(ctx context.Context, call CallRequest) Decision
	// Approve decides a call Check answered with Ask: it may block until
	// a person answers (it must honour ctx, which ends with the run). It
	// returns Allow or Deny; nil denies every call that asks.
	Approve func(ctx context.Context, call CallRequest) Decision
	// Timeout bounds each call's handler (the approval is not counted);
	// 0 means no bound but the run's. A call past it fails with an error
	// that says so; a handler that ignores its context goes on in the
	// background until it returns.
	Timeout time.Duration
	// Timeouts bound the calls of the tools they name, by ID, in place of
	// Timeout.
	Timeouts map[string]time.Duration
}

// ErrDenied is the error of a call the policy refused (errors.Is).
var ErrDenied = errors.New("tool call denied")

type deniedError struct {
	tool, msg string
}

func (e deniedError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("the call of tool %q was denied", e.tool)
	}
	return fmt.Sprintf("the call of tool %q was denied: %s", e.tool, e.msg)
}
func (e deniedError) Is(target error) bool { return target == ErrDenied }

// decide applies the policy to a call.
func (p *Policy) decide(ctx context.Context, req CallRequest) error {
	if p == nil || p.Check == nil {
		return nil
	}
	d := p.Check(ctx, req)
	if d.Action == Ask {
		if p.Approve == nil {
			return deniedError{req.Tool, "no one can approve it"}
		}
		d = p.Approve(ctx, req)
		if err := ctx.Err(); err != nil && d.Action != Allow {
			return deniedError{req.Tool, "the run ended while it waited for approval"}
		}
	}
	switch d.Action {
	case Allow:
		return nil
	case Deny:
		return deniedError{req.Tool, d.Message}
	default:
		return deniedError{req.Tool, "the approval gave no answer"}
	}
}

func (p *Policy) timeout(id string) time.Duration {
	if p == nil {
		return 0
	}
	if d, ok := p.Timeouts[id]; ok {
		return d
	}
	return p.Timeout
}

// A Budget bounds what a run may spend on the model. The zero Budget
// bounds nothing.
type Budget struct {
	// MaxTokens bounds the tokens of the run, the loop's completions and
	// the llm()/llmJson() sub-calls together; 0 means no bound. The run
	// stops with ErrBudget once they are spent past it.
	MaxTokens int64
	// MaxSubCalls bounds the llm()/llmJson() calls of the run; 0 means no
	// bound. A call past it throws in the code, and the run stops with
	// ErrBudget.
	MaxSubCalls int
}

// ErrBudget is the error of a run that spent its Budget (errors.Is).
var ErrBudget = errors.New("budget exhausted")

// tracker records the tool calls and the model usage of an execution or a
// run, applies the policy to each call, and keeps the budget. An
// execution's tracker passes what it records to its run's.
type tracker struct {
	policy *Policy
	budget Budget
	parent *tracker

	mu       sync.Mutex
	recMu    *sync.Mutex   // guards calls and the records, the tree's one lock
	calls    []*CallRecord // in the order the calls started
	usage    Usage         // since the last drain, the loop's and the sub-calls'
	total    Usage         // all of it, for the budget
	subCalls int           // sub-calls made, for the budget
	overrun  error         // set once the budget is spent
	// fetchers are the Fetchers the code has (watchFetches), and how many
	// of each one's records were already drained.
	fetchers map[*airlock.Fetcher]int
}

// watchFetches makes drainFetches report the requests of the Fetchers
// registered on it from now on.
func (t *tracker) watchFetches(it *Interpreter) {
	if it == nil {
		return
	}
	it.mu.RLock()
	defer it.mu.RUnlock()
	for _, fn := range it.functions {
		if f, ok := fn.(*airlock.Fetcher); ok {
			if t.fetchers == nil {
				t.fetchers = map[*airlock.Fetcher]int{}
			}
			t.fetchers[f] = len(f.Records())
		}
	}
}

// drainFetches returns the requests of the watched Fetchers since the last
// drain. (A Fetcher that runs at once shares with others mixes their
// records.)
func (t *tracker) drainFetches() []airlock.FetchRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []airlock.FetchRecord
	for f, seen := range t.fetchers {
		recs := f.Records()
		out = append(out, recs[min(seen, len(recs)):]...)
		t.fetchers[f] = len(recs)
	}
	return out
}

func newTracker(p *Policy, b Budget, parent *tracker) *tracker {
	t := &tracker{policy: p, budget: b, parent: parent, recMu: &sync.Mutex{}}
	if parent != nil {
		t.recMu = parent.recMu
	}
	return t
}

// callTool runs a tool call under the policy and records it.
func (t *tracker) callTool(ctx context.Context, e *entry, input json.RawMessage, call func(ctx context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	rec := CallRecord{Tool: e.tool.ID, Input: append(json.RawMessage(nil), input...), Start: time.Now()}
	if len(rec.Input) == 0 {
		rec.Input = json.RawMessage("{}")
	}
	slot := t.start(rec)
	ctx, span := startTool(ctx, e.tool.ID)
	p := t.effectivePolicy()
	out, err := func() (json.RawMessage, error) {
		if err := p.decide(ctx, CallRequest{Tool: e.tool.ID, Input: rec.Input}); err != nil {
			rec.Denied = true
			return nil, err
		}
		d := p.timeout(e.tool.ID)
		if d <= 0 {
			return call(ctx)
		}
		return callWithin(ctx, e.tool.ID, d, call)
	}()
	rec.Duration, rec.ended = time.Since(rec.Start), true
	if span != nil {
		endTool(span, rec.Denied, err)
	}
	if err != nil {
		rec.Error = err.Error()
	} else {
		rec.Output = out
	}
	t.finish(slot, rec)
	return out, err
}

// callWithin runs call with a timeout, returning at the timeout even if
// the handler does not.
func callWithin(ctx context.Context, id string, d time.Duration, call func(ctx context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type result struct {
		out json.RawMessage
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := call(ctx)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("tool %q timed out after %s", id, d)
		}
		return r.out, r.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("tool %q timed out after %s", id, d)
		}
		return nil, ctx.Err()
	}
}

func (t *tracker) effectivePolicy() *Policy {
	for ; t != nil; t = t.parent {
		if t.policy != nil {
			return t.policy
		}
	}
	return nil
}

// start records a call as it starts, in this tracker and its parents, and
// returns its records, for finish.
func (t *tracker) start(rec CallRecord) []*CallRecord {
	var slot []*CallRecord
	t.recMu.Lock()
	defer t.recMu.Unlock()
	for ; t != nil; t = t.parent {
		r := rec
		t.calls = append(t.calls, &r)
		slot = append(slot, &r)
	}
	return slot
}

// finish completes the records of a call.
func (t *tracker) finish(slot []*CallRecord, rec CallRecord) {
	t.recMu.Lock()
	defer t.recMu.Unlock()
	for _, r := range slot {
		*r = rec
	}
}

// root is the run's tracker, which keeps the budget.
func (t *tracker) root() *tracker {
	for t.parent != nil {
		t = t.parent
	}
	return t
}

// startSubCall counts an llm()/llmJson() call against the budget.
func (t *tracker) startSubCall() error {
	r := t.root()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.overrun != nil {
		return r.overrun
	}
	if r.budget.MaxSubCalls > 0 && r.subCalls >= r.budget.MaxSubCalls {
		r.overrun = fmt.Errorf("%w: the run may make %d llm()/llmJson() calls", ErrBudget, r.budget.MaxSubCalls)
		return r.overrun
	}
	r.subCalls++
	return nil
}

// addUsage counts the usage of a completion, in this tracker and its
// parents; a usage that counts no completions counts as one. subCall marks
// an llm()/llmJson() call.
func (t *tracker) addUsage(u Usage, subCall bool) {
	if u.Completions == 0 {
		u.Completions = 1
	}
	if subCall {
		u.SubCalls = u.Completions
		if u.SubCalls == 0 {
			u.SubCalls = 1
		}
	}
	for c := t; c != nil; c = c.parent {
		c.mu.Lock()
		c.usage.Add(u)
		c.total.Add(u)
		if c.parent == nil && c.overrun == nil && c.budget.MaxTokens > 0 && c.total.TotalTokens > c.budget.MaxTokens {
			c.overrun = fmt.Errorf("%w: %d tokens spent, the bound is %d", ErrBudget, c.total.TotalTokens, c.budget.MaxTokens)
		}
		c.mu.Unlock()
	}
}

// exceeded is the budget's error once the run has spent it.
func (t *tracker) exceeded() error {
	r := t.root()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.overrun
}

// drain returns the calls and the usage recorded since the last drain,
// at the end of an execution or a step: a call still in flight then is
// abandoned (its record has no duration, output or error).
func (t *tracker) drain() ([]CallRecord, Usage) {
	t.recMu.Lock()
	var calls []CallRecord
	for _, c := range t.calls {
		r := *c
		r.Abandoned = !r.ended
		calls = append(calls, r)
	}
	t.calls = nil
	t.recMu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.usage
	t.usage = Usage{}
	return calls, u
}

// complete makes an llm()/llmJson() sub-call, counted and bounded.
func (t *tracker) complete(ctx context.Context, c Completer, req CompletionRequest) (*Completion, error) {
	if err := t.startSubCall(); err != nil {
		return nil, err
	}
	resp, err := complete(ctx, c, req, true)
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, errors.New("the completer returned nothing")
	}
	t.addUsage(resp.Usage, true)
	return resp, nil
}

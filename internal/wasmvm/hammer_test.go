package wasmvm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestHammer: sandboxes from one snapshot on several goroutines at once,
// each evaluating, calling the host, being terminated from another
// goroutine, rewound and closed; run it under -race.
func TestHammer(t *testing.T) {
	sn := testSnapshot(t)
	const workers, rounds = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			s, err := sn.NewSandbox(ctx, nil)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close(ctx)
			for r := range rounds {
				started := make(chan struct{})
				if err := s.DefineFunc(ctx, "started", func(context.Context, []Value) (Value, error) {
					close(started)
					return Value{Kind: Number, Number: float64(w)}, nil
				}); err != nil {
					errs <- err
					return
				}
				want := fmt.Sprint(w*1000 + r)
				res, err := s.Eval(ctx, fmt.Sprintf("globalThis.v = started() * 1000 + %d; v", r), "h.js", Script)
				if err != nil || res.Value.Text != want {
					errs <- fmt.Errorf("worker %d round %d: %v %q", w, r, err, res.Value.Text)
					return
				}
				// a stop from another goroutine, while a native loop runs
				started = make(chan struct{})
				done := make(chan error, 1)
				go func() {
					_, err := s.Eval(ctx, "started(); Array.prototype.includes.call({length: 2 ** 53 - 1}, 1)", "loop.js", Script)
					done <- err
				}()
				<-started
				go s.Terminate()
				if err := <-done; !errors.Is(err, ErrTerminated) {
					errs <- fmt.Errorf("worker %d round %d: %v, want ErrTerminated", w, r, err)
					return
				}
				if !s.Reset() {
					errs <- fmt.Errorf("worker %d round %d: Reset failed", w, r)
					return
				}
				if res, err := s.Eval(ctx, "typeof v", "p.js", Script); err != nil || res.Value.Text != `"undefined"` {
					errs <- fmt.Errorf("worker %d round %d: after Reset: %v %s", w, r, err, res.Value.Text)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

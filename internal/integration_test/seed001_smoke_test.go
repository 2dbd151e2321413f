package integration_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// The smoke test of the executor's contract (Appendix C), verbatim.
func TestExecutor_AppendixCSmoke(t *testing.T) {
	ctx := context.Background()
	executor, err := airlock.NewExecutor(airlock.ExecutorOptions{
		MaxOperations:     1000,
		Timeout:           2000 * time.Millisecond,
		AuthorizedImports: []string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := executor.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := executor.SendTools(ctx, map[string]any{
		"readTool":  airlock.Async(func(path string) string { return "content:" + path }),
		"sleepTool": airlock.Async(sleepTool),
	}); err != nil {
		t.Fatal(err)
	}

	// Case A: final_answer capture
	{
		code := `
    const text = await readTool("a.txt");
    final_answer(text + ":ok");
  `
		res, err := executor.Run(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsFinalAnswer {
			t.Errorf("IsFinalAnswer = false")
		}
		if res.Output != "content:a.txt:ok" {
			t.Errorf("Output = %#v", res.Output)
		}
	}

	// Case B: max operations guard
	{
		code := `while (true) {}`
		gotCode := ""
		if _, err := executor.Run(ctx, code); err != nil {
			var e *airlock.ExecutorError
			if errors.As(err, &e) {
				gotCode = string(e.Code)
			}
		}
		if gotCode != "ERR_MAX_OPS_EXCEEDED" {
			t.Errorf("code = %q", gotCode)
		}
	}

	// Case C: timeout
	{
		code := `
    await sleepTool(999999);
  `
		got := ""
		if _, err := executor.Run(ctx, code); err != nil {
			var e *airlock.ExecutorError
			if errors.As(err, &e) && e.Code != "" {
				got = string(e.Code)
			} else {
				got = err.Error()
			}
		}
		if got != "ERR_EXEC_TIMEOUT" {
			t.Errorf("got %q", got)
		}
	}

	if err := executor.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}

// sleepTool waits ms milliseconds, or until the step ends.
func sleepTool(ctx context.Context, ms float64) error {
	select {
	case <-time.After(time.Duration(ms * float64(time.Millisecond))):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

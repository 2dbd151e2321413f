// Command bridge shows a Go program giving model-written code exactly two
// capabilities, a synchronous lookup and an asynchronous fetch, and
// collecting what the code reports, under a deadline and a memory cap.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/airlockrun/airlock"
)

// code is what a model might write: it calls the bridged functions
// concurrently and reports what it finds.
const code = `
import { fetchDoc } from 'docs';

const names: string[] = ["alpha", "beta", "gamma"];
const docs = await Promise.all(names.map((n) => fetchDoc(n)));
for (const d of docs) {
  if (d.text.includes("TODO")) report({ name: d.name, owner: owner(d.name) });
}
export default { checked: docs.length };
`

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	docs := map[string]string{"alpha": "done", "beta": "TODO: tests", "gamma": "TODO: docs"}
	owners := map[string]string{"beta": "ada", "gamma": "linus"}
	ex, err := airlock.Run(context.Background(), code, airlock.Options{
		MemoryLimitBytes: 32 << 20,
		Imports: map[string]airlock.Module{"docs": {
			// Async: a Promise in the sandbox, its own goroutine on the host.
			"fetchDoc": airlock.Async(func(ctx context.Context, name string) (map[string]string, error) {
				select {
				case <-time.After(10 * time.Millisecond): // a slow backend
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				text, ok := docs[name]
				if !ok {
					return nil, fmt.Errorf("no document %q", name)
				}
				return map[string]string{"name": name, "text": text}, nil
			}),
		}},
		Globals: map[string]any{"owner": func(name string) string { return owners[name] }},
		Report:  func(v any) {},
	})
	if err != nil {
		return err
	}
	deadline := time.AfterFunc(2*time.Second, func() { ex.Terminate("2s budget") })
	res := ex.Wait()
	deadline.Stop()
	if res.Status != airlock.StatusSuccess {
		return fmt.Errorf("%s: %s", res.Status, res.Error)
	}
	out, _ := json.Marshal(res.Result)
	fmt.Fprintf(w, "result: %s\n", out)
	for _, r := range res.Reports {
		b, _ := json.Marshal(r)
		fmt.Fprintf(w, "report: %s\n", strings.TrimSpace(string(b)))
	}
	return nil
}

package airlock_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/airlockrun/airlock"
)

func Example() {
	ex, err := airlock.Run(context.Background(), `
		import { lookup } from 'crm';
		const rows: { id: number; flagged?: boolean }[] = input;
		for (const r of rows) if (r.flagged) report(await lookup(r.id));
		export default rows.length;
	`, airlock.Options{
		Globals: map[string]any{"input": []map[string]any{{"id": 1, "flagged": true}, {"id": 2}}},
		Imports: map[string]airlock.Module{"crm": {
			"lookup": airlock.Async(func(id int) string { return fmt.Sprintf("customer-%d", id) }),
		}},
		Report:           func(v any) {},
		MemoryLimitBytes: 32 << 20,
	})
	if err != nil {
		panic(err)
	}
	res := ex.Wait()
	fmt.Println(res.Status, res.Result, res.Reports)
	// Output: success 2 [customer-1]
}

func ExampleExecution_Terminate() {
	ex, _ := airlock.Run(context.Background(), `for (;;) {}`, airlock.Options{})
	budget := time.AfterFunc(50*time.Millisecond, func() { ex.Terminate("50ms budget") })
	defer budget.Stop()
	res := ex.Wait()
	fmt.Println(res.Status, res.Error.Message)
	// Output: terminated terminated: 50ms budget
}

func ExampleRuntime_Run() {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{MemoryLimitBytes: 16 << 20, MaxDuration: 5 * time.Second})
	defer rt.Close()
	ex, _ := rt.Run(context.Background(), `export function area(w: number, h: number) { return w * h }`,
		airlock.Options{Execute: airlock.Execute{Fn: "area", Args: []any{3, 4}}})
	fmt.Println(ex.Wait().Result)
	// Output: 12
}

func ExampleScriptError() {
	ex, _ := airlock.Run(context.Background(), "const a = 1;\nnull.x;", airlock.Options{Filename: "agent.ts"})
	e := ex.Wait().Error
	fmt.Printf("%s at %s:%d\n", e.Error(), e.Filename, e.Line)
	// Output: TypeError: Cannot read properties of null (reading 'x') at agent.ts:2
}

// The README's executor example: a step that calls a tool and answers.
func ExampleExecutor() {
	ctx := context.Background()
	ex, _ := airlock.NewExecutor(airlock.ExecutorOptions{MaxOperations: 1000, Timeout: 2 * time.Second})
	_ = ex.Init(ctx)
	defer ex.Cleanup(ctx)
	_ = ex.SendTools(ctx, map[string]any{
		"readTool": airlock.Async(func(path string) string { return "content:" + path }),
	})
	out, err := ex.Run(ctx, `const text = await readTool("a.txt"); final_answer(text + ":ok")`)
	fmt.Println(out.Output, out.IsFinalAnswer, err)

	_, err = ex.Run(ctx, `while (true) {}`)
	fmt.Println(errors.Is(err, airlock.ErrMaxOpsExceeded), err)

	out, _ = ex.Run(ctx, `return text.length`) // state persists
	fmt.Println(out.Output)
	// Output:
	// content:a.txt:ok true <nil>
	// true ERR_MAX_OPS_EXCEEDED: Max operations exceeded (1000)
	// 13
}

// fetch under a policy: the code calls an allowed API, and the host adds
// the token the code never sees. (The API is a local server here, named
// by Resolve and trusted by RootCAs, so that the example runs offline.)
func ExampleFetch() {
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"user":"octocat","authorized":%t}`, r.Header.Get("Authorization") == "Bearer ghp_secret")
	}))
	defer api.Close()
	roots := x509.NewCertPool()
	roots.AddCert(api.Certificate())

	fetch := airlock.Fetch(airlock.FetchPolicy{
		Allow:   []string{"api.example.com"},
		Secrets: map[string]map[string]string{"api.example.com": {"Authorization": "Bearer ghp_secret"}},
		Resolve: map[string]string{"api.example.com:443": strings.TrimPrefix(api.URL, "https://")},
		RootCAs: roots,
	})
	ex, _ := airlock.Run(context.Background(), `
		const res = await fetch("https://api.example.com/user");
		const me = await res.json();
		let refused = "";
		try { await fetch("https://elsewhere.example.net/"); } catch (e) { refused = e.name; }
		export default [res.status, me.user, me.authorized, refused].join(" ");
	`, airlock.Options{Globals: map[string]any{"fetch": fetch}})
	fmt.Println(ex.Wait().Result)
	for _, r := range fetch.Records() {
		fmt.Println(r.Method, r.Host, r.Path, r.Status, r.Allowed)
	}
	// Output:
	// 200 octocat true TypeError
	// GET api.example.com /user 200 true
	// GET elsewhere.example.net / 0 false
}

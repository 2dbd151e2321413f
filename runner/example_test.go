package runner_test

import (
	"context"
	"fmt"
	"os"

	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

// The README's example, on the local runner (a remote one is
// runner.NewHTTPRunner("http://sandbox:9000")).
func Example() {
	ctx := context.Background()
	local, err := runner.NewLocal(service.Config{Workspace: os.TempDir() + "/airlock-example", Insecure: insecure()})
	if err != nil {
		panic(err)
	}
	defer local.Close()
	var r runner.CodeRunner = local
	res, err := r.Run(ctx, runner.CodeRequest{Runtime: "python", Code: "set_result(call_tool('add', {'a': 2, 'b': 3}))"},
		func(ctx context.Context, call runner.ToolCall) (string, error) { return `{"sum": 5}`, nil })
	fmt.Println(res.Output, res.ExitCode, err)
	// Output: {"sum": 5} 0 <nil>
}

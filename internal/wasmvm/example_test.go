package wasmvm_test

import (
	"context"
	"fmt"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

func Example() {
	ctx := context.Background()
	e, err := wasmvm.NewEngine(ctx, nil)
	if err != nil {
		panic(err)
	}
	defer e.Close(ctx)
	sn, err := e.NewSnapshot(ctx, nil)
	if err != nil {
		panic(err)
	}
	defer sn.Close()
	s, err := sn.NewSandbox(ctx, &wasmvm.SandboxOptions{MemoryLimit: 64 << 20})
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)
	s.DefineFunc(ctx, "add1", func(_ context.Context, a []wasmvm.Value) (wasmvm.Value, error) {
		return wasmvm.Value{Kind: wasmvm.Number, Number: a[0].Number + 1}, nil
	})
	r, err := s.Eval(ctx, "add1(41)", "main.js", wasmvm.Script)
	fmt.Println(r.Value.Text, err)
	// Output: 42 <nil>
}

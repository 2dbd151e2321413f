package engine

import (
	"context"
	"testing"
)

// BenchmarkKernelCall: one call of a kernel method with string arguments
// (defineValue, as a session's variables are defined), the crossing every
// run pays a few times (start, settle).
func BenchmarkKernelCall(b *testing.B) {
	v, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	ctx := context.Background()
	name, wire := str("__bench_value"), str("J1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.sb.KernelCall(ctx, "defineValue", name, wire); err != nil {
			b.Fatal(err)
		}
	}
}

package engine

import (
	"context"
	"testing"
)

// BenchmarkKernelCall: one call of a kernel method with a string argument,
// the crossing every run pays a few times (start, settle).
func BenchmarkKernelCall(b *testing.B) {
	v, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	ctx := context.Background()
	arg := str("__bench_spent")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.sb.KernelCall(ctx, "lendOpsSpent", arg); err != nil {
			b.Fatal(err)
		}
	}
}

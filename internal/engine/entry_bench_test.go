package engine

import (
	"context"
	"testing"
)

// BenchmarkEntryCall: one call of a kernel entry with a string and a value
// (entryDefineValue, as a session's variables are defined), the crossing
// every run pays a few times (entryRun, entrySettle).
func BenchmarkEntryCall(b *testing.B) {
	v, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	ctx := context.Background()
	name, value := str("__bench_value"), bytesValue(enc(1.0))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.sb.Call(ctx, entryDefineValue, name, value); err != nil {
			b.Fatal(err)
		}
	}
}

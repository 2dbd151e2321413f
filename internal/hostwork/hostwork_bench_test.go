package hostwork

import "testing"

// BenchmarkDo measures what running a work through Do costs over calling
// it: a goroutine, a channel and the room's lock.
func BenchmarkDo(b *testing.B) {
	x := 0
	work := func() { x++ }
	b.Run("direct", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			work()
		}
	})
	b.Run("do", func(b *testing.B) {
		stop := make(chan struct{})
		for i := 0; i < b.N; i++ {
			Do(stop, "bench", 1000, work)
		}
	})
}

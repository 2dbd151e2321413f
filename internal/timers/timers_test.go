package timers

import (
	"context"
	"testing"
)

// Sleep reports true after its time and false, at once, when its context
// ends first (a run's end); a negative delay is none.
func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), -5) || !Sleep(context.Background(), 0) {
		t.Fatal("a delay of none did not end")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, MaxDelay*10) {
		t.Fatal("a cancelled sleep reported its time")
	}
}

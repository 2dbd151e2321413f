package source

import (
	"strings"
	"testing"
	"time"
)

// bindsName read the rest of the text after each name in a list or
// pattern to find the closing bracket, and then what follows it: a
// quadratic scan, on the VM's goroutine, out of reach of a stop. A few
// hundred KB of ",report" took seconds (256 KiB: 6.5 s), 1 MiB minutes.
// It is linear now; the bound below is one only the quadratic scan
// reaches (~100 s for this input on the machine measured).
func TestBindsNameLinear(t *testing.T) {
	inputs := map[string]bool{
		"x = [" + strings.Repeat(",report", (1<<20)/7):                                                 false,
		"x = [" + strings.Repeat(",report", (1<<20)/14) + "]" + strings.Repeat(" ", (1<<20)/2) + "= y": true,
		"[" + strings.Repeat(",report", (1<<20)/14) + strings.Repeat("]", (1<<20)/2) + "x":             false,
	}
	done := make(chan bool)
	for in, want := range inputs {
		go func() { done <- bindsName(in, "report") == want }()
	}
	timeout := time.After(20 * time.Second)
	for range inputs {
		select {
		case ok := <-done:
			if !ok {
				t.Error("bindsName answered wrong")
			}
		case <-timeout:
			t.Fatal("bindsName takes time quadratic in its input")
		}
	}
}

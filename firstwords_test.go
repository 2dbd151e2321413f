package airlock

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// firstWords places each name at its first occurrence as a word of its
// own, columns in characters.
func TestFirstWords(t *testing.T) {
	src := "const é = 1; let __smol_ab = 2\n  x__smol_a; __smol_a.b = «__smol_b»\n__smol_c"
	got := firstWords(src, map[string]bool{"__smol_a": true, "__smol_b": true, "__smol_c": true, "__smol_ab": true, "__smol_none": true})
	want := map[string][2]int{"__smol_ab": {1, 18}, "__smol_a": {2, 14}, "__smol_c": {3, 1}}
	// « is not an identifier character, but its bytes are: «__smol_b» is
	// one word, as the byte scan of the old firstWord read it.
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A place searched for each reserved name on its own (firstWord) made the
// validation of a step that declares tens of thousands of them quadratic
// on the host: 40,000 declarations (670 KB) took 81 s, most of it in Go,
// after the engine's compile and out of reach of the step's time. One
// pass places them all; the bound below is one only the quadratic search
// reaches.
func TestFirstWordsLinear(t *testing.T) {
	var b strings.Builder
	names := map[string]bool{}
	for i := 0; i < 200000; i++ {
		n := fmt.Sprintf("__smol_%d", i)
		fmt.Fprintf(&b, "var %s;", n)
		names[n] = true
	}
	src := b.String()
	done := make(chan map[string][2]int, 1)
	go func() { done <- firstWords(src, names) }()
	select {
	case got := <-done:
		if len(got) != len(names) || got["__smol_199999"] != [2]int{1, strings.Index(src, "__smol_199999;") + 1} {
			t.Fatalf("%d placed; __smol_199999 at %v", len(got), got["__smol_199999"])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("firstWords takes time quadratic in its input")
	}
}

package main

import (
	"strings"
	"testing"
)

func Test_main(t *testing.T) {
	var b strings.Builder
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	want := `log: reports: 3
log: schema: invalid input for tool "units.celsius-to-fahrenheit"
output: Rome is warmest: 62.6°F, clear.

Want the others too?
done: true
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

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
	want := `result: {"checked":3}
report: {"name":"beta","owner":"ada"}
report: {"name":"gamma","owner":"linus"}
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

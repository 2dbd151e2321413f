package main

import (
	"strings"
	"testing"
)

func Test_main(t *testing.T) {
	var b strings.Builder
	if err := run(strings.NewReader("y\nn\n"), &b); err != nil {
		t.Fatal(err)
	}
	want := `approve bank.transfer {"from":"alice","to":"bob","amount":40}? [y/N] 
approve bank.transfer {"from":"alice","to":"bob","amount":1000}? [y/N] 
result: moved 40.00 from alice to bob
result: refused: the call of tool "bank.transfer" was denied: the approver said no
result: refused: the call of tool "bank.close-account" was denied: only a person at the branch may do that

calls:
  bank.get-balance {"account":"alice"} → 120
  bank.get-balance {"account":"bob"} → 40
  bank.transfer {"from":"alice","to":"bob","amount":40} → "moved 40.00 from alice to bob"
  bank.transfer {"from":"alice","to":"bob","amount":1000} ✗ the call of tool "bank.transfer" was denied: the approver said no (denied)
  bank.close-account {"account":"bob"} ✗ the call of tool "bank.close-account" was denied: only a person at the branch may do that (denied)

a record's fields: tool, input, output, start, durationNs
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

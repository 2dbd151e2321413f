package engine

import (
	"reflect"
	"testing"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// TestCallFindsItsReplyZero: Job.CallBytes writes to a Reply the VM keeps, and
// finds it zero at every call, whatever the call before it answered (a
// primitive, a value, an error, a string through the kernel's encoding);
// the program gets each call's own answer.
func TestCallFindsItsReplyZero(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	j := mainJob(v, "")
	j.Input, j.GlobalNames, j.Console = &Input{Globals: [][]byte{nil}, Report: 0}, []string{"f"}, -1
	j.Load = func(string) (string, error) {
		return `import {f} from "` + v.GlobalsModule() + `";
		const out = [];
		for (let i = 0; i < 2; i++) {
			for (const k of ["num", "raw", "err", "str", "undef"]) {
				try { out.push(f(k)) } catch (e) { out.push("E " + e.message) }
				try { out.push(f(k, {})) } catch (e) { out.push("E " + e.message) }
			}
		}
		export default out.join()`, nil
	}
	dirty := 0
	j.CallBytes = func(id int, args []Arg, encoded []byte, rep *Reply) {
		if !reflect.DeepEqual(*rep, Reply{}) {
			dirty++
		}
		k := "str" // a call the kernel encoded: an object among its arguments
		if encoded == nil && len(args) > 0 {
			k = args[0].Text
		}
		switch k {
		case "num":
			*rep = Reply{Kind: ReplyArg, Arg: wasmvm.Value{Kind: wasmvm.Number, Number: 7}}
		case "raw":
			rep.Kind, rep.Value = ReplyRaw, "raw"
		case "err":
			rep.Kind, rep.Value = ReplyError, "failed"
		case "str":
			rep.Kind, rep.Arg = ReplyArg, wasmvm.Value{Kind: wasmvm.String, Text: "s"}
		}
	}
	o := v.Run(j)
	if o.Kind != OK {
		t.Fatalf("%+v", o)
	}
	const want = "7,s,raw,s,E failed,s,s,s,,s,7,s,raw,s,E failed,s,s,s,,s"
	if o.Value != want || dirty != 0 {
		t.Fatalf("got %v, %d calls found a reply written; want %s", o.Value, dirty, want)
	}
}

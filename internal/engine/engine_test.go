package engine

import (
	"fmt"
	"strings"
	"testing"
)

func runSource(t *testing.T, src string) Outcome {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	return v.Run(mainJob(v, src))
}

// mainJob runs module /main.js of v, src after the import of the globals
// module, with no tool and no other module.
func mainJob(v *VM, src string) *Job {
	return &Job{
		Entry: "/main.js", Fn: "default", Input: &Input{Globals: [][]byte{}, Report: -1},
		Resolve: func(base, spec string) (string, error) {
			if strings.HasPrefix(spec, "airlock:") || spec == "/main.js" {
				return spec, nil
			}
			return "", fmt.Errorf("cannot find module %q", spec)
		},
		Load: func(name string) (string, error) {
			if name == "/main.js" {
				return `import "` + v.GlobalsModule() + `"; ` + src, nil
			}
			return "", fmt.Errorf("no module %q", name)
		},
		CallBytes: func(id int, args []Arg, encoded []byte, rep *Reply) {},
		Pending:   func() int { return 0 },
		Stop:      make(chan struct{}),
	}
}

func TestBootstrapRuns(t *testing.T) {
	o := runSource(t, `export default {a: [1, 2n, undefined, NaN, -0], m: new Map([[1, 2]]), d: new Date(0), u: new Uint8Array([1,2])}`)
	if o.Kind != OK || !o.Encoded {
		t.Fatalf("%+v", o)
	}
	t.Log(o.Value, o.PeakHeap)
	o = runSource(t, `export default 1+1`)
	if o.Kind != OK || o.Value != 2.0 {
		t.Fatalf("%+v", o)
	}
	o = runSource(t, `throw new TypeError("x")`)
	t.Logf("%+v", o)
	o = runSource(t, `export default typeof eval + typeof SharedArrayBuffer + structuredClone(new Set([1])).size`)
	t.Logf("%+v", o)
}

// TestPrestart: the background start and a VM asked for at the same time
// share one snapshot, and the VM runs.
func TestPrestart(t *testing.T) {
	Prestart()
	Prestart()
	vm, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	sn, err := snapshot()
	if err != nil || sn != shared.sn {
		t.Fatalf("snapshot after Prestart: %v, %v", sn, err)
	}
}

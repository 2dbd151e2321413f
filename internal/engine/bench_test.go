package engine

import (
	"testing"

	"modernc.org/quickjs"
)

func BenchmarkRawNewClose(b *testing.B) {
	for i := 0; i < b.N; i++ {
		vm, _ := quickjs.NewVM()
		vm.Eval("1+2", quickjs.EvalGlobal)
		vm.Close()
	}
}

func BenchmarkNew(b *testing.B) {
	for i := 0; i < b.N; i++ {
		v, err := New()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		v.Close()
		b.StartTimer()
	}
}

func BenchmarkClose(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		v, _ := New()
		b.StartTimer()
		v.Close()
	}
}

func BenchmarkRun(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		v, _ := New()
		stop := make(chan struct{})
		key := v.Key()
		j := &Job{
			Entry: "/main.js", Fn: "default", Console: -1, Args: `["a"]`, Globals: `[]`, Imports: `["a"]`,
			Resolve: func(base, spec string) (string, error) { return spec, nil },
			Load: func(name string) (string, error) {
				if name == "/main.js" {
					return `import {} from "airlock:g";export default "hello"`, nil
				}
				return "const p = globalThis[\"" + key + "\"](); export const G = p[0], I = p[1];", nil
			},
			Call:    func(id int, raw []any, wire string, encoded bool) Reply { return Reply{} },
			Pending: func() int { return 0 },
			Stop:    stop,
		}
		b.StartTimer()
		if o := v.Run(j); o.Kind != OK {
			b.Fatal(o)
		}
		b.StopTimer()
		v.Close()
		b.StartTimer()
	}
}

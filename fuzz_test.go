package airlock

import (
	"context"
	"sync"
	"testing"
	"time"
)

var fuzzRuntime = sync.OnceValue(func() *Runtime { return NewRuntime(RuntimeConfig{MaxDuration: 2 * time.Second}) })

// FuzzRunSource runs arbitrary source, as TypeScript and as JavaScript: every
// run must settle with a known status, and the host must not crash.
func FuzzRunSource(f *testing.F) {
	for _, s := range []string{
		"export default 1", "export default", "import x from 'y'", "export const a: number = 1",
		"enum E { A } export default E.A", "throw 1", "await null", "`${", "/*", "export default import.meta",
		"function f(){ f() } f()", "export default new Proxy({}, {})", "\x00", "#!shebang\nexport default 1",
		"export { a as default } from './x.js'", "import('fs')", "<div/>", "f<T>(x)",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, ts bool) {
		lang := JavaScript
		if ts {
			lang = TypeScript
		}
		ex, err := fuzzRuntime().Run(context.Background(), src, Options{Language: lang, MemoryLimitBytes: 16 << 20})
		if err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(time.Second, func() { ex.Terminate("fuzz budget") })
		defer timer.Stop()
		res := ex.Wait()
		switch res.Status {
		case StatusSuccess, StatusError, StatusMemory, StatusTerminated, StatusLinkError:
		default:
			t.Fatalf("status %q", res.Status)
		}
		if _, err := res.MarshalJSON(); err != nil {
			t.Fatalf("result does not marshal: %v", err)
		}
	})
}

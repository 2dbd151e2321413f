package airlock_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/airlockrun/airlock"
)

func TestSmoke(t *testing.T) {
	for _, src := range []string{
		`export default 42;`,
		`export default async () => 42;`,
		`export default () => Promise.resolve(42);`,
		`export default Promise.resolve(42);`,
		`const x: number = 42; export default x;`,
		`console.log("hi", {a: 1}); export default input.reduce((a, b) => a + b, 0)`,
		`import { readFile } from 'fs'; export default await readFile("x")`,
		`throw new TypeError("bad")`,
		`import {nope} from 'fs'; export default 1`,
		`export default 1 +`,
		`export default (x => { let y: number = ; })`,
	} {
		ex, err := airlock.Run(context.Background(), src, airlock.Options{
			Globals: map[string]any{"input": []int{1, 2, 3}},
			Imports: map[string]airlock.Module{"fs": {"readFile": airlock.Async(func(p string) (string, error) { return "content of " + p, nil })}},
		})
		if err != nil {
			t.Fatal(err)
		}
		res := ex.Wait()
		b, _ := json.Marshal(res)
		t.Logf("%s\n  => %s", src, b)
	}
}

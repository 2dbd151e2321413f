package airlock_test

import (
	"context"
	"fmt"

	"github.com/airlockrun/airlock"
)

// Options.Log is given each console line as it is written, while the
// program runs: here the lines come between the host calls they were
// written between, not at the end with the result.
func ExampleOptions_log() {
	ex, err := airlock.Run(context.Background(), `
		import { save } from 'db';
		for (const id of [1, 2]) {
			console.log('saving', id);
			await save(id);
		}
		console.warn('done');
		export default 2;
	`, airlock.Options{
		Imports: map[string]airlock.Module{"db": {
			"save": func(id int) { fmt.Println("host: saved", id) },
		}},
		Log: func(l airlock.Log) { fmt.Println(l.Level, l.Message()) },
	})
	if err != nil {
		panic(err)
	}
	res := ex.Wait()
	fmt.Println(res.Status, res.Result, len(res.Logs))
	// Output:
	// log saving 1
	// host: saved 1
	// log saving 2
	// host: saved 2
	// warn done
	// success 2 3
}

package airlock_test

//go:generate sh -c "cd testdata/node && TZ=UTC node gen.mjs > node.json"

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/airlockrun/airlock"
)

// nodeDiffDivergent lists the results of testdata/node whose value still
// differs from Node's, and why. A listed result that starts to match fails
// the test, so the list stays true.
var nodeDiffDivergent = map[string]string{}

// TestNodeDifferential runs each model-style program of testdata/node in
// Airlock and compares its default export, result by result, with what
// Node 20 computed (node.json, written by gen.mjs): number, currency and
// date formatting, collation, plurals, relative times, lists, segments,
// and the language's own divergences from Node.
func TestNodeDifferential(t *testing.T) {
	b, err := os.ReadFile("testdata/node/node.json")
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Programs map[string]map[string]any
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	if len(data.Programs) < 5 {
		t.Fatalf("node.json has %d programs", len(data.Programs))
	}
	matched, total := 0, 0
	for name, want := range data.Programs {
		src, err := os.ReadFile("testdata/node/" + name + ".js")
		if err != nil {
			t.Fatal(err)
		}
		res, err := airlock.Eval(context.Background(), string(src), airlock.Options{Language: airlock.JavaScript, Filename: name + ".js"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Error != nil {
			t.Errorf("%s: %s: %s\n%s", name, res.Error.Name, res.Error.Message, res.Error.Stack)
			continue
		}
		j, err := json.Marshal(airlock.JSONValue(res.Result))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got map[string]any
		if err := json.Unmarshal(j, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			total++
			id := name + "/" + k
			same := reflect.DeepEqual(got[k], want[k])
			why, known := nodeDiffDivergent[id]
			switch {
			case same && known:
				t.Errorf("%s: now matches Node; drop it from nodeDiffDivergent", id)
			case same:
				matched++
			case known:
				t.Logf("%s: known divergence (%s)", id, why)
			default:
				g, _ := json.Marshal(got[k])
				w, _ := json.Marshal(want[k])
				t.Errorf("%s:\n\tgot  %s\n\tnode %s", id, g, w)
			}
		}
	}
	t.Logf("%d of %d results match Node", matched, total)
}

package js_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/airlockrun/airlock/js"
)

func TestJSONValue(t *testing.T) {
	m := map[string]any{"a": []float64{math.Inf(1)}}
	m["m"] = m
	b, err := json.Marshal(js.JSONValue(m))
	if err != nil || string(b) != `{"a":[null],"m":null}` {
		t.Fatalf("%s, %v", b, err)
	}
	if m["a"].([]float64)[0] != math.Inf(1) {
		t.Fatal("JSONValue modified its argument")
	}
}

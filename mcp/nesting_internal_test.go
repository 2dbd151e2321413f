package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// An upstream tool's schema nested deeper than 128 JSON levels is shown as
// unknown, without being decoded into a schema (whose decoder's time grows
// with the square of the depth); a real one is read.
func TestNestingUpstreamSchema(t *testing.T) {
	deep := func(n int) any {
		var v any
		text := strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"number"}` + strings.Repeat(`}}`, n)
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if s := schemaOf(deep(10)); s == nil || s.Properties["a"] == nil {
		t.Fatalf("a schema 20 levels deep: %+v", s)
	}
	if s := schemaOf(deep(4999)); s != nil {
		t.Fatalf("a schema 9,998 levels deep was decoded")
	}
}

package nesting_test

import (
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/nesting"
)

// JSONDepth counts arrays and objects, not the brackets in strings (escaped
// quotes included).
func TestJSONDepth(t *testing.T) {
	for text, want := range map[string]int{
		``:                              0,
		`1`:                             0,
		`[]`:                            1,
		`{"a":[{}]}`:                    3,
		`{"a":"[[[{{","b":["\"[",[1]]}`: 3,
		`["\\",[]]`:                     2,
		`[[[`:                           3,
	} {
		if d := nesting.JSONDepth([]byte(text)); d != want {
			t.Errorf("JSONDepth(%s) = %d, want %d", text, d, want)
		}
	}
}

// A schema may nest MaxSchemaDepth levels; one more is refused, with the
// depth and the bound in the message.
func TestCheckSchema(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	if err := nesting.CheckSchema(deep(nesting.MaxSchemaDepth)); err != nil {
		t.Fatalf("%d levels: %v", nesting.MaxSchemaDepth, err)
	}
	err := nesting.CheckSchema(deep(nesting.MaxSchemaDepth + 1))
	if err == nil || err.Error() != "the schema nests 129 levels deep, more than 128" {
		t.Fatalf("129 levels: %v", err)
	}
}

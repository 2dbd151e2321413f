package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/agent"
)

// Item 8: declarations for the forms of typical MCP and pydantic tool
// schemas: local $refs (a cycle guarded), allOf as an intersection,
// prefixItems as tuples, additionalProperties beside properties as an
// index signature, format/default/bounds/pattern in doc comments, and the
// property order of the text.
func TestGolden_SchemaForms(t *testing.T) {
	files, _ := filepath.Glob("testdata/schemas/*.json")
	if len(files) == 0 {
		t.Fatal("no schemas")
	}
	h := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := agent.SchemaFromJSON(text)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		tb := toolbox(t, agent.Tool{ID: "demo." + strings.ReplaceAll(name, "_", "-"), Description: "A tool.", InputSchema: s, Handler: h})
		golden(t, "schemas/"+name+".d.ts", agent.TypeScriptDeclarations(tb.Tools()))
	}
}

// SchemaFromJSON keeps the order of the text, nested objects included.
func TestSchemaFromJSON_Order(t *testing.T) {
	s, err := agent.SchemaFromJSON([]byte(`{"type":"object","properties":{"z":{"type":"object","properties":{"b":{},"a":{}}},"a":{},"m":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.PropertyOrder, ",") != "z,a,m" || strings.Join(s.Properties["z"].PropertyOrder, ",") != "b,a" {
		t.Fatalf("order %v / %v", s.PropertyOrder, s.Properties["z"].PropertyOrder)
	}
	if _, err := agent.SchemaFromJSON([]byte(`{"type":`)); err == nil {
		t.Fatal("bad JSON accepted")
	}
}

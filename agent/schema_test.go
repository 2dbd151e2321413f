package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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
		decls := agent.TypeScriptDeclarations(tb.Tools())
		golden(t, "schemas/"+name+".d.ts", decls)
		assertTypeScript(t, decls)
	}
}

// A schema whose definitions each refer twice to the next expands to
// 2^depth copies; the declaration stops expanding at a bound and stays
// small. (An upstream MCP server can send such a schema.)
func TestTypeScriptDeclarations_RefBlowUpBounded(t *testing.T) {
	var defs []string
	const n = 30
	for i := range n {
		next := fmt.Sprintf(`{"$ref":"#/$defs/D%d"}`, i+1)
		if i == n-1 {
			next = `{"type":"string"}`
		}
		defs = append(defs, fmt.Sprintf(`"D%d":{"type":"object","properties":{"a":%s,"b":%s}}`, i, next, next))
	}
	s, err := agent.SchemaFromJSON([]byte(`{"type":"object","properties":{"root":{"$ref":"#/$defs/D0"}},"$defs":{` + strings.Join(defs, ",") + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	tb := toolbox(t, agent.Tool{ID: "demo.diamond", Description: "A tool.", InputSchema: s, Handler: h})
	decls := agent.TypeScriptDeclarations(tb.Tools())
	if len(decls) > 4<<20 {
		t.Fatalf("the declarations are %d bytes", len(decls))
	}
	if !strings.Contains(decls, "unknown") {
		t.Fatal("nothing was cut")
	}
	assertTypeScript(t, decls)
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

// The golden declarations type-check with TypeScript's compiler in strict
// mode (esbuild, above, only parses them): an index signature beside
// optional properties, for one, must allow undefined. It needs tsc on the
// PATH (npm install -g typescript) and is skipped without it.
func TestGolden_DeclarationsTypeCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("tsc is slow; not with -short")
	}
	tsc, err := exec.LookPath("tsc")
	if err != nil {
		t.Skip("tsc is not on the PATH")
	}
	files, _ := filepath.Glob("testdata/schemas/*.d.ts")
	files = append(files, "testdata/api.d.ts")
	args := append([]string{"--noEmit", "--strict", "--lib", "es2022"}, files...)
	if out, err := exec.Command(tsc, args...).CombinedOutput(); err != nil {
		t.Errorf("tsc: %v\n%s", err, out)
	}
}

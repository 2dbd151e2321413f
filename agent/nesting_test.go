package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/airlockrun/airlock/agent"
	"github.com/airlockrun/airlock/internal/childtest"
)

// deepSchema is the JSON text of an object schema nested n levels deep
// (2n JSON levels): {"type":"object","properties":{"a":{...}}}.
func deepSchema(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"number"}` + strings.Repeat(`}}`, n)
}

// goSchema is an object schema nested n levels deep, built in Go.
func goSchema(n int) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "number"}
	for range n {
		s = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": s}}
	}
	return s
}

// Schemas are written as TypeScript declarations at most 32 levels deep: a
// schema nested 100,000 levels deep gives a short declaration, not one that
// grows with the cube of its depth. (A schema from elsewhere, an upstream
// MCP server's, is read with encoding/json, whose depth limit of 10,000
// refuses a deeper one.)
func TestNestingSchemaDeclarations(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	var s0 jsonschema.Schema
	if err := json.Unmarshal([]byte(deepSchema(500_000)), &s0); err == nil || !strings.Contains(err.Error(), "depth") {
		t.Fatalf("a schema 1,000,000 JSON levels deep: %v, want the decoder's depth error", err)
	}
	s := *goSchema(100_000)
	d := agent.NamespaceDeclarations("up", []agent.FunctionDoc{{Name: "deep", Input: &s, Output: &s, Async: true}})
	if len(d) > 64<<10 || !strings.Contains(d, "unknown") {
		t.Fatalf("declarations of %d bytes:\n%.2000s", len(d), d)
	}
	tools := []agent.Tool{{ID: "deep", Description: "deep", InputSchema: &s, OutputSchema: &s,
		Handler: func(ctx context.Context, in json.RawMessage) (any, error) { return 1, nil }}}
	if d := agent.TypeScriptDeclarations(tools); len(d) > 64<<10 {
		t.Fatalf("declarations of %d bytes", len(d))
	}
}

// A tool's input schema is compiled, and its input checked, by
// santhosh-tekuri/jsonschema, which recurses with the schema and the input:
// the input is JSON from the sandbox, whose depth the decoder bounds
// (10,000 levels), and at that depth a recursive schema checks it on a
// bounded stack. A deeper input is refused as not JSON.
func TestNestingToolInput(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	tree := &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Ref: "#"}}
	tb, err := agent.NewToolbox(agent.Tool{ID: "tree", Description: "a tree of arrays", InputSchema: tree,
		Handler: func(ctx context.Context, in json.RawMessage) (any, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if out, err := tb.Call(ctx, "tree", json.RawMessage(strings.Repeat("[", 9999)+strings.Repeat("]", 9999))); err != nil || string(out) != "1" {
		t.Fatalf("9,999 levels: %s, %v", out, err)
	}
	for _, in := range []string{strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000), strings.Repeat("[", 1_000_000)} {
		if _, err := tb.Call(ctx, "tree", json.RawMessage(in)); err == nil || !strings.Contains(err.Error(), "not JSON") {
			t.Fatalf("1,000,000 levels: %v", err)
		}
	}
}

// A tool's schema deeper than 128 JSON levels is refused when the tool is
// added: the compiler's time grows with the cube of the depth.
func TestNestingToolSchema(t *testing.T) {
	for _, c := range []struct {
		n  int
		ok bool
	}{{20, true}, {63, true}, {64, false}, {1000, false}} {
		_, err := agent.NewToolbox(agent.Tool{ID: "deep", Description: "deep", InputSchema: goSchema(c.n),
			Handler: func(ctx context.Context, in json.RawMessage) (any, error) { return 1, nil }})
		if (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), "more than 128") {
			t.Errorf("%d levels: %v", c.n, err)
		}
	}
}

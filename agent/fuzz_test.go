package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/airlockrun/airlock/agent"
)

// FuzzDeclarations: for any input schema a tool may have, the generated
// TypeScript declarations parse, and the Markdown and listing do not fail.
//
//	go test -run '^$' -fuzz FuzzDeclarations -fuzztime 1m ./agent
func FuzzDeclarations(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","description":"x */ y"},"b c":{"type":["integer","null"]}},"required":["a"]}`,
		`{"type":"array","items":{"anyOf":[{"type":"string"},{"enum":["x",1,null,true]}]}}`,
		`{"type":"object","additionalProperties":{"type":"array","items":{"const":"k"}}}`,
		`{"oneOf":[{"type":"object","properties":{"\"q\"":{}}},{"type":"boolean"}],"description":"d\n\nmore"}`,
		`{"type":"object","properties":{"p":{"type":"object","properties":{"q":{"type":"array","items":{"type":"object","properties":{"r":{"type":"number"}}}}}}}}`,
	} {
		f.Add(s, "Tool description")
	}
	f.Fuzz(func(t *testing.T, schemaJSON, description string) {
		var s jsonschema.Schema
		if json.Unmarshal([]byte(schemaJSON), &s) != nil {
			return
		}
		tool := agent.Tool{ID: "fuzz.tool", Description: description, InputSchema: &s, OutputSchema: &s,
			Handler: func(context.Context, json.RawMessage) (any, error) { return nil, nil }}
		decls := agent.TypeScriptDeclarations([]agent.Tool{tool})
		res := api.Transform(decls, api.TransformOptions{Loader: api.LoaderTS})
		if len(res.Errors) > 0 {
			t.Fatalf("declarations do not parse: %s\n%s", res.Errors[0].Text, decls)
		}
		if strings.TrimSpace(string(res.Code)) != "" {
			t.Fatalf("declarations compile to code:\n%s", decls)
		}
		_ = agent.MarkdownDocs([]agent.Tool{tool})
		_ = agent.ToolListing([]agent.Tool{tool})
	})
}

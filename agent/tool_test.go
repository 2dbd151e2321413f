package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/airlockrun/airlock/agent"
)

func TestFunctionName(t *testing.T) {
	for id, want := range map[string]string{
		"weather.get-weather": "weatherGetWeather",
		"todo.create":         "todoCreate",
		"artifact.store":      "artifactStore",
		"search":              "search",
		"db.run_sql":          "dbRunSql",
		"a.b.c-d":             "aBCD",
	} {
		if got := agent.FunctionName(id); got != want {
			t.Errorf("FunctionName(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestToolbox_Refuses(t *testing.T) {
	h := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	for _, c := range []struct {
		name  string
		tools []agent.Tool
	}{
		{"bad ID", []agent.Tool{{ID: "1weather.get", Handler: h}}},
		{"bad character", []agent.Tool{{ID: "weather.get!", Handler: h}}},
		{"same function name by case", []agent.Tool{{ID: "github.getUser", Handler: h}, {ID: "github.get-user", Handler: h}}},
		{"empty part", []agent.Tool{{ID: "weather..get", Handler: h}}},
		{"no handler", []agent.Tool{{ID: "a.b"}}},
		{"duplicate", []agent.Tool{{ID: "a.b", Handler: h}, {ID: "a.b", Handler: h}}},
		{"same function name", []agent.Tool{{ID: "a.b-c", Handler: h}, {ID: "a.b_c", Handler: h}}},
		{"helper name", []agent.Tool{{ID: "parallel", Handler: h}}},
		{"schema that is not one", []agent.Tool{{ID: "a.b", Handler: h, InputSchema: &jsonschema.Schema{Type: "objekt"}}}},
		{"schema that loads a file", []agent.Tool{{ID: "a.b", Handler: h, InputSchema: &jsonschema.Schema{Ref: "file:///etc/passwd"}}}},
		{"schema that loads a URL", []agent.Tool{{ID: "a.b", Handler: h, InputSchema: &jsonschema.Schema{Ref: "https://example.com/s.json"}}}},
	} {
		if _, err := agent.NewToolbox(c.tools...); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	tb := toolbox(t, agent.Tool{ID: "a.b", Handler: h})
	if err := tb.Add(agent.Tool{ID: "c.d", Handler: h}, agent.Tool{ID: "a.b", Handler: h}); err == nil {
		t.Fatal("a duplicate was added")
	}
	if _, ok := tb.Tool("c.d"); ok {
		t.Fatal("a failed Add added part of its tools")
	}
}

func TestToolbox_Call(t *testing.T) {
	tb := toolbox(t, weatherTool(0), agent.Tool{ID: "x.panics", Handler: func(context.Context, json.RawMessage) (any, error) { panic("secret") }},
		agent.Tool{ID: "x.chan", Handler: func(context.Context, json.RawMessage) (any, error) { return make(chan int), nil }})
	ctx := context.Background()
	out, err := tb.Call(ctx, "weather.get-weather", json.RawMessage(`{"latitude": 10, "longitude": 0}`))
	if err != nil || string(out) != `{"temperature":11,"description":"cloudy"}` {
		t.Fatalf("%s, %v", out, err)
	}
	// By function name too.
	if _, err := tb.Call(ctx, "weatherGetWeather", json.RawMessage(`{"latitude": 10, "longitude": 0}`)); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Call(ctx, "weather.get-weather", json.RawMessage(`{"latitude": 10}`))
	var se *agent.SchemaError
	if !errors.As(err, &se) || se.Tool != "weather.get-weather" || !strings.Contains(err.Error(), "longitude") {
		t.Fatalf("err = %v", err)
	}
	if _, err := tb.Call(ctx, "weather.get-weather", json.RawMessage(`{not json`)); !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
	if _, err := tb.Call(ctx, "nope", nil); !errors.Is(err, agent.ErrToolNotFound) || err.Error() != `Tool "nope" not found` {
		t.Fatalf("err = %v", err)
	}
	if _, err := tb.Call(ctx, "x.panics", nil); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err = %v", err)
	}
	if _, err := tb.Call(ctx, "x.chan", nil); err == nil {
		t.Fatal("a result that is not JSON passed")
	}
}

func TestNewTool_PanicsOnBadType(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	agent.NewTool("a.b", "", func(context.Context, chan int) (int, error) { return 0, nil })
}

// The schema's rules, each failure said with its place in the input;
// references inside the schema are followed.
func TestToolbox_SchemaRules(t *testing.T) {
	var schema jsonschema.Schema
	if err := json.Unmarshal([]byte(`{
		"type": "object",
		"properties": {
			"city": {"type": "string", "minLength": 2},
			"days": {"type": "integer", "minimum": 1, "maximum": 7},
			"units": {"enum": ["metric", "imperial"]},
			"at": {"$ref": "#/$defs/point"}
		},
		"required": ["city"],
		"additionalProperties": false,
		"$defs": {"point": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}}
	}`), &schema); err != nil {
		t.Fatal(err)
	}
	tb := toolbox(t, agent.Tool{ID: "w.forecast", InputSchema: &schema,
		Handler: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }})
	for input, want := range map[string]string{
		`{"city": "Oslo", "days": 3, "units": "metric", "at": [59.9, 10.7]}`: "",
		`{"days": 3}`:                      "missing property 'city'",
		`{"city": "O"}`:                    "at /city: ",
		`{"city": "Oslo", "days": 2.5}`:    "at /days: ",
		`{"city": "Oslo", "days": 8}`:      "at /days: ",
		`{"city": "Oslo", "units": "si"}`:  "at /units: ",
		`{"city": "Oslo", "at": [1, "x"]}`: "at /at/1: ",
		`{"city": "Oslo", "at": [1]}`:      "at /at: ",
		`{"city": "Oslo", "wind": true}`:   "'wind'",
		`[]`:                               "want object",
	} {
		_, err := tb.Call(context.Background(), "w.forecast", json.RawMessage(input))
		var se *agent.SchemaError
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", input, err)
		case want != "" && (!errors.As(err, &se) || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err = %v, want one that says %q", input, err, want)
		}
	}
}

// A tool takes its first argument as input; none, null and undefined are
// an empty object, and further arguments are ignored.
func TestToolCall_ArgumentForms(t *testing.T) {
	var got []string
	seen := agent.Tool{ID: "t.seen", Handler: func(_ context.Context, in json.RawMessage) (any, error) {
		got = append(got, string(in))
		return len(got), nil
	}}
	it := agent.NewInterpreter(agent.Config{})
	e := execute(t, it, `tSeen({ a: 1 }); tSeen({ b: [1, "x"] }, 2, "extra"); tSeen(); tSeen(null); tSeen(undefined, 5); tSeen({ c: true }, {})`,
		agent.ExecuteOptions{Tools: toolbox(t, seen)})
	wantOK(t, e)
	want := []string{`{"a":1}`, `{"b":[1,"x"]}`, `{}`, `{}`, `{}`, `{"c":true}`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("inputs %q, want %q", got, want)
	}
}

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

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
		{"bad ID", []agent.Tool{{ID: "Weather.Get", Handler: h}}},
		{"empty part", []agent.Tool{{ID: "weather..get", Handler: h}}},
		{"no handler", []agent.Tool{{ID: "a.b"}}},
		{"duplicate", []agent.Tool{{ID: "a.b", Handler: h}, {ID: "a.b", Handler: h}}},
		{"same function name", []agent.Tool{{ID: "a.b-c", Handler: h}, {ID: "a.b_c", Handler: h}}},
		{"helper name", []agent.Tool{{ID: "parallel", Handler: h}}},
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

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/agent"
)

func openArtifacts(t *testing.T) *agent.SQLiteArtifacts {
	t.Helper()
	store, err := agent.OpenArtifacts(filepath.Join(t.TempDir(), "artifacts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// Seed 002: storeArtifact/listArtifacts (and getArtifact) in code mode.
func TestArtifacts_Sandbox(t *testing.T) {
	store := openArtifacts(t)
	base := agent.NewInterpreter(agent.Config{})
	if err := agent.RegisterArtifacts(base, store); err != nil {
		t.Fatal(err)
	}
	it := base.Clone() // as code mode does: the plugin's functions are there
	e := execute(t, it, `const id = storeArtifact({ rows: [1, 2, 3] }, "three rows");
const id2 = storeArtifact("plain");
const list = listArtifacts();
[typeof id, list.length, list[0].description, list[1].description, list[0].type, getArtifact(id).rows.length, getArtifact(id2), list[0].id === id]`, agent.ExecuteOptions{})
	wantOK(t, e)
	want := []any{"string", 2.0, "three rows", nil, "json", 3.0, "plain", true}
	if !reflect.DeepEqual(e.Result, want) {
		t.Fatalf("result = %#v", e.Result)
	}
	e = execute(t, it, `getArtifact("art_missing")`, agent.ExecuteOptions{})
	wantError(t, e, `Error: artifact "art_missing": artifact not found`)
	// A database error propagates to the sandbox.
	store.Close()
	e = execute(t, it, `storeArtifact(1)`, agent.ExecuteOptions{})
	if !strings.HasPrefix(e.Error, "Error: store artifact: ") {
		t.Fatalf("error = %q", e.Error)
	}
}

// The same data persists in the file across opens.
func TestArtifacts_Persist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	s, err := agent.OpenArtifacts(path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Store(context.Background(), "", "d", json.RawMessage(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = agent.OpenArtifacts(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := s.Get(context.Background(), id)
	if err != nil || string(a.Data) != `{"a":1}` || a.Type != "json" || *a.Description != "d" || a.CreatedAt.IsZero() {
		t.Fatalf("artifact %+v, %v", a, err)
	}
	if _, err := s.Get(context.Background(), "nope"); !errors.Is(err, agent.ErrArtifactNotFound) {
		t.Fatalf("err = %v", err)
	}
	mem, err := agent.OpenArtifacts("")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if list, err := mem.List(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("list %v, %v", list, err)
	}
}

// Classic mode: artifact.store, artifact.list and artifact.get as tools.
func TestArtifacts_Tools(t *testing.T) {
	store := openArtifacts(t)
	tb := toolbox(t, agent.ArtifactTools(store)...)
	ctx := context.Background()
	out, err := tb.Call(ctx, "artifact.store", json.RawMessage(`{"description":"cities","data":["Oslo","Rome"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct{ ID string }
	_ = json.Unmarshal(out, &stored)
	out, err = tb.Call(ctx, "artifact.list", nil)
	if err != nil || !strings.Contains(string(out), `"description":"cities"`) || !strings.Contains(string(out), stored.ID) {
		t.Fatalf("list = %s, %v", out, err)
	}
	out, err = tb.Call(ctx, "artifact.get", json.RawMessage(`{"id":"`+stored.ID+`"}`))
	if err != nil || !strings.Contains(string(out), `"data":["Oslo","Rome"]`) {
		t.Fatalf("get = %s, %v", out, err)
	}
	if _, err := tb.Call(ctx, "artifact.store", json.RawMessage(`{"description":"no data"}`)); err == nil {
		t.Fatal("artifact.store without data passed the schema")
	}
	// In code, the same tools are camelCase functions.
	e := execute(t, agent.NewInterpreter(agent.Config{}), `artifactList().length`, agent.ExecuteOptions{Tools: tb})
	wantOK(t, e)
	if e.Result != 1.0 {
		t.Fatalf("result = %v", e.Result)
	}
}

package integration_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/airlockrun/airlock"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/scripts")

// TestScripts runs the corpus in testdata/scripts. Each archive holds the
// entry source (main.ts or main.js), optional modules (any other .ts or .js
// file, imported as "./name"), an optional "options" section (JSON: fn, args,
// globals, memory) and the "want" section: the Result JSON without
// durationMs and memoryUsedBytes. go test -run TestScripts -update rewrites
// the want sections.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/scripts/*.txtar")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var src, want string
			wantAt := -1
			opts := airlock.Options{Modules: map[string]string{}}
			for i, f := range ar.Files {
				switch {
				case f.Name == "main.ts" || f.Name == "main.js":
					src, opts.Filename = string(f.Data), f.Name
					if f.Name == "main.js" {
						opts.Language = airlock.JavaScript
					}
				case f.Name == "want":
					want, wantAt = string(f.Data), i
				case f.Name == "options":
					var o struct {
						Fn      string         `json:"fn"`
						Args    []any          `json:"args"`
						Globals map[string]any `json:"globals"`
						Memory  int64          `json:"memory"`
					}
					if err := json.Unmarshal(f.Data, &o); err != nil {
						t.Fatal(err)
					}
					opts.Execute = airlock.Execute{Fn: o.Fn, Args: o.Args}
					opts.Globals, opts.MemoryLimitBytes = o.Globals, o.Memory
				default:
					opts.Modules["./"+f.Name] = string(f.Data)
				}
			}
			ex, err := testRuntime.Run(context.Background(), src, opts)
			if err != nil {
				t.Fatal(err)
			}
			// The want section is the Result JSON less what changes from run
			// to run.
			gotText := comparable(t, ex.Wait()) + "\n"
			if *update {
				if wantAt < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantAt = len(ar.Files) - 1
				}
				ar.Files[wantAt].Data = []byte(gotText)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if gotText != want {
				t.Fatalf("got:\n%s\nwant:\n%s", gotText, want)
			}
		})
	}
}

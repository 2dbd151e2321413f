package nesting_test

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/nesting"
)

var corpus = flag.String("corpus", "", "directories of JavaScript and TypeScript to scan, separated by commas (TestCorpus)")

// TestCorpus scans every .js, .mjs, .cjs, .ts, .mts and .cts file under the
// -corpus directories and reports how deep they nest, how many readings
// they needed at once, which Check refuses, and the time the scans took:
//
//	go test -run TestCorpus -v ./internal/nesting -corpus=/tmp/corpus,/usr/lib/node_modules
//
// It fails if Check refuses any: a real program is never refused.
func TestCorpus(t *testing.T) {
	if *corpus == "" {
		t.Skip("no -corpus")
	}
	var depths, readings []int
	var bytes int
	var took time.Duration
	for _, root := range strings.Split(*corpus, ",") {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil || d.IsDir():
				return nil
			case !slices.Contains([]string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"}, filepath.Ext(p)):
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			src := string(b)
			start := time.Now()
			e := nesting.Check(src)
			took += time.Since(start)
			if e != nil {
				t.Errorf("%s: refused at %d:%d: %v", p, e.Line, e.Column, e)
			}
			depths, readings, bytes = append(depths, nesting.Depth(src)), append(readings, nesting.Readings(src)), bytes+len(src)
			return nil
		})
	}
	if len(depths) == 0 {
		t.Fatal("no files")
	}
	slices.Sort(depths)
	q := func(p float64) int { return depths[int(p*float64(len(depths)-1))] }
	t.Logf("%d files, %.1f MB, checked in %v", len(depths), float64(bytes)/1e6, took)
	t.Logf("depth: median %d, 99th percentile %d, deepest %d", q(.5), q(.99), depths[len(depths)-1])
	t.Logf("readings at once: at most %d", slices.Max(readings))
}

package intl

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// BenchmarkSnapshot measures what Intl costs the snapshot and each sandbox:
// a snapshot hardened and set up with no Intl ("none"), with this
// package's script ("intl"), and, when FORMATJS_BUNDLE names a file, with
// that script instead (the FormatJS polyfills bundled, see RATIONALE.md,
// "Intl"). It reports the image's size, the time to build it, and, for 200
// sandboxes held alive after one evaluation each, their proportional
// resident memory (PSS) per sandbox; ns/op is a fresh sandbox's start,
// evaluation and close.
//
//	go test -run '^$' -bench Snapshot -benchtime 200x ./internal/intl
func BenchmarkSnapshot(b *testing.B) {
	variants := []struct{ name, setup, eval string }{
		{"none", "", "1+2"},
		{"intl-hello", "(" + Source + ")(function () { return ''; });", "1+2"},
		{"intl", "(" + Source + ")(function () { return ''; });", "new Intl.NumberFormat('en-US', {style: 'currency', currency: 'USD'}).format(1234.5) + new Date(0).toLocaleString()"},
	}
	if f := os.Getenv("FORMATJS_BUNDLE"); f != "" {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		variants = append(variants, struct{ name, setup, eval string }{"formatjs", string(src), variants[2].eval})
	}
	ctx := context.Background()
	for _, v := range variants {
		pssPer := map[string]float64{}
		b.Run(v.name, func(b *testing.B) {
			e, err := wasmvm.NewEngine(ctx, &wasmvm.EngineOptions{NoCache: true}) // build-ms is a build, not a cache read
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close(ctx)
			t0 := time.Now()
			sn, err := e.NewSnapshot(ctx, &wasmvm.SnapshotOptions{Setup: v.setup, Pool: -1})
			if err != nil {
				b.Fatal(err)
			}
			built := time.Since(t0)
			defer sn.Close()
			eval := func(s *wasmvm.Sandbox, src string) {
				if _, err := s.Eval(ctx, src, "bench.js", wasmvm.Script); err != nil {
					b.Fatal(err)
				}
			}
			for _, src := range []string{"1+2", v.eval} {
				name := "hello"
				if src != "1+2" {
					name = "format"
				}
				if runtime.GOOS == "linux" {
					n := 200
					if v.name == "formatjs" {
						n = 10 // its first format takes most of a second
					}
					runtime.GC()
					before := pssKB(b)
					sbs := make([]*wasmvm.Sandbox, n)
					for i := range sbs {
						s, err := sn.NewSandbox(ctx, nil)
						if err != nil {
							b.Fatal(err)
						}
						eval(s, src)
						sbs[i] = s
					}
					pssPer[name] = float64(pssKB(b)-before) / float64(n)
					for _, s := range sbs {
						s.Close(ctx)
					}
				}
			}
			b.ResetTimer()
			for b.Loop() {
				s, err := sn.NewSandbox(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				eval(s, v.eval)
				s.Close(ctx)
			}
			b.StopTimer()
			for name, kb := range pssPer {
				b.ReportMetric(kb, "PSS-KiB/"+name)
			}
			b.ReportMetric(float64(sn.ImageSize())/1024, "image-KiB")
			b.ReportMetric(float64(built.Milliseconds()), "build-ms")
		})
	}
}

func pssKB(b *testing.B) int64 {
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	b.Fatal("no Pss in smaps_rollup")
	return 0
}

// BenchmarkCollate measures a collation at the most the collator reads
// (maxCollated of each string) and at the most that runs on the VM's
// goroutine (inlineBytes in all), for Latin and Hangul text.
func BenchmarkCollate(b *testing.B) {
	for _, c := range []struct{ name, unit, opts string }{
		{"latin", "abcdefgh", "en|v|-|-|-"},
		{"hangul", "한국어", "ko|v|-|-|-"},
	} {
		for _, n := range []int{inlineBytes / 2, maxCollated} {
			x := strings.Repeat(c.unit, n/len(c.unit))
			y := x[:len(x)-len(c.unit)] + "z"
			b.Run(fmt.Sprintf("%s/%dB", c.name, len(x)), func(b *testing.B) {
				b.SetBytes(int64(len(x) + len(y)))
				for i := 0; i < b.N; i++ {
					collateBounded(c.opts, x, y)
				}
			})
		}
	}
}

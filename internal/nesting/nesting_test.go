package nesting_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/go-sourcemap/sourcemap"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockrun/airlock/internal/childtest"
	"github.com/airlockrun/airlock/internal/nesting"
	"github.com/airlockrun/airlock/internal/nesting/nestingtest"
)

// Every deep shape is refused at the token that passes the bound, in one
// pass: 300,000 levels cost what the first thousand do.
func TestCheckDeep(t *testing.T) {
	for _, c := range nestingtest.Deep(300_000) {
		e := nesting.Check(c.Module)
		if strings.Contains(c.Name, "-close") {
			continue // the parsers refuse these without recursing
		}
		if e == nil {
			t.Errorf("%s: not refused", c.Name)
			continue
		}
		if e.Offset >= 64<<10 || e.Line != strings.Count(c.Module[:e.Offset], "\n")+1 {
			t.Errorf("%s: refused at %d (line %d)", c.Name, e.Offset, e.Line)
		}
	}
}

// Real programs count far below the bound, and brackets inside strings,
// templates, comments and regular expressions do not count.
func TestCheckHonest(t *testing.T) {
	for _, c := range append(nestingtest.Honest(), nestingtest.HonestTS()...) {
		if d := nesting.Depth(c.Module); d > 400 {
			t.Errorf("%s: depth %d", c.Name, d)
		}
	}
	for src, want := range map[string]int{
		`f("((((", '[[[[', ` + "`{{{{${'(('}`" + `, /((((/, /[(]/g) // ((((` + "\n/* [[[[ */": 3,
		"if (a) /(((/.test(x)":              4,
		"a = b / (c) / (d)":                 2,
		"x = {}\n/(((/.test(y)":             4,
		"a\n(b)":                            2,
		"return /(/":                        0,
		"`a${`b${`c`}`}`":                   2,
		"x = a < b && c < d":                2,
		"let m: Map<string, Array<number>>": 3,
		"#!/usr/bin/env node\n((":           2,
		"a ? b : c":                         2,
		"switch (x) {" + strings.Repeat("case 1: ", 5000) + "}": 2,
	} {
		if d := nesting.Depth(src); d != want {
			t.Errorf("Depth(%.80q) = %d, want %d", src, d, want)
		}
	}
}

// The bound's error names the line and the column (in characters) of the
// token that went too deep.
func TestCheckPosition(t *testing.T) {
	src := "// é\nlet é = 1;\n  " + strings.Repeat("[", nesting.Max+5)
	e := nesting.CheckMax(src, nesting.Max)
	if e == nil || e.Line != 3 || e.Column != 3+nesting.Max || e.Max != nesting.Max ||
		!strings.Contains(e.Error(), "nests too deeply") {
		t.Fatalf("%+v", e)
	}
	if nesting.CheckMax(strings.Repeat("(", 10)+strings.Repeat(")", 10), 10) != nil {
		t.Fatal("10 levels refused at a bound of 10")
	}
}

// The JSON decoders the host reads requests, results, configs and schemas
// with have a depth limit of their own (10,000), checked here rather than
// assumed: encoding/json (into any, into a struct, RawMessage, a Decoder),
// go-json-experiment (Unmarshal and jsontext.Decoder), and the JSON
// reader of santhosh-tekuri/jsonschema. The source-map decoder reads maps
// that esbuild writes, never sandbox text, and is flat. A million levels,
// balanced or not, end in an error in a child process that survives.
func TestJSONDecodersBoundDepth(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	type doc struct {
		A any `json:"a"`
	}
	for name, text := range map[string]string{
		"arrays":       strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000),
		"arrays-open":  strings.Repeat("[", 1_000_000),
		"objects":      strings.Repeat(`{"a":`, 1_000_000) + "1" + strings.Repeat("}", 1_000_000),
		"objects-open": `{"a":` + strings.Repeat(`{"a":`, 1_000_000),
		"mixed":        `{"a":` + strings.Repeat(`[{"a":`, 500_000),
		"at-limit+1":   `{"a":` + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000) + "}",
	} {
		b := []byte(text)
		var v any
		var d doc
		var raw json.RawMessage
		errs := map[string]error{
			"encoding/json any":       json.Unmarshal(b, &v),
			"encoding/json struct":    json.Unmarshal(b, &d),
			"encoding/json raw":       json.Unmarshal(b, &raw),
			"encoding/json decoder":   json.NewDecoder(bytes.NewReader(b)).Decode(&v),
			"go-json-experiment":      jsonv2.Unmarshal(b, &v),
			"go-json-experiment text": readAll(jsontext.NewDecoder(bytes.NewReader(b))),
		}
		_, errs["santhosh-tekuri"] = validator.UnmarshalJSON(bytes.NewReader(b))
		for dec, err := range errs {
			if err == nil || !strings.Contains(err.Error(), "depth") && !strings.Contains(err.Error(), "EOF") {
				t.Errorf("%s, %s: %v, want a depth error", name, dec, err)
			}
		}
	}
	// At the limit, the decoders decode.
	ok := strings.Repeat("[", 9_999) + strings.Repeat("]", 9_999)
	var v any
	if err := json.Unmarshal([]byte(ok), &v); err != nil {
		t.Fatal(err)
	}
	if err := jsonv2.Unmarshal([]byte(ok), &v); err != nil {
		t.Fatal(err)
	}
	// The source-map decoder is not recursive: a map with deep JSON in it
	// is refused by encoding/json's limit all the same.
	if _, err := sourcemap.Parse("", []byte(`{"version":3,"names":`+strings.Repeat("[", 1_000_000))); err == nil {
		t.Fatal("a deep source map parsed")
	}
}

func readAll(d *jsontext.Decoder) error {
	for {
		if _, err := d.ReadToken(); err != nil {
			return err
		}
	}
}

// BenchmarkCheck is the cost of the scan on an ordinary program; /forks on
// one where every line has a slash that may divide or start a regular
// expression, read both ways and merged again; /readings-14 on 1 MB that
// code before it keeps in 14 readings at once, each with its own open
// parentheses, which never meet (/readings-1 is the same 1 MB alone).
//
//	go test -run '^$' -bench BenchmarkCheck ./internal/nesting
func BenchmarkCheck(b *testing.B) {
	b.Run("honest", benchmarkHonest)
	for _, n := range []int{1, 14} {
		b.Run("readings-"+strconv.Itoa(n), func(b *testing.B) {
			src := strings.Repeat("{} / ( / x /\n", n/2) + strings.Repeat("a + b;\n", (1<<20)/7)
			if r := nesting.Readings(src); r != n {
				b.Fatalf("%d readings", r)
			}
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if nesting.Check(src) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
	b.Run("forks", func(b *testing.B) {
		var src strings.Builder
		for i := 0; src.Len() < 1<<20; i++ {
			src.WriteString("const x" + strconv.Itoa(i) + " = {} / 2 / y\nf(a)\n/ b /.test(c) ? [d] : `${e}`\n")
		}
		s := src.String()
		if nesting.Readings(s) < 2 {
			b.Fatal("no forks")
		}
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if nesting.Check(s) != nil {
				b.Fatal("refused")
			}
		}
	})
}

func benchmarkHonest(b *testing.B) {
	var src strings.Builder
	for _, c := range nestingtest.Honest() {
		src.WriteString(c.Module)
		src.WriteString("\n;\n")
	}
	s := strings.ReplaceAll(src.String(), "export default", "void")
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if nesting.Check(s) != nil {
			b.Fatal("refused")
		}
	}
}

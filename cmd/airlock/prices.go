package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// A price is a model's price in US dollars per million tokens, of the
// input (prompt) and of the output (completion) apart.
type price struct {
	Input, Output float64
}

// cost is the price of input and output tokens.
func (p price) cost(input, output int64) float64 {
	return (float64(input)*p.Input + float64(output)*p.Output) / 1e6
}

// maxPricesBytes bounds the price table file.
const maxPricesBytes = 1 << 20

// priceExample is a table as the errors show it.
const priceExample = `{"gpt-4o-mini": {"input": 0.15, "output": 0.6}}`

// loadPrices reads a price table: a JSON object of model names, each with
// its "input" and "output" prices in US dollars per million tokens. Both
// prices are required, neither is negative, and nothing else is allowed,
// so a typo is an error rather than a price of 0.
func loadPrices(path string) (map[string]price, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPricesBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxPricesBytes {
		return nil, errors.New("the file is larger than 1 MiB")
	}
	return parsePrices(b)
}

func parsePrices(b []byte) (map[string]price, error) {
	var raw map[string]json.RawMessage
	err := json.Unmarshal(b, &raw)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := position(b, syn.Offset)
		return nil, fmt.Errorf("not valid JSON: line %d, column %d: %v", line, col, err)
	}
	if err != nil || raw == nil {
		return nil, errors.New("the table is a JSON object of models' prices in US dollars per million tokens, such as " + priceExample)
	}
	table := make(map[string]price, len(raw))
	for model, r := range raw {
		if strings.TrimSpace(model) == "" {
			return nil, errors.New("a model's name is empty")
		}
		p, err := parsePrice(r)
		if err != nil {
			return nil, fmt.Errorf("model %q: %v", model, err)
		}
		table[model] = p
	}
	return table, nil
}

// parsePrice reads one model's {"input": N, "output": N}.
func parsePrice(r json.RawMessage) (price, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(r, &fields) != nil || fields == nil {
		return price{}, errors.New(`the prices are not an object such as {"input": 0.15, "output": 0.6}`)
	}
	for name := range fields {
		if name != "input" && name != "output" {
			return price{}, fmt.Errorf("unknown field %q (the fields are input and output)", name)
		}
	}
	var p price
	for _, f := range []struct {
		name string
		to   *float64
	}{{"input", &p.Input}, {"output", &p.Output}} {
		v, ok := fields[f.name]
		if !ok {
			return price{}, fmt.Errorf("no %q price", f.name)
		}
		if string(bytes.TrimSpace(v)) == "null" || json.Unmarshal(v, f.to) != nil {
			return price{}, fmt.Errorf("%q is not a number", f.name)
		}
		if *f.to < 0 {
			return price{}, fmt.Errorf("the %q price %s is negative", f.name, v)
		}
	}
	return p, nil
}

// position is the line and column (from 1, in bytes) of the byte before
// offset, where a JSON syntax error was found.
func position(b []byte, offset int64) (line, col int) {
	if offset < 1 {
		offset = 1
	}
	if offset > int64(len(b)) {
		offset = int64(len(b))
	}
	before := b[:offset-1]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// formatCost is a cost in US dollars to the millionth: "$0.026",
// "$12.345679"; a cost that rounds to 0 is "under $0.000001".
func formatCost(c float64) string {
	r := math.Round(c*1e6) / 1e6
	if r == 0 && c > 0 {
		return "under $0.000001"
	}
	return "$" + strconv.FormatFloat(r, 'f', -1, 64)
}

package agent

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaFromJSON reads a hand-written JSON Schema (an MCP tool's input
// schema, a pydantic model's) and keeps its property order: each object
// schema's PropertyOrder is the order its properties have in the text, so
// the generated declarations list them as their author did.
func SchemaFromJSON(text []byte) (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(text, &s); err != nil {
		return nil, fmt.Errorf("agent: schema: %v", err)
	}
	var raw any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := orderedValue(dec, &raw); err != nil {
		return nil, fmt.Errorf("agent: schema: %v", err)
	}
	applyOrder(&s, raw)
	return &s, nil
}

// ordered is a JSON object with its keys in order.
type ordered struct {
	keys   []string
	values map[string]any
}

// orderedValue decodes one JSON value, objects as ordered.
func orderedValue(dec *json.Decoder, out *any) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		o := &ordered{values: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			var v any
			if err := orderedValue(dec, &v); err != nil {
				return err
			}
			if _, dup := o.values[k]; !dup {
				o.keys = append(o.keys, k)
			}
			o.values[k] = v
		}
		_, err = dec.Token()
		*out = o
		return err
	case json.Delim('['):
		var list []any
		for dec.More() {
			var v any
			if err := orderedValue(dec, &v); err != nil {
				return err
			}
			list = append(list, v)
		}
		_, err = dec.Token()
		*out = list
		return err
	default:
		*out = tok
		return nil
	}
}

// applyOrder sets PropertyOrder from the text, for s and the schemas in it.
func applyOrder(s *jsonschema.Schema, raw any) {
	o, ok := raw.(*ordered)
	if s == nil || !ok {
		return
	}
	if props, ok := o.values["properties"].(*ordered); ok && len(s.PropertyOrder) == 0 {
		s.PropertyOrder = append([]string(nil), props.keys...)
		for k, v := range props.values {
			applyOrder(s.Properties[k], v)
		}
	}
	for _, m := range []struct {
		key  string
		defs map[string]*jsonschema.Schema
	}{{"$defs", s.Defs}, {"definitions", s.Definitions}, {"patternProperties", s.PatternProperties}, {"dependentSchemas", s.DependentSchemas}} {
		if d, ok := o.values[m.key].(*ordered); ok {
			for k, v := range d.values {
				applyOrder(m.defs[k], v)
			}
		}
	}
	for key, sub := range map[string]*jsonschema.Schema{
		"items": s.Items, "additionalProperties": s.AdditionalProperties, "not": s.Not,
		"if": s.If, "then": s.Then, "else": s.Else, "contains": s.Contains,
	} {
		applyOrder(sub, o.values[key])
	}
	for key, list := range map[string][]*jsonschema.Schema{
		"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf, "prefixItems": s.PrefixItems,
	} {
		if l, ok := o.values[key].([]any); ok {
			for i := range min(len(l), len(list)) {
				applyOrder(list[i], l[i])
			}
		}
	}
}

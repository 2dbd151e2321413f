package nesting

import "fmt"

// MaxSchemaDepth is the deepest JSON nesting of a tool's schema that
// CheckSchema allows: 128 levels of arrays and objects. Real schemas nest a
// few dozen levels; the readers of deeper ones take time that grows with a
// power of the depth: santhosh-tekuri/jsonschema's compiler with the cube
// (8.5 s at 1,600 levels), jsonschema-go's Schema decoder with the square
// (80 s at 10,000, the JSON decoders' own limit). RATIONALE.md, "Why JSON is
// not scanned for depth, but schemas are".
const MaxSchemaDepth = 128

// CheckSchema reports an error when the JSON text of a schema nests deeper
// than MaxSchemaDepth, or nil. It reads the text once, before any decoder
// does; text that is not JSON is left to the decoder to refuse.
func CheckSchema(text []byte) error {
	if d := JSONDepth(text); d > MaxSchemaDepth {
		return fmt.Errorf("the schema nests %d levels deep, more than %d", d, MaxSchemaDepth)
	}
	return nil
}

// JSONDepth is the deepest nesting of arrays and objects in JSON text;
// brackets inside strings do not count.
func JSONDepth(text []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

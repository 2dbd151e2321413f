package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// Documentation for the model, generated from the tools: Markdown API docs
// (seed 003), TypeScript declarations, and the compact listing of the
// code-mode system prompt (seed 002).

// A Helper documents a sandbox function that is not a tool: the helpers of
// code mode and the functions plugins register.
type Helper struct {
	Name        string
	Signature   string // TypeScript: "parallel(calls: ToolCall[]): unknown[]"
	Description string
	Example     string
	Errors      []string
}

// Helpers are the functions every execution has.
var Helpers = []Helper{
	{Name: "parallel", Signature: "parallel(calls: { tool: string; input?: unknown }[]): unknown[]",
		Description: "Runs tool calls concurrently, by tool ID. Each slot holds the tool's result, or {error} if that call failed; the other calls are unaffected.",
		Example:     "const [a, b] = parallel([\n  { tool: \"weather.get-weather\", input: { latitude: 55.67, longitude: 12.56 } },\n  { tool: \"weather.get-weather\", input: { latitude: 48.85, longitude: 2.35 } },\n]);",
		Errors:      []string{"the argument is not an array of {tool, input} objects (\"parallel() expects an array of {tool, input} objects\")"}},
	{Name: "llm", Signature: "llm(prompt: string): string", Description: "Asks the language model for a text completion.",
		Example: "const summary = llm(\"Summarize: \" + JSON.stringify(data));", Errors: []string{"the model's API fails"}},
	{Name: "llmJson", Signature: "llmJson(prompt: string): unknown", Description: "Asks the language model for a JSON object and parses it; a reply that is not JSON is returned as the raw string.",
		Example: "const facts = llmJson(\"List three facts about Oslo as {facts: string[]}\");", Errors: []string{"the model's API fails"}},
	{Name: "toolSchema", Signature: "toolSchema(toolId: string): object", Description: "Returns the JSON Schema of a tool's input.",
		Example: "toolSchema(\"weather.get-weather\")", Errors: []string{"no tool has the ID (`Tool \"x\" not found`)"}},
	{Name: "complete", Signature: "complete(opts: { response: string; data?: unknown; followUp?: string }): void",
		Description: "Answers the user: outputs the response (and the follow-up after it), keeps data for recall(\"_lastData\"), and ends the turn as done() does.",
		Example:     "complete({ response: \"It is 4°C in Oslo.\", data: weather, followUp: \"Want tomorrow's forecast?\" });"},
	{Name: "output", Signature: "output(...values: unknown[]): void", Description: "Adds a line to the text shown to the user."},
	{Name: "done", Signature: "done(): void", Description: "Marks the task as finished."},
	{Name: "log", Signature: "log(...values: unknown[]): void", Description: "Logs a line, as console.log does."},
	{Name: "store", Signature: "store(key: string, value: unknown): void", Description: "Keeps a JSON value for recall() in this and later executions."},
	{Name: "recall", Signature: "recall(key: string): unknown", Description: "Returns what store() kept under key, or undefined."},
}

// ArtifactHelpers document the functions RegisterArtifacts registers.
var ArtifactHelpers = []Helper{
	{Name: "storeArtifact", Signature: "storeArtifact(data: unknown, description?: string): string",
		Description: "Stores data as an artifact and returns its ID.", Example: "const id = storeArtifact(rows, \"raw rows\");",
		Errors: []string{"the store fails"}},
	{Name: "listArtifacts", Signature: "listArtifacts(): { id: string; type: string; description: string | null; createdAt: string }[]",
		Description: "Lists the stored artifacts, without their data."},
	{Name: "getArtifact", Signature: "getArtifact(id: string): unknown", Description: "Returns the data of an artifact.",
		Errors: []string{"no artifact has the ID"}},
}

// ToolListing is the compact listing of seed 002's code-mode prompt: one
// line per namespace, "**weather**: weatherGetWeather — Get current weather
// | …".
func ToolListing(tools []Tool) string {
	groups := map[string][]string{}
	var order []string
	for _, t := range sortedTools(tools) {
		ns := Namespace(t.ID)
		if _, ok := groups[ns]; !ok {
			order = append(order, ns)
		}
		entry := FunctionName(t.ID)
		if d := firstSentence(t.Description); d != "" {
			entry += " — " + d
		}
		groups[ns] = append(groups[ns], entry)
	}
	var b strings.Builder
	for _, ns := range order {
		fmt.Fprintf(&b, "**%s**: %s\n", ns, strings.Join(groups[ns], " | "))
	}
	return b.String()
}

func sortedTools(tools []Tool) []Tool {
	out := append([]Tool(nil), tools...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// listingWidth bounds a description in the compact listing, in
// characters.
const listingWidth = 120

// firstSentence is the start of a description, for one-line listings: its
// first line, then its first sentence, then at most listingWidth
// characters, cut at a word with "…".
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > listingWidth {
		cut := string(r[:listingWidth])
		if i := strings.LastIndexByte(cut, ' '); i > listingWidth/2 {
			cut = cut[:i]
		}
		s = strings.TrimRight(cut, " ,;:") + "…"
	}
	return s
}

// TypeScriptDeclarations declares every tool and helper of the sandbox, for
// the model: an interface for each tool's input (and output, if it has an
// output schema) from its schemas, descriptions as doc comments.
func TypeScriptDeclarations(tools []Tool, helpers ...Helper) string {
	var b strings.Builder
	b.WriteString("// The functions of the sandbox. Tools and helpers return their values\n// directly; `await` works too.\n")
	for _, t := range sortedTools(tools) {
		b.WriteString("\n")
		writeToolDecl(&b, t)
	}
	for _, h := range helpers {
		b.WriteString("\n")
		writeDoc(&b, "", h.Description)
		fmt.Fprintf(&b, "declare function %s;\n", h.Signature)
	}
	return b.String()
}

func writeToolDecl(b *strings.Builder, t Tool) {
	name := FunctionName(t.ID)
	typeName := strings.ToUpper(name[:1]) + name[1:]
	in := t.InputSchema
	if in == nil {
		in = &jsonschema.Schema{Type: "object"}
	}
	writeTypeDecl(b, typeName+"Input", in)
	out := "unknown"
	if t.OutputSchema != nil {
		b.WriteString("\n")
		writeTypeDecl(b, typeName+"Output", t.OutputSchema)
		out = typeName + "Output"
	}
	b.WriteString("\n")
	writeDoc(b, "", t.Description+"\n\nTool ID: "+t.ID)
	fmt.Fprintf(b, "declare function %s(input: %sInput): %s;\n", name, typeName, out)
}

// writeTypeDecl declares a named type: an interface for an object with
// properties, else a type alias; then a type alias for each definition
// that refers to itself (a tree's node, pydantic's recursive models),
// named after the type and the definition (DemoInputNode), so that the
// recursion has a name the model can read. A first pass finds those
// definitions, so that the second writes each by its name everywhere.
func writeTypeDecl(b *strings.Builder, name string, s *jsonschema.Schema) {
	first := newDeclGen(name, s, nil)
	first.declare(io.Discard, name, s)
	newDeclGen(name, s, first.names).declare(b, name, s)
}

// newDeclGen returns a generator for writeTypeDecl; named holds the
// recursive references a first pass found.
func newDeclGen(name string, s *jsonschema.Schema, named map[string]string) *tsGen {
	g := &tsGen{root: s, active: map[string]bool{}, names: map[string]string{"#": name}, prefix: name, recursive: map[string]bool{}}
	if s.Ref != "" && len(s.AnyOf)+len(s.OneOf)+len(s.AllOf) == 0 {
		// The root is a reference (pydantic's recursive models): the
		// definition is this type.
		g.names[s.Ref] = name
	}
	for ref := range named {
		if _, ok := g.names[ref]; !ok {
			g.recursive[ref] = true
		}
	}
	return g
}

func (g *tsGen) declare(w io.Writer, name string, s *jsonschema.Schema) {
	var b strings.Builder
	writeDoc(&b, "", g.docOf(s))
	switch {
	case isObjectWithProperties(s) && len(s.AnyOf) == 0 && len(s.OneOf) == 0 && len(s.AllOf) == 0 && s.Ref == "":
		fmt.Fprintf(&b, "interface %s %s\n", name, g.object(s, ""))
	case g.names[s.Ref] == name:
		target, _ := g.resolve(s.Ref)
		g.active[s.Ref] = true
		fmt.Fprintf(&b, "type %s = %s;\n", name, g.typ(target, ""))
		delete(g.active, s.Ref)
	default:
		fmt.Fprintf(&b, "type %s = %s;\n", name, g.typ(s, ""))
	}
	for len(g.pending) > 0 {
		ref := g.pending[0]
		g.pending = g.pending[1:]
		target, _ := g.resolve(ref)
		g.active[ref] = true
		b.WriteString("\n")
		writeDoc(&b, "", target.Description)
		fmt.Fprintf(&b, "type %s = %s;\n", g.names[ref], g.typ(target, ""))
		delete(g.active, ref)
	}
	io.WriteString(w, b.String())
}

func isObjectWithProperties(s *jsonschema.Schema) bool {
	return (s.Type == "object" || s.Type == "") && len(s.Properties) > 0
}

// writeDoc writes a doc comment, if there is text.
func writeDoc(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	text = strings.ReplaceAll(text, "*/", "*\\/")
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, lines[0])
		return
	}
	fmt.Fprintf(b, "%s/**\n", indent)
	for _, l := range lines {
		if l = strings.TrimRight(l, " "); l == "" {
			fmt.Fprintf(b, "%s *\n", indent)
		} else {
			fmt.Fprintf(b, "%s * %s\n", indent, l)
		}
	}
	fmt.Fprintf(b, "%s */\n", indent)
}

var tsIdent = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// tsType is the TypeScript type of a schema, written at an indentation,
// inline: a recursive reference is written unknown, with a comment.
func tsType(s *jsonschema.Schema, indent string) string {
	g := &tsGen{root: s, active: map[string]bool{}}
	return g.typ(s, indent)
}

// tsGen writes the TypeScript of one schema: root resolves its local
// $refs, active holds the references being expanded (the cycle guard).
// With names (writeTypeDecl), a reference met again inside its own
// expansion is written as the name of a type alias declared after the
// type (pending holds those still to declare); without, as unknown.
type tsGen struct {
	root      *jsonschema.Schema
	active    map[string]bool
	depth     int // how deep typ is in the schema, bounded by maxTypeDepth
	nodes     int // how many schemas typ has written, bounded by maxTypeNodes
	names     map[string]string
	prefix    string
	pending   []string
	recursive map[string]bool // references to write by name from the start
}

// maxTypeDepth bounds how deeply typ writes a schema: a part nested deeper
// is written unknown. Schemas can come from elsewhere (an upstream MCP
// server's tools), and an object type indents each level, so the text of a
// schema nested thousands of levels deep would grow with the cube of its
// depth.
const maxTypeDepth = 32

// maxTypeNodes bounds how many schemas one type expands: past it, the
// rest is written unknown. A definition that refers twice to one that
// refers twice to another, and so on, expands to 2^depth copies; a
// schema from elsewhere could make a declaration of gigabytes.
const maxTypeNodes = 10000

// maxRefDepth bounds how deep references expand, cycles aside.
const maxRefDepth = 32

// resolve finds a local reference: #, #/$defs/X, #/definitions/X.
func (g *tsGen) resolve(ref string) (*jsonschema.Schema, string) {
	if ref == "#" {
		return g.root, "root"
	}
	for _, p := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, p); ok {
			if d := g.root.Defs[name]; d != nil {
				return d, name
			}
			if d := g.root.Definitions[name]; d != nil {
				return d, name
			}
		}
	}
	return nil, ""
}

// nameOf is the name of the type alias of a recursive reference, which
// writeTypeDecl declares after the type.
func (g *tsGen) nameOf(ref, def string) string {
	if n, ok := g.names[ref]; ok {
		return n
	}
	n := g.prefix + pascal(def)
	for taken := true; taken; {
		taken = false
		for _, other := range g.names {
			if other == n {
				n += "_"
				taken = true
				break
			}
		}
	}
	g.names[ref] = n
	g.pending = append(g.pending, ref)
	return n
}

// pascal makes a definition's name part of a TypeScript identifier.
func pascal(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r):
			if up {
				r = unicode.ToUpper(r)
			}
			b.WriteRune(r)
			up = false
		default:
			up = true
		}
	}
	return b.String()
}

// isFalse reports whether a schema is false, which nothing fits.
func isFalse(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.DeepEqual(*s.Not, jsonschema.Schema{}) &&
		reflect.DeepEqual(*s, jsonschema.Schema{Not: s.Not})
}

func (g *tsGen) typ(s *jsonschema.Schema, indent string) string {
	if s == nil || g.depth > maxTypeDepth || g.nodes >= maxTypeNodes {
		return "unknown"
	}
	if isFalse(s) {
		return "never"
	}
	g.nodes++
	g.depth++
	defer func() { g.depth-- }()
	t := g.typeOf(s, indent)
	// OpenAPI 3.0's nullable, which tools converted from OpenAPI carry.
	if n, _ := s.Extra["nullable"].(bool); n && t != "unknown" && t != "never" && t != "null" && !strings.HasSuffix(t, " | null") {
		t += " | null"
	}
	return t
}

func (g *tsGen) typeOf(s *jsonschema.Schema, indent string) string {
	if s.Ref != "" {
		target, name := g.resolve(s.Ref)
		if target == nil {
			return "unknown"
		}
		if g.names != nil && s.Ref == "#" {
			return g.names["#"]
		}
		if g.names != nil && (g.active[s.Ref] || g.recursive[s.Ref] || g.names[s.Ref] != "") {
			return g.nameOf(s.Ref, name)
		}
		if g.active[s.Ref] || len(g.active) >= maxRefDepth {
			return "unknown /* " + name + ", recursive */"
		}
		g.active[s.Ref] = true
		defer delete(g.active, s.Ref)
		return g.typ(target, indent)
	}
	var t string
	switch {
	case s.Const != nil:
		t = literal(*s.Const)
	case s.Enum != nil && len(s.Enum) == 0:
		t = "never"
	case len(s.Enum) > 0:
		parts := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			parts[i] = literal(v)
		}
		t = strings.Join(parts, " | ")
	case len(s.AnyOf)+len(s.OneOf) > 0:
		alts := append(append([]*jsonschema.Schema{}, s.AnyOf...), s.OneOf...)
		parts := make([]string, len(alts))
		for i, a := range alts {
			parts[i] = g.typ(a, indent)
		}
		t = strings.Join(parts, " | ")
	default:
		t = g.base(s, indent)
	}
	if len(s.AllOf) == 0 {
		return t
	}
	parts := []string{}
	if t != "unknown" {
		parts = append(parts, paren(t))
	}
	for _, a := range s.AllOf {
		parts = append(parts, g.typ(a, indent))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	for i := range parts {
		parts[i] = paren(parts[i])
	}
	return strings.Join(parts, " & ")
}

// paren puts a union in parentheses, for an intersection or an array.
func paren(t string) string {
	if strings.Contains(t, " | ") && !strings.HasPrefix(t, "{") {
		return "(" + t + ")"
	}
	return t
}

// base is the type of a schema's type keyword(s).
func (g *tsGen) base(s *jsonschema.Schema, indent string) string {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		switch {
		case len(s.Properties) > 0:
			types = []string{"object"}
		case len(s.PrefixItems) > 0 || s.Items != nil || len(s.ItemsArray) > 0:
			types = []string{"array"}
		default:
			return "unknown"
		}
	}
	parts := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "string":
			parts[i] = "string"
		case "number", "integer":
			parts[i] = "number"
		case "boolean":
			parts[i] = "boolean"
		case "null":
			parts[i] = "null"
		case "array":
			parts[i] = g.array(s, indent)
		case "object":
			parts[i] = g.object(s, indent)
		default:
			parts[i] = "unknown"
		}
	}
	return strings.Join(parts, " | ")
}

// array is an array type, or a tuple for prefixItems (or draft-07's items
// array): closed when the rest (items, or additionalItems) is false or
// maxItems allows no more elements, else with the rest as its last
// element; the elements past minItems, when it is given, are optional.
func (g *tsGen) array(s *jsonschema.Schema, indent string) string {
	prefix, rest := s.PrefixItems, s.Items
	if len(prefix) == 0 && len(s.ItemsArray) > 0 {
		prefix, rest = s.ItemsArray, s.AdditionalItems
	}
	if len(prefix) == 0 {
		return paren(g.typ(rest, indent)) + "[]"
	}
	parts := make([]string, 0, len(prefix)+1)
	for i, p := range prefix {
		t := g.typ(p, indent)
		if s.MinItems != nil && i >= *s.MinItems {
			t = paren(t) + "?"
		}
		parts = append(parts, t)
	}
	closed := isFalse(rest) || (s.MaxItems != nil && *s.MaxItems <= len(prefix))
	if !closed {
		parts = append(parts, "..."+paren(g.typ(rest, indent))+"[]")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// object is an object type literal: its properties, each with its doc
// comment, optional unless required, and an index signature for its
// additional properties; or a record of its additional properties.
func (g *tsGen) object(s *jsonschema.Schema, indent string) string {
	ap := s.AdditionalProperties
	if len(s.Properties) == 0 {
		if ap != nil && !isFalse(ap) {
			return "Record<string, " + g.typ(ap, indent) + ">"
		}
		if isFalse(ap) {
			return "Record<string, never>"
		}
		return "Record<string, unknown>"
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := propertyOrder(s)
	var b strings.Builder
	b.WriteString("{\n")
	inner := indent + "  "
	var types []string
	optional := false
	for _, n := range names {
		p := s.Properties[n]
		writeDoc(&b, inner, g.schemaDoc(p))
		key := n
		if !tsIdent.MatchString(n) {
			key = literal(n)
		}
		opt := "?"
		if required[n] {
			opt = ""
		} else {
			optional = true
		}
		t := g.typ(p, inner)
		types = append(types, t)
		fmt.Fprintf(&b, "%s%s%s: %s;\n", inner, key, opt, t)
	}
	if ap != nil && !isFalse(ap) {
		// Every property must fit the index signature: it has the
		// additional properties' type when the named ones all have it,
		// else it is unknown and a comment gives the type.
		// An optional property is undefined when absent, which the
		// index signature must then allow (under strictNullChecks).
		at := g.typ(ap, inner)
		fits := true
		for _, t := range types {
			fits = fits && t == at
		}
		switch {
		case at == "unknown":
			fmt.Fprintf(&b, "%s[key: string]: unknown;\n", inner)
		case fits && optional:
			fmt.Fprintf(&b, "%s[key: string]: %s | undefined;\n", inner, at)
		case fits:
			fmt.Fprintf(&b, "%s[key: string]: %s;\n", inner, at)
		default:
			fmt.Fprintf(&b, "%s[key: string]: unknown; // more properties: %s\n", inner, strings.ReplaceAll(at, "\n", " "))
		}
	}
	b.WriteString(indent + "}")
	return b.String()
}

// docOf is a schema's description, or, for a reference without one (a
// property whose type is a pydantic model, Optional or not), the
// description of the definition it refers to.
func (g *tsGen) docOf(p *jsonschema.Schema) string {
	if d := strings.TrimSpace(p.Description); d != "" {
		return d
	}
	ref := p.Ref
	if ref == "" {
		var refs []string
		for _, list := range [][]*jsonschema.Schema{p.AnyOf, p.OneOf, p.AllOf} {
			for _, a := range list {
				switch {
				case a.Ref != "":
					refs = append(refs, a.Ref)
				case a.Type != "null":
					return ""
				}
			}
		}
		if len(refs) != 1 {
			return ""
		}
		ref = refs[0]
	}
	if ref == "#" {
		return ""
	}
	if target, _ := g.resolve(ref); target != nil {
		return strings.TrimSpace(target.Description)
	}
	return ""
}

// schemaDoc is a property's doc comment: its description (or its
// definition's), then its format, default, bounds and pattern, as JSDoc
// tags.
func (g *tsGen) schemaDoc(p *jsonschema.Schema) string {
	if p == nil {
		return ""
	}
	lines := []string{}
	if d := g.docOf(p); d != "" {
		lines = append(lines, d)
	}
	tag := func(name string, v any) { lines = append(lines, fmt.Sprintf("@%s %v", name, v)) }
	if p.Format != "" {
		tag("format", p.Format)
	}
	if len(p.Default) > 0 {
		tag("default", string(p.Default))
	}
	num := func(name string, v *float64) {
		if v != nil {
			tag(name, strconv.FormatFloat(*v, 'g', -1, 64))
		}
	}
	num("minimum", p.Minimum)
	num("exclusiveMinimum", p.ExclusiveMinimum)
	num("maximum", p.Maximum)
	num("exclusiveMaximum", p.ExclusiveMaximum)
	count := func(name string, v *int) {
		if v != nil {
			tag(name, *v)
		}
	}
	count("minLength", p.MinLength)
	count("maxLength", p.MaxLength)
	// A tuple's type says how many elements it has, unless the bounds
	// say more than its elements do.
	tuple := len(p.PrefixItems)
	if tuple == 0 {
		tuple = len(p.ItemsArray)
	}
	if tuple == 0 || p.MinItems == nil || *p.MinItems > tuple {
		count("minItems", p.MinItems)
	}
	if tuple == 0 || p.MaxItems == nil || *p.MaxItems != tuple {
		count("maxItems", p.MaxItems)
	}
	if p.Pattern != "" {
		tag("pattern", p.Pattern)
	}
	return strings.Join(lines, "\n")
}

// propertyOrder is the schema's property order if it has one (inferred
// schemas keep the struct's), else alphabetical.
func propertyOrder(s *jsonschema.Schema) []string {
	seen := map[string]bool{}
	var names []string
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !seen[n] {
			names = append(names, n)
			seen[n] = true
		}
	}
	var rest []string
	for n := range s.Properties {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// literal is a JSON value as a TypeScript literal type: JSON, without
// encoding/json's escapes of <, > and & (which a model would read as
// written).
func literal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "unknown"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// MarkdownDocs is the API documentation of the sandbox's functions for the
// model, as seed 003 writes it: per function its signature, JSON Schema,
// example and errors, grouped by namespace; helpers after the tools.
func MarkdownDocs(tools []Tool, helpers ...Helper) string {
	var b strings.Builder
	b.WriteString("# Available JavaScript APIs\n")
	var lastNS string
	for _, t := range sortedTools(tools) {
		if ns := Namespace(t.ID); ns != lastNS {
			fmt.Fprintf(&b, "\n## %s\n", ns)
			lastNS = ns
		}
		writeToolMarkdown(&b, t)
	}
	if len(helpers) > 0 {
		b.WriteString("\n## Helpers\n")
		for _, h := range helpers {
			fmt.Fprintf(&b, "\n### %s\n\n%s\n\n**Signature:**\n```typescript\nfunction %s\n```\n", h.Name, h.Description, h.Signature)
			if h.Example != "" {
				fmt.Fprintf(&b, "\n**Example:**\n```javascript\n%s\n```\n", h.Example)
			}
			writeErrors(&b, h.Errors)
		}
	}
	return b.String()
}

func writeToolMarkdown(b *strings.Builder, t Tool) {
	name := FunctionName(t.ID)
	fmt.Fprintf(b, "\n### %s(input)\n\n", name)
	if d := strings.TrimSpace(t.Description); d != "" {
		fmt.Fprintf(b, "%s\n\n", d)
	}
	fmt.Fprintf(b, "Tool ID: `%s`\n\n", t.ID)
	var decl strings.Builder
	writeToolDecl(&decl, t)
	fmt.Fprintf(b, "**Signature:**\n```typescript\n%s```\n", decl.String())
	in := t.InputSchema
	if in == nil {
		in = &jsonschema.Schema{Type: "object"}
	}
	fmt.Fprintf(b, "\n**JSON Schema (input):**\n```json\n%s\n```\n", indentJSON(in))
	if t.OutputSchema != nil {
		fmt.Fprintf(b, "\n**JSON Schema (result):**\n```json\n%s\n```\n", indentJSON(t.OutputSchema))
	}
	if len(t.Examples) > 0 {
		b.WriteString("\n**Example:**\n```javascript\n")
		for i, ex := range t.Examples {
			if i > 0 {
				b.WriteString("\n")
			}
			if ex.Description != "" {
				fmt.Fprintf(b, "// %s\n", ex.Description)
			}
			fmt.Fprintf(b, "const result = %s(%s);\n", name, compactJSON(ex.Input))
			if ex.Output != nil {
				fmt.Fprintf(b, "// → %s\n", compactJSON(ex.Output))
			}
		}
		b.WriteString("```\n")
	}
	writeErrors(b, t.Errors)
}

func writeErrors(b *strings.Builder, errs []string) {
	if len(errs) == 0 {
		return
	}
	b.WriteString("\n**Errors:** throws an Error if ")
	b.WriteString(strings.Join(errs, "; if "))
	b.WriteString(".\n")
}

func indentJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "{}"
	}
	return string(b)
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "undefined"
	}
	return string(b)
}

// A FunctionDoc describes a function for NamespaceDeclarations.
type FunctionDoc struct {
	Name        string
	Description string
	// Input is the schema of the one input object; nil means any object.
	Input *jsonschema.Schema
	// Output is the schema of the result; if nil, Returns names its type
	// ("" means unknown).
	Output  *jsonschema.Schema
	Returns string
	// Async functions return a Promise of the result.
	Async bool
}

// NamespaceDeclarations declares functions as members of a namespace, for
// functions bridged as an object (github.createIssue):
//
//	declare namespace github {
//	  /** Create an issue */
//	  function createIssue(input: { title: string; body?: string }): Promise<{ number: number }>;
//	}
func NamespaceDeclarations(ns string, fns []FunctionDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "declare namespace %s {\n", ns)
	for i, f := range fns {
		if i > 0 {
			b.WriteString("\n")
		}
		writeDoc(&b, "  ", f.Description)
		in := f.Input
		if in == nil {
			in = &jsonschema.Schema{Type: "object"}
		}
		out := f.Returns
		if f.Output != nil {
			out = tsType(f.Output, "  ")
		}
		if out == "" {
			out = "unknown"
		}
		if f.Async {
			out = "Promise<" + out + ">"
		}
		fmt.Fprintf(&b, "  function %s(input: %s): %s;\n", f.Name, tsType(in, "  "), out)
	}
	b.WriteString("}\n")
	return b.String()
}

package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

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
// properties, else a type alias.
func writeTypeDecl(b *strings.Builder, name string, s *jsonschema.Schema) {
	if isObjectWithProperties(s) && len(s.AnyOf) == 0 && len(s.OneOf) == 0 && len(s.AllOf) == 0 && s.Ref == "" {
		writeDoc(b, "", s.Description)
		g := &tsGen{root: s, active: map[string]bool{}}
		fmt.Fprintf(b, "interface %s %s\n", name, g.object(s, ""))
		return
	}
	writeDoc(b, "", s.Description)
	fmt.Fprintf(b, "type %s = %s;\n", name, tsType(s, ""))
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

// tsType is the TypeScript type of a schema, written at an indentation.
func tsType(s *jsonschema.Schema, indent string) string {
	g := &tsGen{root: s, active: map[string]bool{}}
	return g.typ(s, indent)
}

// tsGen writes the TypeScript of one schema: root resolves its local
// $refs, active holds the references being expanded (the cycle guard).
type tsGen struct {
	root   *jsonschema.Schema
	active map[string]bool
	depth  int // how deep typ is in the schema, bounded by maxTypeDepth
}

// maxTypeDepth bounds how deeply typ writes a schema: a part nested deeper
// is written unknown. Schemas can come from elsewhere (an upstream MCP
// server's tools), and an object type indents each level, so the text of a
// schema nested thousands of levels deep would grow with the cube of its
// depth.
const maxTypeDepth = 32

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

func (g *tsGen) typ(s *jsonschema.Schema, indent string) string {
	if s == nil || g.depth > maxTypeDepth {
		return "unknown"
	}
	g.depth++
	defer func() { g.depth-- }()
	if s.Ref != "" {
		target, name := g.resolve(s.Ref)
		if target == nil {
			return "unknown"
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
		case len(s.PrefixItems) > 0 || s.Items != nil:
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

// array is an array type, or a tuple for prefixItems (closed when items is
// false, else with the rest as items).
func (g *tsGen) array(s *jsonschema.Schema, indent string) string {
	if len(s.PrefixItems) == 0 {
		return paren(g.typ(s.Items, indent)) + "[]"
	}
	parts := make([]string, 0, len(s.PrefixItems)+1)
	for _, p := range s.PrefixItems {
		parts = append(parts, g.typ(p, indent))
	}
	if s.Items == nil || s.Items.Not == nil {
		parts = append(parts, "..."+paren(g.typ(s.Items, indent))+"[]")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// object is an object type literal: its properties, each with its doc
// comment, optional unless required, and an index signature for its
// additional properties; or a record of its additional properties.
func (g *tsGen) object(s *jsonschema.Schema, indent string) string {
	ap := s.AdditionalProperties
	if len(s.Properties) == 0 {
		if ap != nil && ap.Not == nil {
			return "Record<string, " + g.typ(ap, indent) + ">"
		}
		if ap != nil && ap.Not != nil {
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
	for _, n := range names {
		p := s.Properties[n]
		writeDoc(&b, inner, schemaDoc(p))
		key := n
		if !tsIdent.MatchString(n) {
			key = strconvQuote(n)
		}
		opt := "?"
		if required[n] {
			opt = ""
		}
		fmt.Fprintf(&b, "%s%s%s: %s;\n", inner, key, opt, g.typ(p, inner))
	}
	if ap != nil && ap.Not == nil {
		// Every property must fit the index signature, so it is unknown
		// unless the named ones are all of its type.
		fmt.Fprintf(&b, "%s[key: string]: unknown; // more properties: %s\n", inner, strings.ReplaceAll(g.typ(ap, inner), "\n", " "))
	}
	b.WriteString(indent + "}")
	return b.String()
}

// schemaDoc is a property's doc comment: its description, then its
// format, default, bounds and pattern, as JSDoc tags.
func schemaDoc(p *jsonschema.Schema) string {
	if p == nil {
		return ""
	}
	lines := []string{}
	if d := strings.TrimSpace(p.Description); d != "" {
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
	count("minItems", p.MinItems)
	count("maxItems", p.MaxItems)
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

func literal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unknown"
	}
	return string(b)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
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

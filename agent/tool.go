package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/jsonschema-go/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/nesting"
)

// A Tool is a capability the model's code can call: in the sandbox as a
// camelCase function (weather.get-weather is weatherGetWeather), through
// parallel(), and in classic tool calling by its ID.
type Tool struct {
	// ID is the tool's name, namespaced by a dot: "weather.get-weather".
	// Each dot-separated part is letters, digits, '-' and '_', starting
	// with a letter: "github.getUser" is one too. The part before the first dot groups the
	// tool in listings.
	ID string
	// Description says what the tool does, for the model.
	Description string
	// InputSchema is the JSON Schema of the tool's input, checked before
	// the handler runs. Nil means any JSON object.
	InputSchema *jsonschema.Schema
	// OutputSchema, if set, documents the result (it is not enforced).
	OutputSchema *jsonschema.Schema
	// Examples show calls of the tool in the generated documentation.
	Examples []Example
	// Errors lists, for the documentation, when the tool fails.
	Errors []string
	// Handler runs the tool. Its input is JSON text that satisfies
	// InputSchema; its result crosses back as JSON (encoding/json rules).
	// An error's message is what the model's code sees thrown.
	Handler func(ctx context.Context, input json.RawMessage) (any, error)
}

// An Example is one documented call of a tool.
type Example struct {
	Description string
	Input       any
	Output      any
}

// NewTool makes a tool from a typed Go function: the input schema is
// inferred from In (a struct's json tags name its properties, fields
// without omitempty are required, a jsonschema tag describes a field) and
// the output schema from Out; the input is decoded into In after it has
// passed the schema. NewTool panics if In or Out has no JSON Schema (a
// channel, a function, a map with non-string keys): a programming error.
func NewTool[In, Out any](id, description string, fn func(ctx context.Context, in In) (Out, error)) Tool {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("agent.NewTool %s: input type: %v", id, err))
	}
	var out *jsonschema.Schema
	if reflect.TypeFor[Out]() != reflect.TypeFor[any]() {
		if out, err = jsonschema.For[Out](nil); err != nil {
			panic(fmt.Sprintf("agent.NewTool %s: output type: %v", id, err))
		}
	}
	return Tool{
		ID:           id,
		Description:  description,
		InputSchema:  in,
		OutputSchema: out,
		Handler: func(ctx context.Context, input json.RawMessage) (any, error) {
			var v In
			if err := jsonv2.Unmarshal(input, &v, v1Decoding); err != nil {
				return nil, fmt.Errorf("invalid input: %v", err)
			}
			return fn(ctx, v)
		},
	}
}

// v1Decoding decodes a typed tool's input by encoding/json's rules
// (case-insensitive field names, for one) with the implementation of
// encoding/json/v2, which decodes a small struct twice as fast.
var v1Decoding = jsonv1.DefaultOptionsV1()

var idPart = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// checkID reports whether id is a valid tool ID.
func checkID(id string) error {
	for _, p := range strings.Split(id, ".") {
		if !idPart.MatchString(p) {
			return fmt.Errorf("agent: tool ID %q: each dot-separated part must be letters, digits, '-' or '_', starting with a letter", id)
		}
	}
	return nil
}

// FunctionName is the name of a tool in the sandbox, or of anything named
// outside it: camelCase across '.', '-', '_' and the other characters a
// JavaScript name cannot hold (weather.get-weather → weatherGetWeather,
// create_issue → createIssue), '_' before a leading digit, and '_' after a
// reserved word (delete → delete_).
func FunctionName(id string) string {
	var b strings.Builder
	upper := false
	for _, r := range id {
		switch {
		case r == '$' || r == '_' && b.Len() == 0 || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if upper && b.Len() > 0 {
				r = unicode.ToUpper(r)
			}
			if b.Len() == 0 && unicode.IsDigit(r) {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			upper = false
		default:
			upper = true
		}
	}
	name := b.String()
	if name == "" {
		return "_"
	}
	if !airlock.IsIdentifier(name) {
		return name + "_"
	}
	return name
}

// Namespace is the group of a tool ID: the part before the first dot.
func Namespace(id string) string {
	ns, _, _ := strings.Cut(id, ".")
	return ns
}

// A Toolbox is a set of tools, ready to be called: IDs and function names
// checked, schemas resolved. It is safe for concurrent use.
type Toolbox struct {
	mu     sync.RWMutex
	tools  map[string]*entry
	byName map[string]*entry
}

type entry struct {
	tool   Tool
	name   string
	input  *validator.Schema // the input schema, compiled
	schema json.RawMessage   // the input schema as JSON, for toolSchema()
}

// NewToolbox checks the tools and returns a toolbox holding them.
func NewToolbox(tools ...Tool) (*Toolbox, error) {
	tb := &Toolbox{tools: map[string]*entry{}, byName: map[string]*entry{}}
	return tb, tb.Add(tools...)
}

// Add adds tools. A tool whose ID or function name is taken, whose ID is
// malformed, which has no handler, or whose schema does not resolve is an
// error, and then none of the tools is added.
func (tb *Toolbox) Add(tools ...Tool) error {
	entries := make([]*entry, 0, len(tools))
	for _, t := range tools {
		e, err := newEntry(t)
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	seen := map[string]string{}
	for _, e := range entries {
		if _, dup := tb.tools[e.tool.ID]; dup {
			return fmt.Errorf("agent: tool %q is already in the toolbox", e.tool.ID)
		}
		if o, dup := tb.byName[e.name]; dup {
			return fmt.Errorf("agent: tools %q and %q have the same function name %s", o.tool.ID, e.tool.ID, e.name)
		}
		if o, dup := seen[e.name]; dup {
			return fmt.Errorf("agent: tools %q and %q have the same function name %s", o, e.tool.ID, e.name)
		}
		seen[e.name] = e.tool.ID
	}
	for _, e := range entries {
		tb.tools[e.tool.ID] = e
		tb.byName[e.name] = e
	}
	return nil
}

func newEntry(t Tool) (*entry, error) {
	if err := checkID(t.ID); err != nil {
		return nil, err
	}
	if t.Handler == nil {
		return nil, fmt.Errorf("agent: tool %q has no handler", t.ID)
	}
	name := FunctionName(t.ID)
	if reservedName(name) {
		return nil, fmt.Errorf("agent: tool %q: its function name %s is taken by a sandbox helper", t.ID, name)
	}
	schema := t.InputSchema
	if schema == nil {
		schema = &jsonschema.Schema{Type: "object"}
	}
	text, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("agent: tool %q: input schema: %v", t.ID, err)
	}
	input, err := compileSchema(text)
	if err != nil {
		return nil, fmt.Errorf("agent: tool %q: input schema: %v", t.ID, err)
	}
	return &entry{tool: t, name: name, input: input, schema: text}, nil
}

// schemaURL names a tool's schema inside its compiler.
const schemaURL = "urn:airlock:input-schema"

// compileSchema compiles the JSON text of a schema (draft 2020-12 unless
// it says otherwise). A $ref may point only inside the schema: nothing is
// loaded from files or the network. Schemas are written with
// github.com/google/jsonschema-go, the type of the MCP SDK's tools, and
// checked with github.com/santhosh-tekuri/jsonschema: 0.9 µs for a small
// object against 2 µs, which was most of a tool call (BENCHMARKS.md).
func compileSchema(text []byte) (*validator.Schema, error) {
	if err := nesting.CheckSchema(text); err != nil {
		return nil, err
	}
	doc, err := validator.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	var se *validator.SchemaValidationError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("not a valid JSON Schema: %v", schemaViolation(se.Err))
	}
	return sch, err
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("a schema may not refer to %s: only references inside it are followed", url)
}

// schemaViolation says what is wrong with an input: each failed rule, at
// its place in the input.
func schemaViolation(err error) error {
	var ve *validator.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if u.InstanceLocation != "" {
			msg = "at " + u.InstanceLocation + ": " + msg
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return err
	}
	return errors.New(strings.Join(msgs, "; "))
}

// Tools returns the tools, sorted by ID.
func (tb *Toolbox) Tools() []Tool {
	if tb == nil {
		return nil
	}
	tb.mu.RLock()
	defer tb.mu.RUnlock()
	out := make([]Tool, 0, len(tb.tools))
	for _, e := range tb.tools {
		out = append(out, e.tool)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Tool returns the tool of an ID.
func (tb *Toolbox) Tool(id string) (Tool, bool) {
	e := tb.lookup(id)
	if e == nil {
		return Tool{}, false
	}
	return e.tool, true
}

// lookup finds a tool by ID, or by function name.
func (tb *Toolbox) lookup(id string) *entry {
	if tb == nil {
		return nil
	}
	tb.mu.RLock()
	defer tb.mu.RUnlock()
	if e, ok := tb.tools[id]; ok {
		return e
	}
	return tb.byName[id]
}

// ErrToolNotFound is the error of a call of a tool the toolbox lacks.
var ErrToolNotFound = errors.New("tool not found")

type notFoundError struct{ id string }

func (e notFoundError) Error() string        { return fmt.Sprintf("Tool %q not found", e.id) }
func (e notFoundError) Is(target error) bool { return target == ErrToolNotFound }

func notFound(id string) error { return notFoundError{id} }

// A SchemaError is the error of a call whose input the tool's schema
// rejects. Its message tells the model what to fix.
type SchemaError struct {
	Tool string
	Err  error
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("invalid input for tool %q: %v (toolSchema(%q) returns its input schema)", e.Tool, e.Err, e.Tool)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// Call runs a tool by ID (or function name) with JSON input: the input is
// checked against the tool's schema, then the handler runs and its result
// is encoded as JSON. Empty input is an empty object.
func (tb *Toolbox) Call(ctx context.Context, id string, input json.RawMessage) (json.RawMessage, error) {
	e := tb.lookup(id)
	if e == nil {
		return nil, notFound(id)
	}
	return e.call(ctx, input)
}

func (e *entry) call(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return nil, &SchemaError{Tool: e.tool.ID, Err: fmt.Errorf("the input is not JSON: %v", err)}
	}
	return e.callDecoded(ctx, input, v)
}

// callArgs calls the tool with the first element of the JSON text of an
// argument list, as the sandbox's functions give it.
func (e *entry) callArgs(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	// The usual call has one argument: its text is the list's without the
	// brackets (a list of more is no JSON without them).
	if n := len(args); n > 2 && args[0] == '[' && args[n-1] == ']' {
		input := args[1 : n-1]
		var v any
		if json.Unmarshal(input, &v) == nil {
			if v == nil {
				return e.call(ctx, nil)
			}
			return e.callDecoded(ctx, input, v)
		}
	}
	// No argument, or more than one: the first is the input.
	input := firstArg(args)
	var v any
	if input == nil || json.Unmarshal(input, &v) != nil || v == nil {
		return e.call(ctx, nil)
	}
	return e.callDecoded(ctx, input, v)
}

func (e *entry) callDecoded(ctx context.Context, input json.RawMessage, v any) (json.RawMessage, error) {
	if err := e.input.Validate(v); err != nil {
		return nil, &SchemaError{Tool: e.tool.ID, Err: schemaViolation(err)}
	}
	out, err := runHandler(ctx, e.tool, input)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tool %q returned a value that cannot be JSON: %v", e.tool.ID, err)
	}
	return b, nil
}

// runHandler calls a handler; a panic is an error that tells nothing of it.
func runHandler(ctx context.Context, t Tool, input json.RawMessage) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("tool %q failed", t.ID)
		}
	}()
	return t.Handler(ctx, input)
}

package agent

import (
	_ "embed"
	"fmt"
	"strings"
	"text/template"
)

// CodeAgentPromptTemplate is the system prompt of a JavaScript code agent
// that runs its steps on an [airlock.Executor] (seed 001, Appendix D §14.2),
// as a text/template. Its fields are the placeholders of the prompt's
// contract: code_block_opening_tag, code_block_closing_tag, tools_prompt,
// authorized_imports and custom_instructions (the block with it is left out
// when it is empty), and examples (likewise).
//
//go:embed prompt_codeagent.tmpl
var CodeAgentPromptTemplate string

// CodeAgentExamples are the worked examples of the code agent's prompt,
// Appendix D §14.3 of seed 001, as a text/template with the code block
// delimiters as its fields (code_block_opening_tag,
// code_block_closing_tag). Their tools are notional, and the prompt says
// so.
//
//go:embed prompt_codeagent_examples.tmpl
var CodeAgentExamples string

var (
	codeAgentPrompt   = template.Must(template.New("codeagent").Option("missingkey=error").Parse(CodeAgentPromptTemplate))
	codeAgentExamples = template.Must(template.New("examples").Option("missingkey=error").Parse(CodeAgentExamples))
)

// ToolDoc describes a function for the code agent's system prompt, with
// positional parameters. CodeAgent describes each tool as one function of
// one input object, typed from its schema.
type ToolDoc struct {
	Name        string
	Description string
	Params      []ToolParam
	// Returns is the type of the result, "any" when empty.
	Returns string
	// Async tools are listed as returning a Promise.
	Async bool
}

// ToolParam is one parameter of a tool.
type ToolParam struct {
	Name, Type, Description string
	Optional                bool
}

// CodeAgentPromptOptions fill the code agent's system prompt.
type CodeAgentPromptOptions struct {
	// The code block delimiters; "```js" and "```" by default.
	CodeBlockOpeningTag, CodeBlockClosingTag string
	// Tools are declared in the prompt, final_answer after them.
	Tools []ToolDoc
	// AuthorizedImports are the modules code may import; none means the
	// prompt forbids imports.
	AuthorizedImports []string
	// CustomInstructions are added before "Now Begin!".
	CustomInstructions string
	// NoExamples leaves out the worked examples (CodeAgentExamples),
	// which the prompt has by default.
	NoExamples bool
}

// RenderCodeAgentPrompt renders the system prompt of a JavaScript code
// agent for its tools: Appendix D's text with its examples and the tools'
// declarations. final_answer is always listed.
func RenderCodeAgentPrompt(o CodeAgentPromptOptions) (string, error) {
	if o.CodeBlockOpeningTag == "" {
		o.CodeBlockOpeningTag = "```js"
	}
	if o.CodeBlockClosingTag == "" {
		o.CodeBlockClosingTag = "```"
	}
	imports := "no module (imports are not allowed)"
	if len(o.AuthorizedImports) > 0 {
		q := make([]string, len(o.AuthorizedImports))
		for i, s := range o.AuthorizedImports {
			q[i] = fmt.Sprintf("%q", s)
		}
		imports = strings.Join(q, ", ")
	}
	vals := map[string]string{
		"code_block_opening_tag": o.CodeBlockOpeningTag,
		"code_block_closing_tag": o.CodeBlockClosingTag,
	}
	var examples strings.Builder
	if !o.NoExamples {
		if err := codeAgentExamples.Execute(&examples, vals); err != nil {
			return "", err
		}
	}
	vals["examples"] = strings.TrimSpace(examples.String())
	vals["tools_prompt"] = ToolsPrompt(o.Tools)
	vals["authorized_imports"] = imports
	vals["custom_instructions"] = o.CustomInstructions
	var b strings.Builder
	err := codeAgentPrompt.Execute(&b, vals)
	return b.String(), err
}

// finalAnswerDoc is the tool every code agent has.
var finalAnswerDoc = ToolDoc{
	Name:        "final_answer",
	Description: "Ends the task with its answer. The only valid way to finish.",
	Params:      []ToolParam{{Name: "value", Type: "any", Description: "the final answer"}},
	Returns:     "never",
}

// ToolsPrompt lists tools as TypeScript-style declarations with their
// descriptions, final_answer last.
func ToolsPrompt(tools []ToolDoc) string {
	var b strings.Builder
	for i, t := range append(tools[:len(tools):len(tools)], finalAnswerDoc) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("/**\n")
		for _, line := range strings.Split(strings.TrimSpace(t.Description), "\n") {
			fmt.Fprintf(&b, " * %s\n", line)
		}
		for _, p := range t.Params {
			if p.Description != "" {
				fmt.Fprintf(&b, " * @param %s %s\n", p.Name, p.Description)
			}
		}
		b.WriteString(" */\n")
		params := make([]string, len(t.Params))
		for j, p := range t.Params {
			typ := p.Type
			if typ == "" {
				typ = "any"
			}
			opt := ""
			if p.Optional {
				opt = "?"
			}
			params[j] = p.Name + opt + ": " + typ
		}
		ret := t.Returns
		if ret == "" {
			ret = "any"
		}
		prefix := "function"
		if t.Async {
			prefix = "async function"
			ret = "Promise<" + ret + ">"
		}
		fmt.Fprintf(&b, "%s %s(%s): %s;\n", prefix, t.Name, strings.Join(params, ", "), ret)
	}
	return strings.TrimRight(b.String(), "\n")
}

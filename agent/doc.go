// Package agent turns the sandbox into what an agent framework plugs in:
// tools that model-written code calls, the helpers of "code mode", the
// documentation a model reads, and the run-code tool a classic
// tool-calling model uses.
//
// # Tools
//
// A Tool has a namespaced ID (weather.get-weather), a description, a JSON
// Schema for its input (and optionally its output), examples, and a Go
// handler. NewTool infers the schemas from Go types. A Toolbox holds tools
// and calls them: the input is validated against the schema (a
// github.com/google/jsonschema-go Schema, checked with
// github.com/santhosh-tekuri/jsonschema, draft 2020-12 unless the schema
// says otherwise) before the handler runs, and a violation is a SchemaError
// whose message names the tool, says what is wrong and where, and points at
// toolSchema(). A schema's $ref may only point inside it. In the sandbox each tool is a function named by
// its ID in camelCase, weatherGetWeather.
//
//	tb, _ := agent.NewToolbox(agent.NewTool("weather.get-weather", "Get current weather",
//		func(ctx context.Context, in struct {
//			Latitude  float64 `json:"latitude"`
//			Longitude float64 `json:"longitude"`
//		}) (Weather, error) { ... }))
//	it := agent.NewInterpreter(agent.Config{Completer: agent.NewOpenAI(agent.OpenAIConfig{})})
//	e := it.Execute(ctx, `
//		const w = weatherGetWeather({ latitude: 55.67, longitude: 12.56 });
//		complete({ response: llm("Summarize: " + JSON.stringify(w)) });`,
//		agent.ExecuteOptions{Tools: tb})
//	// e.Output, e.Done, e.Result, e.Logs; on failure e.Error, e.Line, e.Column, e.Context, e.Timeout
//
// # Code mode
//
// Interpreter.Execute runs code in a fresh sandbox each time, by the rules
// of a CodeAgent step (one code model): a plain script, as Node's REPL runs
// it, is sloppy global code of a fresh executor (airlock.ExecutorOptions
// Sloppy), with top-level await, TypeScript erased, and its completion
// value as its result (`x = 5; x` gives 5, `({a, b})` an object,
// `results.join("\n")` at the end its text). Code with an import or export
// declaration is an ES module, strict as modules are (Node's module
// detection decides the same way), whose value is its default export, else
// its last expression statement's. An Interpreter whose Config.Runtime is
// set runs all code as modules on that Runtime (its worker processes, if
// it has them). Tools and helpers return their values directly, so code
// written for a synchronous sandbox works unchanged, and `await` on them
// works as well; parallel() and `await Promise.all([...])` run tool calls
// concurrently. The CodeAgent's steps have the same helpers. The helpers:
//
//	parallel([{tool, input}])  concurrent tool calls by ID; a failure is {error} in its slot
//	llm(prompt), llmJson(prompt, schema?)  completions through Config.Completer (NewOpenAI: any
//	                           OpenAI-compatible endpoint, OPENAI_API_KEY, OPENAI_BASE_URL)
//	complete({response, data?, followUp?}), output(...), done()
//	log(...), store(key, value), recall(key), toolSchema(id), input
//
// Functions registered with Register (as plugins do: RegisterArtifacts adds
// storeArtifact, listArtifacts and getArtifact) and modules added with
// AddModule (Go values) or AddSourceModule (JavaScript source) are there in
// every execution, and in every Clone. An execution that runs past its
// timeout (DefaultTimeout, 30 s, unless the interpreter or the call sets
// one) ends with {error: "Execution timed out after Xms", timeout: true};
// an error carries the line, the column and the offending line of the code.
//
// # Documentation for the model
//
// MarkdownDocs, TypeScriptDeclarations and ToolListing generate, from the
// tools, API documentation, declarations and the compact grouped listing.
// The declarations handle the forms of MCP and pydantic schemas: local
// $refs (a recursive definition becomes a named type alias), allOf as an
// intersection, tuples (prefixItems, draft-07 items arrays), index
// signatures, OpenAPI's nullable, and format, default, bounds and pattern
// as doc comments (SchemaFromJSON keeps a hand-written schema's property
// order). CodeModePrompt (Interpreter.Prompt) is the system prompt of code
// mode; registered functions appear in it with their signatures
// (Interpreter.Document, or derived from the Go function's type:
// FunctionDocs). RenderCodeAgentPrompt is the CodeAgent's (Appendix D's
// text, its §14.3 examples, the tools' declarations). RunCodeTool is the
// interpreter.run-code tool, whose sandbox has the conversation's tools and
// whose description declares them, the functions and the helpers in
// TypeScript, since a model that has only that tool reads nothing else;
// FormatExecution is its text for the model, values shown as
// airlock.Inspect shows them (as Node's console.log would).
//
// What goes back to a model is bounded: run_code's text by
// Config.MaxOutput, a CodeAgent's observations by CodeAgent.MaxOutput, a
// ClassicAgent's tool results by ClassicAgent.MaxOutput, each 20,000
// characters by default ([DefaultMaxOutput]). A longer text keeps its
// head and its tail around "... [truncated N characters] ..." ([ClipText],
// which the MCP server and the command line use too). The JSON of
// an Execution and of a Transcript never fails: values go through
// js.JSONValue (NaN as null, cycles cut).
//
// # Agent loops
//
// CodeAgent is the Thought → Code → Observation loop of seed 001's
// Appendix D on one airlock.Executor: the model's reply is searched for a
// code block (ExtractCode), the code runs with the tools as functions and
// state kept from step to step, and the logs and value, or the error with
// its line and the code there, are the next observation, until
// final_answer(value) or MaxSteps (a final answer that cannot leave the
// sandbox, a function in it, is an error the model reads, with where it
// was; a step's value is shown, its functions and symbols left out); its
// sandbox also has parallel, llm,
// llmJson, store and recall. CodeModeAgent is seed 002's code-mode loop:
// Interpreter.Prompt as the system prompt, each reply's code in a fresh
// sandbox of the Interpreter, FormatExecution's text as the observation,
// until complete() or done(). ClassicAgent is the tool-calling loop of
// seed 002: the model calls the tools (by APIName) and run_code, the calls
// of one message concurrently. Both take any Completer (NewOpenAI: retries
// on transient errors, cancellation by the context), report each Step to
// OnStep and to log/slog, and return a Transcript with the token usage
// summed.
//
// # Models, tool calls, usage
//
// Both loops take a Completer (NewOpenAI, or any provider or test double):
// Complete returns a Completion with the text, the tool calls and the
// Usage. Every tool call, by the code or by the model, is a CallRecord in
// Execution.Calls and Step.Calls (tool, input, output or error, start,
// duration). A Policy (Config.Policy, ExecuteOptions.Policy,
// CodeAgent.Policy, ClassicAgent.Policy) runs before each call: Allow,
// Deny with a message the code sees as an error (errors.Is ErrDenied), or
// Ask, which waits for Policy.Approve; Policy.Timeout and Timeouts bound
// each call, even one whose handler ignores its context. Usage counts the
// loop's completions and the llm()/llmJson() sub-calls of its code, per
// step and in total; a Budget stops a run with ErrBudget. A failed
// run_code is the tool's error (RunCodeError), so a tool-calling model
// sees a failed call.
//
// Calls whose promise the code uses (await f(), Promise.all([f(), g()]),
// xs.map(x => f(x)) inside Promise.all, f().then) call a promise-returning
// twin of the tool, so they run concurrently; every other call returns its
// value. Code longer than 64 KiB is not read for this (nor for a module's
// last expression, or the line of a throw): its calls return their values,
// one at a time. llmJson(prompt, schema) asks for structured output.
//
// # Conversations
//
// CodeAgent.NewSession and ClassicAgent.NewSession keep a conversation: each
// Run is a turn that sees the earlier messages; a CodeSession keeps its
// executor (and so the variables) between turns, a ClassicSession the
// store()/recall() state. Transcript.Messages is the conversation after a
// turn; NewSession(messages) resumes it.
//
// # Artifacts
//
// An ArtifactStore keeps data by ID; OpenArtifacts is the default, on
// embedded SQLite (modernc.org/sqlite). ArtifactTools are artifact.store,
// artifact.list and artifact.get for classic mode.
package agent

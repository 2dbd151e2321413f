package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// A Message is one message of a chat: Role is "system", "user",
// "assistant" or "tool". An assistant message may carry the tool calls the
// model made; a tool message answers one of them by its ID.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ModelToolCall `json:"toolCalls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// A ModelToolCall is a tool call a model asked for: its ID in the
// conversation, the tool's API name and the JSON text of its arguments.
type ModelToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// A ToolSpec offers a tool to a tool-calling model: its API name, its
// description and the JSON Schema of its arguments.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// A CompletionRequest asks a model for one reply.
type CompletionRequest struct {
	Messages []Message
	// Model overrides the completer's model; "" keeps it.
	Model string
	// MaxTokens bounds the reply; 0 leaves it to the endpoint.
	MaxTokens int
	// ResponseFormat is "" or "text", "json_object" to ask for a JSON
	// object, or "json_schema" to ask for JSON that satisfies JSONSchema
	// (structured output).
	ResponseFormat string
	// JSONSchema is the schema of a "json_schema" reply.
	JSONSchema json.RawMessage
	// Tools are the tools the model may call; nil offers none.
	Tools []ToolSpec
}

// A Completion is a model's reply: its text, the tools it called, and the
// tokens it took.
type Completion struct {
	Text      string
	ToolCalls []ModelToolCall
	Usage     Usage
}

// A Completer answers completion requests. The agent loops and llm() and
// llmJson() in the sandbox go through one, so any provider, or a test
// double, plugs in; NewOpenAI is one for OpenAI-compatible endpoints.
type Completer interface {
	Complete(ctx context.Context, req CompletionRequest) (*Completion, error)
}

// CompleterFunc adapts a function to a Completer.
type CompleterFunc func(ctx context.Context, req CompletionRequest) (*Completion, error)

// Complete calls f.
func (f CompleterFunc) Complete(ctx context.Context, req CompletionRequest) (*Completion, error) {
	return f(ctx, req)
}

// OpenAIConfig configures an OpenAI-compatible endpoint.
type OpenAIConfig struct {
	// APIKey; "" means the OPENAI_API_KEY environment variable.
	APIKey string
	// BaseURL, such as "http://localhost:11434/v1"; "" means OPENAI_BASE_URL,
	// else OpenAI's own.
	BaseURL string
	// Model; "" means OPENAI_MODEL, else "gpt-4o-mini".
	Model string
	// MaxRetries on transient errors (429, 5xx, connection); 0 means 2,
	// negative means none.
	MaxRetries int
	// Options are more request options for the client.
	Options []option.RequestOption
}

// OpenAI is a Completer for any OpenAI-compatible chat completions
// endpoint.
type OpenAI struct {
	Client openai.Client
	Model  string
}

// NewOpenAI returns a completer for the endpoint of cfg.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	key := cfg.APIKey
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	base := cfg.BaseURL
	if base == "" {
		base = os.Getenv("OPENAI_BASE_URL")
	}
	model := cfg.Model
	if model == "" {
		model = os.Getenv("OPENAI_MODEL")
	}
	if model == "" {
		model = "gpt-4o-mini"
	}
	retries := cfg.MaxRetries
	if retries == 0 {
		retries = 2
	} else if retries < 0 {
		retries = 0
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(retries)}
	if base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	opts = append(opts, cfg.Options...)
	return &OpenAI{Client: openai.NewClient(opts...), Model: model}
}

// Complete asks the endpoint for one reply.
func (o *OpenAI) Complete(ctx context.Context, req CompletionRequest) (*Completion, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(o.Model)}
	if req.Model != "" {
		params.Model = shared.ChatModel(req.Model)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case "assistant":
			if len(m.ToolCalls) == 0 {
				params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
				break
			}
			am := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				am.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				am.ToolCalls = append(am.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &am})
		case "tool":
			params.Messages = append(params.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		default:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	switch req.ResponseFormat {
	case "json_object":
		params.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	case "json_schema":
		var schema any = map[string]any{"type": "object"}
		if len(req.JSONSchema) > 0 {
			if err := json.Unmarshal(req.JSONSchema, &schema); err != nil {
				return nil, errors.New("the response schema is not JSON")
			}
		}
		params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "response", Schema: schema},
		}
	case "text":
		params.ResponseFormat.OfText = &shared.ResponseFormatTextParam{}
	}
	for _, t := range req.Tools {
		fp := shared.FunctionParameters{"type": "object"}
		if len(t.Parameters) > 0 {
			fp = shared.FunctionParameters{}
			if err := json.Unmarshal(t.Parameters, &fp); err != nil {
				return nil, errors.New("tool " + t.Name + ": its parameters are not a JSON object")
			}
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: fp,
		}))
	}
	resp, err := o.Client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("the model returned no choices")
	}
	msg := resp.Choices[0].Message
	c := &Completion{Text: msg.Content, Usage: Usage{
		PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		TotalTokens: resp.Usage.TotalTokens, Completions: 1,
	}}
	for _, tc := range msg.ToolCalls {
		c.ToolCalls = append(c.ToolCalls, ModelToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return c, nil
}

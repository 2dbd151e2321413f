package agent

import (
	"context"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// A Message is one message of a chat: Role is "system", "user" or
// "assistant".
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// A CompletionRequest asks a model for one reply.
type CompletionRequest struct {
	Messages []Message
	// Model overrides the completer's model; "" keeps it.
	Model string
	// MaxTokens bounds the reply; 0 leaves it to the endpoint.
	MaxTokens int
	// ResponseFormat is "" or "text", or "json_object" to ask for a JSON
	// object.
	ResponseFormat string
}

// A Completer answers completion requests; llm() and llmJson() in the
// sandbox go through one.
type Completer interface {
	Complete(ctx context.Context, req CompletionRequest) (string, error)
}

// CompleterFunc adapts a function to a Completer.
type CompleterFunc func(ctx context.Context, req CompletionRequest) (string, error)

// Complete calls f.
func (f CompleterFunc) Complete(ctx context.Context, req CompletionRequest) (string, error) {
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
func (o *OpenAI) Complete(ctx context.Context, req CompletionRequest) (string, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(o.Model)}
	if req.Model != "" {
		params.Model = shared.ChatModel(req.Model)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case "assistant":
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
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
	case "text":
		params.ResponseFormat.OfText = &shared.ResponseFormatTextParam{}
	}
	resp, err := o.chat(ctx, params)
	if err != nil {
		return "", err
	}
	return resp.Choices[0].Message.Content, nil
}

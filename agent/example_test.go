package agent_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/airlockrun/airlock/agent"
)

type WeatherInput struct {
	City string `json:"city"`
}

type Weather struct {
	Temperature float64 `json:"temperature"`
}

func lookup(_ context.Context, in WeatherInput) (Weather, error) {
	return Weather{Temperature: float64(len(in.City))}, nil
}

// The README's code-mode example.
func ExampleInterpreter() {
	ctx := context.Background()
	tb, _ := agent.NewToolbox(agent.NewTool("weather.get-weather", "Get current weather",
		func(ctx context.Context, in WeatherInput) (Weather, error) { return lookup(ctx, in) }))
	it := agent.NewInterpreter(agent.Config{})
	e := it.Execute(ctx, `
		const results = parallel(input.map(c => ({ tool: "weather.get-weather", input: { city: c } })));
		results.map(r => r.temperature)`, agent.ExecuteOptions{Tools: tb, Input: []string{"Oslo", "Paris"}, Timeout: 5 * time.Second})
	fmt.Println(e.Result)

	e = it.Execute(ctx, "const w = weatherGetWeather({ town: 'Oslo' });", agent.ExecuteOptions{Tools: tb})
	fmt.Println(e.Line, e.Context)
	// Output:
	// [4 5]
	// 1 const w = weatherGetWeather({ town: 'Oslo' });
}

// Registered functions are shown to the model with their signatures:
// Document's, or one derived from the Go function's type.
func ExampleInterpreter_Document() {
	it := agent.NewInterpreter(agent.Config{})
	_ = it.Register("slugify", func(s string) string { return s })
	_ = it.Register("rate", func(ctx context.Context, currency string) (float64, error) { return 1, nil })
	_ = it.Document(agent.Helper{Name: "rate", Signature: "rate(currency: string): number", Description: "Today's rate against the euro."})
	for _, h := range it.FunctionDocs() {
		fmt.Println(h.Signature, h.Description)
	}
	// Output:
	// rate(currency: string): number Today's rate against the euro.
	// slugify(arg1: string): string
}

// The CodeAgent's system prompt: seed 001's Appendix D, with its examples
// and the tools' declarations.
func ExampleRenderCodeAgentPrompt() {
	p, _ := agent.RenderCodeAgentPrompt(agent.CodeAgentPromptOptions{
		Tools: []agent.ToolDoc{{Name: "add", Description: "Adds two numbers.",
			Params: []agent.ToolParam{{Name: "a", Type: "number"}, {Name: "b", Type: "number"}}, Returns: "number"}},
	})
	for _, line := range strings.Split(p, "\n") {
		if strings.HasPrefix(line, "function ") || strings.HasPrefix(line, "Here are") {
			fmt.Println(line)
		}
	}
	// Output:
	// Here are a few examples using notional tools:
	// function add(a: number, b: number): number;
	// function final_answer(value: any): never;
}

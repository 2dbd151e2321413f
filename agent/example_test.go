package agent_test

import (
	"context"
	"fmt"
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

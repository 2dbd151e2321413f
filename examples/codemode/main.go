// Command codemode registers three tools and runs model-style code against
// them in Airlock's code mode: parallel() over two tools, a call that breaks
// a tool's schema (caught, as a model's code would), and complete().
//
//	go run ./examples/codemode
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/airlockrun/airlock/agent"
)

type cityIn struct {
	City string `json:"city" jsonschema:"city name, such as Oslo"`
}

type weather struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
	Description string  `json:"description"`
}

type convertIn struct {
	Celsius float64 `json:"celsius"`
}

var table = map[string]weather{
	"oslo":  {"Oslo", 4, "light rain"},
	"paris": {"Paris", 12, "sunny"},
	"rome":  {"Rome", 17, "clear"},
}

func tools() []agent.Tool {
	get := agent.NewTool("weather.get-weather", "Get current weather for a city",
		func(_ context.Context, in cityIn) (weather, error) {
			w, ok := table[strings.ToLower(in.City)]
			if !ok {
				return weather{}, fmt.Errorf("no weather for %q", in.City)
			}
			return w, nil
		})
	cities := agent.NewTool("weather.list-cities", "List the cities with weather data",
		func(context.Context, struct{}) ([]string, error) { return []string{"Oslo", "Paris", "Rome"}, nil })
	convert := agent.NewTool("units.celsius-to-fahrenheit", "Convert Celsius to Fahrenheit",
		func(_ context.Context, in convertIn) (float64, error) { return in.Celsius*9/5 + 32, nil })
	return []agent.Tool{get, cities, convert}
}

// code is what a model might write for "Which city is warmest, in °F?".
const code = `
const cities = weatherListCities({});
const reports = parallel(cities.map(city => ({ tool: "weather.get-weather", input: { city } })));
console.log("reports:", reports.length);

// A call that breaks the schema: the error says what to fix.
try {
  unitsCelsiusToFahrenheit({ celsius: "warm" });
} catch (e) {
  console.log("schema:", e.message.split(":")[0]);
}

const warmest = reports.reduce((a, b) => (b.temperature > a.temperature ? b : a));
const f = unitsCelsiusToFahrenheit({ celsius: warmest.temperature });
complete({
  response: warmest.city + " is warmest: " + f + "°F, " + warmest.description + ".",
  data: warmest,
  followUp: "Want the others too?",
});
`

func run(w io.Writer) error {
	tb, err := agent.NewToolbox(tools()...)
	if err != nil {
		return err
	}
	it := agent.NewInterpreter(agent.Config{})
	e := it.Execute(context.Background(), code, agent.ExecuteOptions{Tools: tb})
	for _, l := range e.Logs {
		fmt.Fprintln(w, "log:", l.Message())
	}
	if !e.OK() {
		return errors.New(e.Error)
	}
	fmt.Fprintf(w, "output: %s\ndone: %v\n", e.Output, e.Done)
	return nil
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

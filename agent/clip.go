package agent

import "github.com/airlockrun/airlock/internal/clip"

// DefaultMaxOutput is the bound, in characters, that the agent layer and
// the MCP server put on the text that goes back to a model from one run
// (run_code's text, a CodeAgent's observation), as smolagents cuts its
// observations at about 20,000 characters: enough for a page of data, far
// below a context window.
const DefaultMaxOutput = 20000

// ClipText bounds s to max characters (Unicode code points), the marker
// included: a longer s keeps its head and its tail, half of the room each,
// with a line between them that says how much was cut:
//
//	... [truncated 1,234,567 characters] ...
//
// The head holds what a run's text starts with (the status, the start of
// the result or the error) and the tail what it ends with (the last
// console lines, a CodeAgent's value), which is what a model needs to go
// on. A negative max means no bound. The sandbox writes the same marker
// when it cuts a failure's texts ([airlock.MaxErrorText]).
//
// ClipText may be called from any goroutine.
func ClipText(s string, max int) string { return clip.Text(s, max) }

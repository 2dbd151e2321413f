package airlock

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/airlockrun/airlock/internal/hostcall"
)

// Async marks a Go function as asynchronous: called from the sandbox it
// returns a Promise at once and runs on its own goroutine, so that
// Promise.all over several calls runs them concurrently, at most
// RuntimeConfig.MaxAsyncCalls of a run at once. The function's shape is that
// of any bridged function (see the package documentation). A run settles
// without waiting for its asynchronous calls: when it ends, their context
// is cancelled and what they return later is discarded, so a function that
// blocks should honour its context.Context parameter.
func Async(fn any) any { return hostcall.AsyncFunc{Fn: reflect.ValueOf(fn)} }

// JSONFunc bridges a Go function that takes and gives JSON text, the
// fastest way across the boundary for structured data. Called from the
// sandbox, its arguments reach fn as the JSON text of the argument list,
// made by the sandbox's own JSON.stringify (so toJSON, getters and Proxy
// traps run there first, undefined becomes null in the list and is left out
// of objects, and a BigInt or a cycle throws in the sandbox); what fn
// returns is parsed by the sandbox's JSON.parse, and empty text is
// undefined. An error from fn is thrown in the sandbox as an Error with its
// message. Wrap it with Async to get a Promise instead of a value.
func JSONFunc(fn func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)) any {
	return hostcall.JSONFunc{Fn: fn}
}

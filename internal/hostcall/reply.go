package hostcall

import (
	"math"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/js"
)

// jsonReply is the reply of a JSONFunc: its text, which the sandbox parses
// with its own JSON.parse; empty text is undefined.
func jsonReply(t JSONText) engine.Reply {
	if len(t) == 0 {
		return engine.Reply{Kind: engine.ReplyRaw, Value: engine.Undefined{}}
	}
	return engine.Reply{Kind: engine.ReplyJSON, Value: string(t)}
}

// Reply turns a host function's result into the engine's reply: a
// primitive as it is, JSON text as it is, anything else encoded in the
// binary format, appended to buf (nil: a buffer of the reply's own); reg
// registers the functions the result holds, if they may cross.
func Reply(v any, err error, reg codec.Registrar, buf []byte) engine.Reply {
	if err != nil {
		return engine.Reply{Kind: engine.ReplyError, Value: err.Error()}
	}
	if t, ok := v.(JSONText); ok {
		return jsonReply(t)
	}
	if raw, ok := toRaw(v); ok {
		return engine.Reply{Kind: engine.ReplyRaw, Value: raw}
	}
	b, err := codec.AppendBinary(buf[:0], v, reg)
	if err != nil {
		return engine.Reply{Kind: engine.ReplyError, Value: err.Error()}
	}
	return engine.Reply{Kind: engine.ReplyBytes, Bytes: b}
}

// rawCost is what a raw primitive costs the run's budget: a string its
// bytes, and every value 8.
func rawCost(v any) int {
	if s, ok := v.(string); ok {
		return 8 + len(s)
	}
	return 8
}

// replyCost is what a host call's reply costs the run's budget.
func replyCost(rep engine.Reply) int {
	switch rep.Kind {
	case engine.ReplyBytes:
		return codec.BinaryCost(rep.Bytes)
	case engine.ReplyJSON:
		s, _ := rep.Value.(string)
		return codec.JSONCost(s)
	}
	return rawCost(rep.Value)
}

// budgeted is rep, or an error in its place when spend cannot pay
// for it.
func budgeted(rep engine.Reply, spend func(int) bool, spent error) engine.Reply {
	if rep.Kind == engine.ReplyAsync || spend(replyCost(rep)) {
		return rep
	}
	return engine.Reply{Kind: engine.ReplyError, Value: spent.Error()}
}

// fromRaw converts a raw primitive that came out of the engine (its
// rawOf: undefined, null, a boolean, a float64 or a string).
func fromRaw(v any) any {
	if _, ok := v.(engine.Undefined); ok {
		return js.Undefined{}
	}
	return v
}

// toRaw reports whether a Go value can cross as a raw primitive, and its
// raw form.
func toRaw(v any) (any, bool) {
	// v itself is returned where it can be: x, boxed again, would be an
	// allocation per host call.
	switch x := v.(type) {
	case nil, bool:
		return v, true
	case string:
		// Text that is not UTF-8 (a lone surrogate's WTF-8) crosses
		// encoded.
		return v, utf8.ValidString(x)
	case js.Undefined:
		return engine.Undefined{}, true
	case float64:
		return v, true
	case int:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			return x, true
		}
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	case float32:
		return float64(x), true
	}
	return nil, false
}

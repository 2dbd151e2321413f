package engine

import (
	"encoding/base64"
	"encoding/json"
	"unsafe"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// The compatibility seam: wire text, the transport of a host side that
// has not switched to the binary transport (Job.Input, Job.CallBytes,
// Job.LogBytes, Outcome.Bytes, Reply.Bytes; VM.DefineValueBytes). Wire
// text is "J" and plain JSON, or "B" and the base64 of the codec's binary
// format; here it becomes the values the shim takes (JSON text, parsed by
// the engine's JSON parser; bytes, decoded by the shim's codec), and the
// bytes the shim sends become strings. Nothing else in the package knows
// wire text. The seam goes once the root's host side sends and reads
// bytes: delete this file, Job's Args, Globals, Imports, Call and Log,
// Outcome.Value's encoded form, ReplyWire and VM.DefineValue.

// emptyWire is the wire text of an empty list.
const emptyWire = "J[]"

// wireValue is the value of wire text s as the shim takes it; text that is
// not wire text is a malformed encoding, which the shim refuses with a
// TypeError where it decodes it.
func wireValue(s string) wasmvm.Value {
	if len(s) > 0 && s[0] == 'J' {
		return wasmvm.Value{Kind: wasmvm.JSON, Text: s[1:]}
	}
	if len(s) > 0 && s[0] == 'B' {
		if b, err := base64.StdEncoding.DecodeString(s[1:]); err == nil {
			return wasmvm.Value{Kind: wasmvm.Bytes, Bytes: b}
		}
	}
	return wasmvm.Value{Kind: wasmvm.Bytes, Bytes: []byte{}}
}

// wireSlots appends to s, the slots of entryRun (runSlots), the run's
// input from its wire texts, and returns them with the flags it adds.
// "R" among the globals stands for the built-in report; the text at the
// console's index is not read.
func wireSlots(j *Job, s []wasmvm.Value) ([]wasmvm.Value, int) {
	if j.Args != emptyWire {
		s[runArgs] = wireValue(j.Args)
	}
	if j.Globals == "" {
		return s, 0
	}
	if j.Imports != emptyWire {
		s[runImports] = wireValue(j.Imports)
	}
	var texts []string
	switch j.Globals {
	case `["Jnull","R"]`: // the built-in console and report only (the root's builtinGlobals)
		texts = builtinTexts
	default:
		if err := json.Unmarshal([]byte(j.Globals), &texts); err != nil {
			s[runArgs] = wireValue("") // the run fails to start: malformed
			return s, runWithGlobals
		}
	}
	report := -1
	for i, t := range texts {
		switch {
		case i == j.Console:
			s = append(s, wasmvm.Value{})
		case t == "R" && report < 0:
			report = i
			s = append(s, wasmvm.Value{})
		default:
			s = append(s, wireValue(t))
		}
	}
	s[runReport] = num(report)
	return s, runWithGlobals
}

var builtinTexts = []string{"Jnull", "R"}

// wireText is encoded bytes as the string the seam's host side reads,
// sharing b's memory: b is the outcome's or a copy, never written again.
func wireText(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

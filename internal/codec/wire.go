package codec

import (
	"encoding/base64"
	"sync"
	"unsafe"
)

// Wire text is how a value crosses into the sandbox while the engine's
// transport carries texts: "B" and the base64 of the binary format, which
// the shim decodes. Values coming out of the sandbox are binary text
// itself.

// EmptyList is the wire text of an empty list, which the sandbox knows
// without decoding (the kernel's plain JSON, "J" and JSON text, of which
// it is the one the host still sends).
const EmptyList = "J[]"

// bufs holds encoding buffers between calls, up to maxPooled bytes each:
// a value's text grows its buffer many times on the way.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooled = 4 << 20

// Encode encodes a Go value as wire text. Functions are registered with
// reg; a nil reg makes them a *js.CloneError.
func Encode(v any, reg Registrar) (string, error) {
	p := bufs.Get().(*[]byte)
	defer bufs.Put(p)
	bin, err := AppendBinary((*p)[:0], v, reg)
	if cap(bin) <= maxPooled {
		*p = bin
	}
	if err != nil {
		return "", err
	}
	// Encoded straight after the "B": a copy of the text, not three.
	out := make([]byte, 1+base64.StdEncoding.EncodedLen(len(bin)))
	out[0] = 'B'
	base64.StdEncoding.Encode(out[1:], bin)
	return unsafe.String(unsafe.SliceData(out), len(out)), nil // out is the text's alone
}

// Decode decodes wire text or binary text into Go values (package js's
// table). budget bounds what the text may make the host allocate (see
// DecodeBinary).
func Decode(text string, budget int) (any, error) {
	if len(text) > budget {
		return nil, ErrTooLarge
	}
	if IsBinary(text) {
		return DecodeBinary(text, budget)
	}
	if len(text) == 0 || text[0] != 'B' {
		return nil, ErrMalformed
	}
	b, err := base64.StdEncoding.DecodeString(text[1:])
	if err != nil {
		return nil, ErrMalformed
	}
	return DecodeBinaryBytes(b, budget)
}

// Binary returns the binary text of wire text: itself when it is binary,
// the decoded bytes of "B" text, or false for any other.
func Binary(text string) (string, bool) {
	if IsBinary(text) {
		return text, true
	}
	if len(text) > 0 && text[0] == 'B' {
		b, err := base64.StdEncoding.DecodeString(text[1:])
		if err == nil {
			return string(b), true
		}
	}
	return "", false
}

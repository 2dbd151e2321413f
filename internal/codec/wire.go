package codec

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Wire text is how a value crosses into the sandbox while the engine's
// transport carries texts: "J" and the plain JSON of plain data (which the
// engine's own JSON.parse builds), or "B" and the base64 of the binary
// format (which the shim decodes). Values coming out of the sandbox are
// binary text itself.

// EmptyList is the wire text of an empty list, which the sandbox knows
// without decoding.
const EmptyList = "J[]"

// bufs holds encoding buffers between calls.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

// Encode encodes a Go value as wire text. Functions are registered with
// reg; a nil reg makes them a *js.CloneError.
func Encode(v any, reg Registrar) (string, error) {
	p := bufs.Get().(*[]byte)
	defer bufs.Put(p)
	bin, plain, err := AppendBinary((*p)[:0], v, reg)
	if cap(bin) <= 64<<10 {
		*p = bin
	}
	if err != nil {
		return "", err
	}
	if plain {
		out, err := AppendJSON([]byte{'J'}, bin)
		return string(out), err
	}
	// Encoded straight after the "B": a copy of the text, not three.
	out := make([]byte, 1+base64.StdEncoding.EncodedLen(len(bin)))
	out[0] = 'B'
	base64.StdEncoding.Encode(out[1:], bin)
	return string(out), nil
}

// Decode decodes wire text or binary text into Go values (package js's
// table; plain JSON as encoding/json decodes it into an any). budget
// bounds what the text may make the host allocate (see DecodeBinary).
func Decode(text string, budget int) (any, error) {
	if len(text) > budget {
		return nil, ErrTooLarge
	}
	if IsBinary(text) {
		return DecodeBinary(text, budget)
	}
	if len(text) == 0 {
		return nil, ErrMalformed
	}
	switch text[0] {
	case 'B':
		b, err := base64.StdEncoding.DecodeString(text[1:])
		if err != nil {
			return nil, ErrMalformed
		}
		return DecodeBinaryBytes(b, budget)
	case 'J':
		var v any
		if err := json.Unmarshal([]byte(text[1:]), &v); err != nil {
			return nil, fmt.Errorf("airlock: malformed value: %v", err)
		}
		return v, nil
	}
	return nil, ErrMalformed
}

// Binary returns the binary text of wire text: itself when it is binary,
// the decoded bytes of "B" text, or false for "J" text and any other.
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

// AppendJSON appends the plain JSON of binary text that holds plain data
// (AppendBinary's plain), as JSON.stringify would write it.
func AppendJSON(buf []byte, bin []byte) ([]byte, error) {
	if len(bin) < headerSize || bin[0] != Magic {
		return nil, ErrMalformed
	}
	type level struct {
		obj  bool
		n, i uint32
	}
	var stack []level
	p := headerSize
	u32 := func() (uint32, bool) {
		if p+4 > len(bin) {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(bin[p:])
		p += 4
		return v, true
	}
	str := func() (string, bool) {
		n, ok := u32()
		if !ok || uint64(p)+uint64(n) > uint64(len(bin)) {
			return "", false
		}
		s := string(bin[p : p+int(n)])
		p += int(n)
		return s, true
	}
	for {
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.i == top.n {
				if top.obj {
					buf = append(buf, '}')
				} else {
					buf = append(buf, ']')
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					break
				}
				continue
			}
			if top.i > 0 {
				buf = append(buf, ',')
			}
			top.i++
			if top.obj {
				k, ok := str()
				if !ok {
					return nil, ErrMalformed
				}
				buf = append(AppendJSONString(buf, k), ':')
			}
		}
		if p >= len(bin) {
			return nil, ErrMalformed
		}
		tag := bin[p]
		p++
		switch tag {
		case tNull:
			buf = append(buf, "null"...)
		case tFalse:
			buf = append(buf, "false"...)
		case tTrue:
			buf = append(buf, "true"...)
		case tI32:
			n, ok := u32()
			if !ok {
				return nil, ErrMalformed
			}
			buf = strconv.AppendInt(buf, int64(int32(n)), 10)
		case tF64:
			if p+8 > len(bin) {
				return nil, ErrMalformed
			}
			f := math.Float64frombits(binary.LittleEndian.Uint64(bin[p:]))
			p += 8
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, ErrMalformed
			}
			buf = strconv.AppendFloat(buf, f, 'g', -1, 64)
		case tString:
			s, ok := str()
			if !ok {
				return nil, ErrMalformed
			}
			buf = AppendJSONString(buf, s)
		case tObject, tArray:
			n, ok := u32()
			if !ok {
				return nil, ErrMalformed
			}
			if len(stack) >= MaxDepth {
				return nil, errDepth
			}
			if tag == tObject {
				buf = append(buf, '{')
			} else {
				buf = append(buf, '[')
			}
			stack = append(stack, level{obj: tag == tObject, n: n})
			continue
		default:
			return nil, ErrMalformed
		}
		if len(stack) == 0 {
			break
		}
	}
	return buf, nil
}

// AppendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, as encoding/json writes it.
func AppendJSONString(buf []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"':
			buf = append(buf, '\\', '"')
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

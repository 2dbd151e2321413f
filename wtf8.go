package airlock

import (
	"unicode/utf16"
	"unicode/utf8"
)

// A JavaScript string is a list of UTF-16 code units, and may hold a lone
// surrogate (half of a pair), which UTF-8 cannot encode. Such a string
// arrives in Go as WTF-8: UTF-8 with each lone surrogate written as the
// three bytes UTF-8's scheme gives its code point (U+D800 is ED A0 80),
// which Go's UTF-8 functions see as invalid bytes. A Go string goes back
// the same way: those three bytes become the lone surrogate again, and any
// other byte that is not UTF-8 becomes U+FFFD.

// isSurrogateAt reports whether s[i:] starts with the WTF-8 bytes of a
// surrogate, and returns its code unit.
func isSurrogateAt(s string, i int) (uint16, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F), true
	}
	return 0, false
}

// wireString is the wire form of a Go string: the string itself when it is
// UTF-8 or has no surrogate in it (its invalid bytes U+FFFD), else ["w",
// its UTF-16 code units].
func wireString(s string) any {
	if utf8.ValidString(s) {
		return s
	}
	units := make([]any, 0, len(s))
	lone := false
	for i := 0; i < len(s); {
		if u, ok := isSurrogateAt(s, i); ok {
			units = append(units, float64(u))
			lone = true
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			units = append(units, float64(hi), float64(lo))
		} else {
			units = append(units, float64(r))
		}
	}
	if lone {
		return []any{"w", units}
	}
	b := make([]byte, 0, len(s)+8)
	for _, r := range s { // an invalid byte is utf8.RuneError
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// unitsString decodes ["w", units] into WTF-8.
func unitsString(node []any) (string, bool) {
	if len(node) != 2 {
		return "", false
	}
	units, ok := node[1].([]any)
	if !ok {
		return "", false
	}
	b := make([]byte, 0, len(units))
	for i := 0; i < len(units); i++ {
		u, ok := unitAt(units, i)
		if !ok {
			return "", false
		}
		if utf16.IsSurrogate(rune(u)) {
			if u < 0xDC00 && i+1 < len(units) {
				if lo, ok := unitAt(units, i+1); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					b = utf8.AppendRune(b, utf16.DecodeRune(rune(u), rune(lo)))
					i++
					continue
				}
			}
			b = append(b, 0xED, 0xA0|byte(u>>6)&0x1F, 0x80|byte(u)&0x3F)
			continue
		}
		b = utf8.AppendRune(b, rune(u))
	}
	return string(b), true
}

func unitAt(units []any, i int) (uint16, bool) {
	f, ok := units[i].(float64)
	if !ok || f < 0 || f > 0xFFFF || f != float64(int(f)) {
		return 0, false
	}
	return uint16(f), true
}

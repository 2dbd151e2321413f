package codec

import (
	"unicode/utf16"
	"unicode/utf8"
)

// surrogateAt reports whether s[i:] starts with the WTF-8 bytes of a
// surrogate, and returns its code unit.
func surrogateAt(s string, i int) (uint16, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F), true
	}
	return 0, false
}

// appendWTF8 appends s, which is not UTF-8, as the sandbox reads it: each
// lone surrogate's three bytes as they are, a high and a low surrogate
// that follow each other as the character they make, and U+FFFD for every
// other byte that does not start valid UTF-8.
func appendWTF8(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		if u, ok := surrogateAt(s, i); ok {
			if u < 0xDC00 {
				if lo, ok := surrogateAt(s, i+3); ok && lo >= 0xDC00 {
					b = utf8.AppendRune(b, utf16.DecodeRune(rune(u), rune(lo)))
					i += 6
					continue
				}
			}
			b = append(b, s[i:i+3]...)
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

package codec

import (
	"strconv"
	"strings"
	"testing"
)

// megabyte is a ~1 MB value: 5000 records of a few fields (bench/'s).
func megabyte() []map[string]any {
	rows := make([]map[string]any, 5000)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "name": "user-" + strconv.Itoa(i), "email": "user" + strconv.Itoa(i) + "@example.com",
			"tags": []any{"a", "b", "c"}, "score": float64(i) * 1.5, "active": i%2 == 0,
			"bio": strings.Repeat("lorem ipsum ", 12)}
	}
	return rows
}

// BenchmarkEncode1MB encodes the megabyte in the binary format and
// decodes it.
func BenchmarkEncode1MB(b *testing.B) {
	v := megabyte()
	b.Run("binary", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for range b.N {
			var err error
			if buf, err = AppendBinary(buf[:0], v, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	bin, _ := AppendBinary(nil, v, nil)
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := DecodeBinary(string(bin), 1<<30); err != nil {
				b.Fatal(err)
			}
		}
	})
}

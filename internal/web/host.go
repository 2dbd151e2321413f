package web

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"hash"
	"strconv"

	"github.com/airlockrun/airlock/internal/hostwork"
)

// Call answers the web platform's host operations, which web.js makes
// through the engine's kernel operation for Intl and the web (OP_INTL,
// with the operation's name after "web."): texts in, a text out, "" for a
// refused or abandoned operation.
//
//   - "random", n: n bytes (at most MaxRandomBytes) from crypto/rand, in
//     base64 (crypto.getRandomValues and crypto.randomUUID).
//   - "digest", algorithm, data: the digest of data (base64) by SHA-1,
//     SHA-256, SHA-384 or SHA-512, in base64 (crypto.subtle.digest). More
//     than inlineBytes is hashed through hostwork, abandoned at stop.
func Call(stop <-chan struct{}, op string, a []string) string {
	switch op {
	case "random":
		if len(a) < 1 {
			return ""
		}
		n, err := strconv.Atoi(a[0])
		if err != nil || n < 0 || n > MaxRandomBytes {
			return ""
		}
		b := make([]byte, n)
		rand.Read(b) // never fails (crypto/rand's contract since Go 1.24)
		return base64.StdEncoding.EncodeToString(b)
	case "digest":
		if len(a) < 2 {
			return ""
		}
		var h hash.Hash
		switch a[0] {
		case "SHA-1":
			h = sha1.New()
		case "SHA-256":
			h = sha256.New()
		case "SHA-384":
			h = sha512.New384()
		case "SHA-512":
			h = sha512.New()
		default:
			return ""
		}
		data, err := base64.StdEncoding.DecodeString(a[1])
		if err != nil {
			return ""
		}
		if len(data) <= inlineBytes {
			h.Write(data)
		} else if !hostwork.Do(stop, "digest", len(data), func() { h.Write(data) }) {
			return ""
		}
		return base64.StdEncoding.EncodeToString(h.Sum(nil))
	}
	return ""
}

// MaxRandomBytes is the most crypto.getRandomValues fills at once (Web
// Crypto's quota: a larger array is a QuotaExceededError).
const MaxRandomBytes = 65536

// inlineBytes is the most data hashed on the VM's goroutine, out of reach
// of a stop (~0.1 ms at SHA-256's speed).
const inlineBytes = 64 << 10

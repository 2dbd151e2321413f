package web

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/hostwork"
)

// Call refuses what it cannot answer with "": an unknown operation or
// algorithm, a count out of range, data that is not base64; a digest
// larger than inlineBytes whose stop has closed is abandoned; otherwise it
// answers what crypto/sha256 and crypto/rand give.
func TestCall(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	for _, c := range [][]string{
		{"nope"}, {"random"}, {"random", "-1"}, {"random", "65537"}, {"random", "x"},
		{"digest", "SHA-256"}, {"digest", "MD5", b64([]byte("a"))}, {"digest", "SHA-256", "!!"},
	} {
		if got := Call(nil, c[0], c[1:]); got != "" {
			t.Errorf("Call(%q) = %q, want \"\"", c, got)
		}
	}
	if got, _ := base64.StdEncoding.DecodeString(Call(nil, "random", []string{"65536"})); len(got) != 65536 {
		t.Errorf("random 65536 gave %d bytes", len(got))
	}
	big := []byte(strings.Repeat("x", inlineBytes+1))
	sum := sha256.Sum256(big)
	if got := Call(nil, "digest", []string{"SHA-256", b64(big)}); got != b64(sum[:]) {
		t.Errorf("digest of %d bytes = %q", len(big), got)
	}
	// A digest held under way (the hook) while its run stops is abandoned.
	stop, entered, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer hostwork.SetTestHook(func(kind string, _ int) {
		if kind == "digest" {
			close(entered)
			<-release
		}
	})()
	go func() { <-entered; close(stop) }()
	got := Call(stop, "digest", []string{"SHA-256", b64(big)})
	close(release)
	if got != "" {
		t.Errorf("a stopped digest answered %q", got)
	}
}

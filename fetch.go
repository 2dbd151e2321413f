package airlock

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airlockrun/airlock/internal/fetch"
)

// FetchPolicy is what the sandbox's fetch may reach (Fetch). Requests are
// made by the host with Go's net/http; the sandbox sees only what comes
// back.
type FetchPolicy struct {
	// Allow are the hosts requests may go to: "api.github.com",
	// "*.example.com" (its subdomains, not itself), either with ":port"
	// (without one, 443 and 80). Any other host is refused with a
	// TypeError that names it. Redirects are followed hop by hop, each
	// checked again.
	Allow []string
	// AllowHTTP allows http: URLs too; by default only https.
	AllowHTTP bool
	// Secrets are headers the host adds to the requests to a host pattern
	// (as in Allow): "api.github.com" → "Authorization" → "Bearer …". The
	// sandbox never sees them (not in its Request, its Headers, errors or
	// records); a header the code sets with the same name is replaced, and
	// a redirect to another host carries that host's secrets or none. A
	// host that echoes a request's headers back reveals them: allow only
	// hosts you trust with the secret.
	Secrets map[string]map[string]string
	// Resolve maps "host:port" to "ip:port", as curl's --resolve. A name
	// resolved by DNS is refused when it leads to a loopback, private,
	// link-local (the cloud metadata address among them), shared or
	// reserved address, on every hop and at the moment of the connection
	// (the address checked is the one dialled: no rebinding); a name the
	// operator mapped here is dialled as mapped, wherever it leads.
	Resolve map[string]string
	// MaxRequestBytes and MaxResponseBytes bound a request's body and a
	// response's; 0 means 10 MiB. The response also counts against the
	// run's MaxValueBytes, as every value that crosses does.
	MaxRequestBytes, MaxResponseBytes int64
	// MaxRedirects bounds the redirects of one request; 0 means 10, a
	// negative value none.
	MaxRedirects int
	// Timeout bounds one request, redirects included; 0 means 30 s. A stop
	// or the end of the run cancels its requests at once.
	Timeout time.Duration
	// MaxConcurrent bounds the requests one Fetcher makes at once (each
	// holds up to MaxRequestBytes + MaxResponseBytes of the host's
	// memory); the others wait their turn. 0 means 4.
	MaxConcurrent int
	// Approve, when set, is asked about a host that Allow does not cover
	// ("host:port"), before the request is made: an agent can ask a
	// person. Its answer is not remembered.
	Approve func(ctx context.Context, host string) bool
	// RootCAs are the certificate authorities https trusts; nil: the
	// system's.
	RootCAs *x509.CertPool
}

// FetchRecord is one request (one hop of a redirect) as the host made or
// refused it. It holds no header and no body.
type FetchRecord struct {
	Method   string
	Host     string // as in the URL, with its port if it has one
	Path     string
	Status   int   // 0 when no response came
	Bytes    int64 // of the response's body
	Duration time.Duration
	Allowed  bool   // false: the policy refused it
	Error    string // why it failed or was refused, if it did
}

// A Fetcher is the sandbox's fetch under a policy: put it in
// Options.Globals as "fetch". It makes Requests and Responses as the
// sandbox's own (README, "The web platform in the sandbox"), and keeps a
// record of every request; a Fetcher given to several runs keeps theirs
// together.
type Fetcher struct {
	f *fetch.Fetcher
}

// Fetch returns a Fetcher with the policy: the sandbox's fetch, reaching
// only what the policy allows.
func Fetch(policy FetchPolicy) *Fetcher { return &Fetcher{fetch.New(fetch.Policy(policy))} }

// Records returns the record of every request made so far, in order.
func (f *Fetcher) Records() []FetchRecord {
	rs := f.f.Records()
	out := make([]FetchRecord, len(rs))
	for i, r := range rs {
		out[i] = FetchRecord(r)
	}
	return out
}

// bridged is the host function the glue calls.
func (f *Fetcher) bridged() any { return Async(f.f.Do) }

// glue is the JavaScript that makes it fetch.
func (f *Fetcher) glue() string { return fetch.Glue }

func (f *Fetcher) names() []string { return []string{"fetch"} }

// A glued value is given to the sandbox as a host value (bridged) that
// JavaScript (glue) makes into the global of its name: a Fetcher, Timers,
// and in a worker process the host's (remoteGlued). Runtime.Run's
// Options.Globals take one (source.Config.Glue; validate checks its name),
// and an Executor's tools take a Fetcher (engine.VM.DefineGluedTool).
type glued interface {
	bridged() any
	glue() string
	names() []string // the globals the glue makes
}

// unglue is what a glued value crosses as: its host function and its
// glue; ok is false for any other value, which crosses as it is.
func unglue(v any) (bridged any, glue string, ok bool) {
	g, ok := v.(glued)
	if !ok {
		return v, "", false
	}
	return g.bridged(), g.glue(), true
}

// gluedName refuses name for g unless g's glue makes it (a Fetcher is
// fetch, and no other name).
func gluedName(g glued, name string) error {
	if slices.Contains(g.names(), name) {
		return nil
	}
	return fmt.Errorf("this value is the global %s, under that name only", strings.Join(g.names(), ", "))
}

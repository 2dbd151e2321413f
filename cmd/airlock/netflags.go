package main

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/airlockrun/airlock"
)

// netFlags are the flags that give a run fetch (airlock.Fetch): without
// --allow-net there is none.
func netFlags(fs *flag.FlagSet) {
	fs.String("allow-net", "", "give the program fetch, to these hosts only (comma-separated: api.example.com, *.example.com, host:8443)")
	fs.Bool("allow-http", false, "with --allow-net: allow http: URLs too (default: https only)")
	fs.String("secrets", "", "with --allow-net: a JSON file of headers the host adds per host, {\"api.example.com\": {\"Authorization\": \"Bearer ...\"}}; the program never sees them")
	fs.String("resolve", "", "with --allow-net: host:port=ip:port,... as curl's --resolve (the way to a private or local address)")
	fs.String("ca-file", "", "with --allow-net: PEM certificates https trusts instead of the system's")
}

// fetchFromFlags is the Fetcher the flags describe, or nil without
// --allow-net. Its errors never include a secret.
func fetchFromFlags(fs *flag.FlagSet) (*airlock.Fetcher, error) {
	p, err := policyFromFlags(fs)
	if p == nil || err != nil {
		return nil, err
	}
	return airlock.Fetch(*p), nil
}

// policyFromFlags is the fetch policy the flags describe, or nil without
// --allow-net. Its errors never include a secret.
func policyFromFlags(fs *flag.FlagSet) (*airlock.FetchPolicy, error) {
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	allow := get("allow-net")
	if allow == "" {
		for _, name := range []string{"secrets", "resolve", "ca-file"} {
			if get(name) != "" {
				return nil, fmt.Errorf("--%s needs --allow-net", name)
			}
		}
		if get("allow-http") == "true" {
			return nil, errors.New("--allow-http needs --allow-net")
		}
		return nil, nil
	}
	policy := airlock.FetchPolicy{AllowHTTP: get("allow-http") == "true"}
	for _, h := range strings.Split(allow, ",") {
		if h = strings.TrimSpace(h); h != "" {
			policy.Allow = append(policy.Allow, h)
		}
	}
	if file := get("secrets"); file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--secrets: %w", err)
		}
		if err := json.Unmarshal(b, &policy.Secrets); err != nil {
			// (json's errors quote no value of the file)
			return nil, fmt.Errorf("--secrets: %s must be a JSON object of host → header → value", file)
		}
	}
	if r := get("resolve"); r != "" {
		policy.Resolve = map[string]string{}
		for _, pair := range strings.Split(r, ",") {
			from, to, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || !strings.Contains(from, ":") || !strings.Contains(to, ":") {
				return nil, fmt.Errorf("--resolve: %q is not host:port=ip:port", pair)
			}
			policy.Resolve[strings.ToLower(from)] = to
		}
	}
	if file := get("ca-file"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		policy.RootCAs = x509.NewCertPool()
		if !policy.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file: %s holds no PEM certificate", file)
		}
	}
	return &policy, nil
}

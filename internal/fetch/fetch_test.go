package fetch

import (
	"net/netip"
	"testing"
)

// Host patterns: exact names, "*." for subdomains only, ports, case.
func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, host, port string
		want                bool
	}{
		{"api.example.com", "api.example.com", "443", true},
		{"API.Example.com", "api.example.com", "80", true},
		{"api.example.com", "api.example.com", "8443", false},
		{"api.example.com:8443", "api.example.com", "8443", true},
		{"api.example.com:8443", "api.example.com", "443", false},
		{"api.example.com", "x.api.example.com", "443", false},
		{"*.example.com", "api.example.com", "443", true},
		{"*.example.com", "a.b.example.com", "443", true},
		{"*.example.com", "example.com", "443", false},
		{"*.example.com", "evilexample.com", "443", false},
		{"[::1]", "::1", "443", true},
		{"10.0.0.1", "10.0.0.1", "80", true},
	} {
		if got := matches(c.pattern, c.host, c.port); got != c.want {
			t.Errorf("matches(%q, %q, %q) = %v", c.pattern, c.host, c.port, got)
		}
	}
}

// The addresses no public host has are not public, in every notation.
func TestPublic(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"100.64.0.1", "0.0.0.0", "0.1.2.3", "224.0.0.1", "255.255.255.255", "240.0.0.1", "198.18.0.1", "192.0.2.1",
		"::1", "::", "fe80::1", "fc00::1", "fd00:ec2::254", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
		"64:ff9b::a00:1", "2002:a00:1::", "2001::1", "2001:db8::1", "::127.0.0.1", "::7f00:1", "fec0::1", "192.88.99.1"} {
		if public(netip.MustParseAddr(s)) {
			t.Errorf("%s is public", s)
		}
	}
	for _, s := range []string{"93.184.216.34", "8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"} {
		if !public(netip.MustParseAddr(s)) {
			t.Errorf("%s is not public", s)
		}
	}
}

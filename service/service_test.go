package service

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("SANDBOX_ADDR", ":9100")
	t.Setenv("SANDBOX_MAX_CONCURRENT", "7")
	t.Setenv("SANDBOX_SESSION_TTL", "2m")
	t.Setenv("SANDBOX_MAX_OUTPUT", "1024")
	t.Setenv("SANDBOX_WORKSPACE_QUOTA", "4096")
	t.Setenv("SANDBOX_PIP_INDEX_URL", "http://127.0.0.1:3141/simple/")
	t.Setenv("SANDBOX_JAIL_PROC", "1")
	c, err := ConfigFromEnv()
	if err != nil || c.Addr != ":9100" || c.PipIndexURL != "http://127.0.0.1:3141/simple/" || !c.JailProc || c.MaxConcurrent != 7 || c.SessionTTL != 2*time.Minute || c.MaxOutput != 1024 || c.WorkspaceQuotaBytes != 4096 {
		t.Fatalf("%+v, %v", c, err)
	}
	for k, v := range map[string]string{"SANDBOX_MAX_CONCURRENT": "0", "SANDBOX_SESSION_TTL": "soon", "SANDBOX_MAX_OUTPUT": "-1", "SANDBOX_WORKSPACE_QUOTA": "lots", "SANDBOX_JAIL_PROC": "yes"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), k) {
				t.Fatalf("%s=%s: %v", k, v, err)
			}
		})
	}
	var d Config
	d.defaults()
	if d.Addr != "127.0.0.1:9000" || d.MaxRequestBytes != 32<<20 || d.MaxCallsInFlight != 8 || d.Workers != 0 || d.JSMaxOutput != 32<<10 || d.MaxConcurrent != 4 || d.SessionTTL != time.Hour || d.MaxOutput != 512<<10 || d.MaxFileBytes != 10<<20 ||
		d.WorkspaceQuotaBytes != 1<<30 || d.WorkspaceMaxEntries != 10000 {
		t.Fatalf("defaults: %+v", d)
	}
}

func TestCapped(t *testing.T) {
	c := &capped{limit: 5}
	c.Write([]byte("abc"))
	c.Write([]byte("defgh"))
	if got := c.String(); got != "abcde\n...[output truncated: 3 bytes cut]\n" {
		t.Fatalf("%q", got)
	}
	c = &capped{limit: 5}
	c.Write([]byte("abcde"))
	if got := c.String(); got != "abcde" {
		t.Fatalf("%q", got)
	}
}

// FuzzCleanName: a name cleanName accepts stays inside the workspace.
//
//	go test -run '^$' -fuzz FuzzCleanName -fuzztime 1m ./service
func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"a.txt", "in/b.csv", "../x", "/etc/passwd", "a/../../b", "./c", "a//b", "..", "...", "a/..", "\\x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		c, err := cleanName(name)
		if err != nil {
			return
		}
		joined := filepath.Join("/ws", c)
		if !strings.HasPrefix(joined, "/ws/") {
			t.Fatalf("cleanName(%q) = %q, which leaves the workspace (%s)", name, c, joined)
		}
	})
}

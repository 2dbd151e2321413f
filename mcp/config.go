package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Config lists upstream MCP servers in the common "mcpServers" shape that
// MCP clients use:
//
//	{"mcpServers": {
//	  "github": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_TOKEN": "…"}},
//	  "docs":   {"url": "https://docs.example.com/mcp", "timeouts": {"connect": "10s", "call": "2m"}}
//	}}
type Config struct {
	MCPServers map[string]ServerConfig `json:"mcpServers"`
}

// ServerConfig is one upstream server: a command to run and speak to over
// stdio, or the URL of a streamable HTTP endpoint.
type ServerConfig struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeouts bound this server's stages; a zero field means the
	// server's default (Options.ConnectTimeout, ListTimeout, CallTimeout).
	Timeouts Timeouts `json:"timeouts,omitzero"`
}

// Timeouts bound the stages of one upstream server. In a config file each
// is a Go duration ("10s", "1m30s") or a number of milliseconds.
type Timeouts struct {
	// Connect bounds starting or reaching the server and its answer to
	// initialize.
	Connect Duration `json:"connect,omitzero"`
	// List bounds its answer to tools/list (all pages).
	List Duration `json:"list,omitzero"`
	// Call bounds one tool call; a program's own time limit bounds it too.
	// An upstream that has not read a message of ours for this long is
	// stopped and connected again.
	Call Duration `json:"call,omitzero"`
}

// A Duration is a time.Duration written in JSON as a Go duration string
// or a number of milliseconds.
type Duration time.Duration

// UnmarshalJSON reads "10s" or 10000.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case string:
		p, err := time.ParseDuration(x)
		if err != nil {
			return err
		}
		*d = Duration(p)
	case float64:
		*d = Duration(x * float64(time.Millisecond))
	default:
		return fmt.Errorf("a duration is a string such as \"10s\" or a number of milliseconds, not %s", b)
	}
	if *d < 0 {
		return errors.New("a negative duration")
	}
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// LoadConfig reads a config file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(c.MCPServers) == 0 {
		return nil, fmt.Errorf("%s: no servers under \"mcpServers\"", path)
	}
	return &c, nil
}

package mcp

import (
	"encoding/json"
	"fmt"
	"os"
)

// Config lists upstream MCP servers in the common "mcpServers" shape that
// MCP clients use:
//
//	{"mcpServers": {
//	  "github": {"command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_TOKEN": "…"}},
//	  "docs":   {"url": "https://docs.example.com/mcp"}
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
}

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

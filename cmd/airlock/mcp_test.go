package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockrun/airlock/mcp"
)

// TestMain lets the test binary be the command: with AIRLOCK_CLI_ARGS set
// (a JSON array), it runs those arguments and exits, so that tests can
// start `airlock mcp` as an MCP client would.
func TestMain(m *testing.M) {
	if raw := os.Getenv("AIRLOCK_CLI_ARGS"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			os.Exit(3)
		}
		os.Exit(run(context.Background(), args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// command is this test binary started as `airlock ARGS...`.
func command(t *testing.T, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "AIRLOCK_CLI_ARGS="+string(raw))
	return cmd
}

// `airlock mcp` over stdio, reached by the SDK's client through a command
// transport; with --config it proxies another `airlock mcp`.
func TestMCPCommand(t *testing.T) {
	ctx := context.Background()
	connect := func(cmd *exec.Cmd) *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect(command(t, "mcp", "--memory", "16MiB"))
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "export default [1, 2].map(x => x * 21)"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "[21,42]\n" {
		t.Fatalf("%+v, %v", res, err)
	}

	// A proxy whose upstream is another airlock mcp: its run_code becomes
	// upstream.runCode in the sandbox.
	exe, _ := os.Executable()
	raw, _ := json.Marshal([]string{"mcp"})
	cfg := map[string]any{"mcpServers": map[string]any{"upstream": map[string]any{"command": exe, "env": map[string]string{"AIRLOCK_CLI_ARGS": string(raw)}}}}
	path := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(cfg)
	os.WriteFile(path, b, 0o644)
	proxy := connect(command(t, "mcp", "--config", path))
	res, err = proxy.CallTool(ctx, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": "const r = await upstream.runCode({ code: 'export default 6 * 7' }); export default r.result"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "42\n" {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestMCPCommand_UsageErrors(t *testing.T) {
	for _, args := range [][]string{{"mcp", "extra"}, {"mcp", "--config", "/does/not/exist.json"}, {"mcp", "--memory", "much"}} {
		if code, _, _ := cli(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	if code, _, errs := cli(t, "", "mcp", "-h"); code != 2 || !strings.Contains(errs, "--config") {
		t.Errorf("help: %d %q", code, errs)
	}
}

// The streamable HTTP endpoint of `airlock mcp --http`.
func TestMCPServeHTTP(t *testing.T) {
	s, err := mcp.NewServer(context.Background(), mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveHTTP(ctx, ln, s) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String(), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "throw new Error('no')"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "Error: no") {
		t.Fatalf("%+v, %v", res, err)
	}
	cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

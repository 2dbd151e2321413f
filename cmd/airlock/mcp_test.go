package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
		ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) // as main does
		os.Exit(run(ctx, args, os.Stdin, os.Stdout, os.Stderr))
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
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "[ 21, 42 ]\n" {
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
	if code, out, _ := cli(t, "", "mcp", "-h"); code != 0 || !strings.Contains(out, "--config") {
		t.Errorf("help: %d %q", code, out)
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

// `airlock serve` as a process: configured by the seed's environment
// variables, answering /health and /execute, stopping on SIGINT.
func TestServeCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := command(t, "serve")
	cmd.Env = append(cmd.Env, "SANDBOX_ADDR="+addr, "SANDBOX_WORKSPACE="+t.TempDir(), "SANDBOX_MAX_CONCURRENT=2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var resp *http.Response
	for i := 0; i < 100; i++ {
		if resp, err = http.Get("http://" + addr + "/health"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v", err)
	}
	resp, err = http.Post("http://"+addr+"/execute", "application/json", strings.NewReader(`{"code":"setResult(6*7)","runtime":"typescript"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if out["output"] != "42" {
		t.Fatalf("execute: %v", out)
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

func TestServeCommand_BadConfig(t *testing.T) {
	t.Setenv("SANDBOX_MAX_CONCURRENT", "many")
	if code, _, errs := cli(t, "", "serve"); code != 2 || !strings.Contains(errs, "SANDBOX_MAX_CONCURRENT") {
		t.Fatalf("%d %q", code, errs)
	}
}

// airlock mcp --workers: run_code in a worker process of the server.
func TestMCPCommand_Workers(t *testing.T) {
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.CommandTransport{Command: command(t, "mcp", "--workers", "1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "export default 40 + 2"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "42\n" {
		t.Fatalf("%+v, %v", res, err)
	}
}

// `airlock mcp --config F` with an upstream that never answers initialize
// beside a working one (a second `airlock mcp`): a program that does not
// name the hanging upstream answers while one that names it still waits
// for it (--first-wait is longer than the test), the working upstream's
// tool works, and list_apis says what the hanging one is doing.
func TestMCPCommand_HangingUpstream(t *testing.T) {
	exe, _ := os.Executable()
	raw, _ := json.Marshal([]string{"mcp"})
	cfg := map[string]any{"mcpServers": map[string]any{
		"upstream": map[string]any{"command": exe, "env": map[string]string{"AIRLOCK_CLI_ARGS": string(raw)}},
		"silent":   map[string]any{"command": "sleep", "args": []string{"3600"}},
	}}
	path := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(cfg)
	os.WriteFile(path, b, 0o644)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.CommandTransport{Command: command(t, "mcp", "--config", path, "--first-wait", "1h")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	named := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "await silent.anything({})"}})
		named <- err
	}()
	within, stop := context.WithTimeout(context.Background(), 30*time.Second) // a hang guard
	defer stop()
	res, err := cs.CallTool(within, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code": "const r = await upstream.runCode({ code: 'export default 6 * 7' }); export default r.result"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "42\n" {
		t.Fatalf("the working upstream beside a hanging one: %+v, %v", res, err)
	}
	select {
	case err := <-named:
		t.Fatalf("the program naming the hanging upstream did not wait for it: %v", err)
	default:
	}
	res, err = cs.CallTool(within, &sdk.CallToolParams{Name: "list_apis", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "- silent (silent): connecting: initialize has not answered after") {
		t.Fatalf("list_apis: %+v, %v", res, err)
	}
	cancel()
	<-named
}

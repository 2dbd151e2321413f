package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/agent"
	"github.com/openai/openai-go/v3/option"
)

func agentFlags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("airlock agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("mode", "code", "code (Appendix D: the model writes JavaScript steps in one executor, ending with final_answer), codemode (seed 002: a fresh sandbox per reply, ending with complete()) or classic (tool calling, with run_code)")
	fs.Int("max-steps", agent.DefaultMaxSteps, "give up after this many model calls")
	fs.String("model", "", "model name (default: $OPENAI_MODEL, else gpt-4o-mini)")
	fs.String("base-url", "", "OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, else OpenAI); the key is $OPENAI_API_KEY")
	fs.String("dir", "", "let the tools fs.read-file and fs.list-files read the files under this directory (default: no file tools)")
	fs.String("allow-host", "", "comma-separated hosts the http.get tool may fetch from (default: no http tool)")
	durationFlag(fs, "timeout", 10*time.Second, "time limit of one code step")
	fs.String("memory", "64MiB", "memory limit of the sandbox")
	fs.Int("max-output", agent.DefaultMaxOutput, "characters of each observation or tool result the model reads; a longer one keeps its head and tail around a marker (negative: no bound)")
	fs.String("prices", "", "a JSON price table, {\"MODEL\": {\"input\": 0.15, \"output\": 0.6}, ...} in US dollars per million tokens: the summary shows the run's cost when the model is in it (default: $AIRLOCK_PRICES, else no cost)")
	fs.Bool("json", false, "print the transcript as JSON at the end instead of streaming the steps")
	fs.Bool("no-color", false, "no colour in the display (also $NO_COLOR); off a terminal there is none")
	fs.Bool("v", false, "log each step with log/slog to standard error as well")
	netFlags(fs)
	return fs
}

// agentCommand runs `airlock agent [flags] TASK`.
func agentCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := agentFlags(stderr)
	rest, code, ok := parseCommand(fl, "usage: airlock agent [flags] TASK", args, 1, stdout)
	if !ok {
		return code
	}
	task := rest[0]
	if strings.TrimSpace(task) == "" {
		fmt.Fprintln(stderr, "airlock agent: the task is empty")
		return 2
	}
	get := func(name string) string { return fl.Lookup(name).Value.String() }
	memory, err := parseBytes(get("memory"))
	if err != nil {
		fmt.Fprintf(stderr, "airlock agent: --memory: %v\n", err)
		return 2
	}
	var maxSteps, maxOutput int
	fmt.Sscan(get("max-steps"), &maxSteps)
	fmt.Sscan(get("max-output"), &maxOutput)
	if maxOutput == 0 {
		fmt.Fprintln(stderr, "airlock agent: --max-output must not be 0")
		return 2
	}
	timeout := flagDuration(fl, "timeout")
	tools, err := builtinTools(get("dir"), get("allow-host"))
	if err != nil {
		fmt.Fprintf(stderr, "airlock agent: %v\n", err)
		return 2
	}
	tb, err := agent.NewToolbox(tools...)
	if err != nil {
		fmt.Fprintf(stderr, "airlock agent: %v\n", err)
		return 2
	}
	policy, err := policyFromFlags(fl)
	if err != nil {
		fmt.Fprintf(stderr, "airlock agent: %v\n", err)
		return 2
	}
	// newInterpreter is the sandbox's functions: fetch, with --allow-net.
	var instructions string
	newInterpreter := func(cfg agent.Config) *agent.Interpreter {
		it := agent.NewInterpreter(cfg)
		if policy != nil {
			_ = it.Register("fetch", airlock.Fetch(*policy)) // a fixed, valid name
		}
		return it
	}
	if policy != nil {
		instructions = "fetch reaches these hosts only: " + strings.Join(policy.Allow, ", ") + "."
	}
	prices, pricesFrom := get("prices"), "--prices"
	if prices == "" {
		prices, pricesFrom = os.Getenv("AIRLOCK_PRICES"), "$AIRLOCK_PRICES"
	}
	var table map[string]price
	if prices != "" {
		if table, err = loadPrices(prices); err != nil {
			fmt.Fprintf(stderr, "airlock agent: %s %s: %v\n", pricesFrom, prices, err)
			return 2
		}
	}
	asJSON := get("json") == "true"
	baseURL := get("base-url")
	if baseURL == "" {
		baseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if os.Getenv("OPENAI_API_KEY") == "" && baseURL == "" {
		fmt.Fprintln(stderr, "airlock agent: no API key: set OPENAI_API_KEY, or give --base-url (or OPENAI_BASE_URL) for an endpoint that needs none")
		return 2
	}
	var disp *display
	var mw []option.RequestOption
	if !asJSON {
		disp = newDisplay(stdout, stderr, get("no-color") == "true")
		defer disp.close()
		mw = append(mw, option.WithMiddleware(disp.middleware))
	}
	model := agent.NewOpenAI(agent.OpenAIConfig{BaseURL: get("base-url"), Model: get("model"), Options: mw})
	if disp != nil {
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.ID
		}
		disp.banner(model.Model, baseURL, names)
		if p, ok := table[model.Model]; ok {
			disp.price = &p
		}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if get("v") == "true" {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	onStep := func(s agent.Step) {
		if disp != nil {
			disp.stepDone(s)
		}
	}
	var tr *agent.Transcript
	switch get("mode") {
	case "code":
		a := &agent.CodeAgent{Model: model, Tools: tb, MaxSteps: maxSteps, OnStep: onStep, Logger: logger, MaxOutput: maxOutput,
			Executor: airlock.ExecutorOptions{Timeout: timeout, MemoryLimitBytes: memory}, Instructions: instructions}
		if policy != nil {
			a.Interpreter = newInterpreter(agent.Config{Completer: model})
		}
		tr, err = a.Run(ctx, task)
	case "codemode":
		it := newInterpreter(agent.Config{Completer: model, Timeout: timeout, MemoryLimitBytes: memory, MaxOutput: maxOutput})
		a := &agent.CodeModeAgent{Model: model, Tools: tb, Interpreter: it, MaxSteps: maxSteps, OnStep: onStep, Logger: logger, MaxOutput: maxOutput, Instructions: instructions}
		tr, err = a.Run(ctx, task)
	case "classic":
		it := newInterpreter(agent.Config{Completer: model, Timeout: timeout, MemoryLimitBytes: memory, MaxOutput: maxOutput})
		a := &agent.ClassicAgent{Model: model, Tools: tb, Interpreter: it, MaxSteps: maxSteps, OnStep: onStep, Logger: logger, MaxOutput: maxOutput, Instructions: instructions}
		tr, err = a.Run(ctx, task)
	default:
		fmt.Fprintf(stderr, "airlock agent: --mode must be code, codemode or classic, not %q\n", get("mode"))
		return 2
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(tr)
	} else {
		if err == nil && tr != nil && tr.Outcome == agent.OutcomeMaxSteps && len(tr.Steps) > 0 {
			// As smolagents does: the steps ran out, so ask once for the
			// best answer from what the steps found.
			// Its tokens and time count in the totals like any model call's.
			disp.setPhase("writing a final answer")
			start := time.Now()
			if c, ferr := askFinalAnswer(ctx, model, tr); ferr == nil {
				tr.FinalAnswer, tr.Outcome = c.Text, agent.OutcomeFinalAnswer
				tr.Usage.Add(c.Usage)
				tr.Duration += time.Since(start)
				disp.finalAnswerAsked(len(tr.Steps), c.Usage)
			}
		}
		disp.summary(tr)
	}
	if err != nil || tr.Outcome != agent.OutcomeFinalAnswer {
		return 1
	}
	return 0
}

// askFinalAnswer asks the model for a final answer from the steps of a
// run whose steps ran out: their code and observations, each cut, and the
// whole bounded. The completion carries the request's usage.
func askFinalAnswer(ctx context.Context, model *agent.OpenAI, tr *agent.Transcript) (*agent.Completion, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\n\nThe steps taken so far:\n", tr.Task)
	for _, s := range tr.Steps {
		fmt.Fprintf(&b, "\nStep %d\n", s.Index)
		if s.Code != "" {
			fmt.Fprintf(&b, "Code:\n%s\n", agent.ClipText(s.Code, 4000))
		}
		for _, c := range s.ToolCalls {
			fmt.Fprintf(&b, "Tool %s(%s): %s\n", c.Tool, agent.ClipText(c.Input, 1000), agent.ClipText(c.Result, 2000))
		}
		if s.Observation != "" {
			fmt.Fprintf(&b, "Observation:\n%s\n", agent.ClipText(s.Observation, 4000))
		}
	}
	c, err := model.Complete(ctx, agent.CompletionRequest{Messages: []agent.Message{
		{Role: "system", Content: "You were solving a task in steps and have no steps left. Give your final answer to the task from what the steps found, as plain text, without code. If they did not find it, say what is known and what is missing."},
		{Role: "user", Content: agent.ClipText(b.String(), 100_000)},
	}})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// builtinTools are the agent command's tools, none unless a flag grants
// them: file reading under one directory, HTTP GET to listed hosts.
func builtinTools(dir, hosts string) ([]agent.Tool, error) {
	var tools []agent.Tool
	if dir != "" {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("--dir: %v", err)
		}
		tools = append(tools, fileTools(root)...)
	}
	if hosts != "" {
		allowed := map[string]bool{}
		for _, h := range strings.Split(hosts, ",") {
			if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
				allowed[h] = true
			}
		}
		tools = append(tools, httpGetTool(allowed, nil))
	}
	return tools, nil
}

const maxFileBytes = 1 << 20

type pathIn struct {
	Path string `json:"path" jsonschema:"a path relative to the directory, such as notes/todo.md"`
}

type listIn struct {
	Path string `json:"path,omitempty" jsonschema:"a directory relative to the root; default the root"`
}

type entry struct {
	Name  string `json:"name"`
	Dir   bool   `json:"dir"`
	Bytes int64  `json:"bytes"`
}

// fileTools read under root only: os.Root refuses paths and symbolic links
// that leave it.
func fileTools(root *os.Root) []agent.Tool {
	read := agent.NewTool("fs.read-file", "Read a text file (at most 1 MiB) under the agent's directory",
		func(_ context.Context, in pathIn) (string, error) {
			f, err := root.Open(cleanRel(in.Path))
			if err != nil {
				return "", errors.New(strings.ReplaceAll(err.Error(), root.Name(), "."))
			}
			defer f.Close()
			b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
			if err != nil {
				return "", fmt.Errorf("read %s: %v", in.Path, err)
			}
			if len(b) > maxFileBytes {
				return "", fmt.Errorf("%s is larger than 1 MiB", in.Path)
			}
			return string(b), nil
		})
	list := agent.NewTool("fs.list-files", "List the files of a directory under the agent's directory",
		func(_ context.Context, in listIn) ([]entry, error) {
			p := cleanRel(in.Path)
			entries, err := fs.ReadDir(root.FS(), p)
			if err != nil {
				return nil, errors.New(strings.ReplaceAll(err.Error(), root.Name(), "."))
			}
			out := make([]entry, 0, len(entries))
			for _, e := range entries {
				info, err := e.Info()
				if err != nil {
					continue
				}
				out = append(out, entry{Name: e.Name(), Dir: e.IsDir(), Bytes: info.Size()})
			}
			return out, nil
		})
	return []agent.Tool{read, list}
}

// cleanRel turns what a model wrote into a path for the root: "/a" and
// "./a" are "a", "" is ".".
func cleanRel(p string) string {
	p = strings.TrimLeft(strings.TrimSpace(p), "/")
	if p == "" {
		return "."
	}
	return p
}

type getIn struct {
	URL string `json:"url" jsonschema:"an http or https URL on an allowed host"`
}

type getOut struct {
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"`
	Truncated   bool   `json:"truncated,omitempty"`
}

const maxBodyBytes = 256 << 10

// httpGetTool fetches from the allowed hosts only, redirects included.
func httpGetTool(allowed map[string]bool, client *http.Client) agent.Tool {
	hostOK := func(u *url.URL) error {
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("only http and https URLs can be fetched, not %q", u.Scheme)
		}
		if !allowed[strings.ToLower(u.Hostname())] && !allowed[strings.ToLower(u.Host)] {
			return fmt.Errorf("host %q is not allowed (allowed: %s)", u.Host, strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
		}
		return nil
	}
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		return hostOK(req.URL)
	}
	t := agent.NewTool("http.get", "Fetch a URL with HTTP GET (allowed hosts: "+strings.Join(slices.Sorted(maps.Keys(allowed)), ", ")+")",
		func(ctx context.Context, in getIn) (getOut, error) {
			u, err := url.Parse(in.URL)
			if err != nil {
				return getOut{}, fmt.Errorf("invalid URL: %v", err)
			}
			if err := hostOK(u); err != nil {
				return getOut{}, err
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				return getOut{}, err
			}
			resp, err := c.Do(req)
			if err != nil {
				return getOut{}, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
			if err != nil {
				return getOut{}, err
			}
			out := getOut{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
			if len(b) > maxBodyBytes {
				b, out.Truncated = b[:maxBodyBytes], true
			}
			out.Body = string(b)
			return out, nil
		})
	return t
}

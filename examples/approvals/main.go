// Command approvals governs the tool calls of model-style code with a
// policy: reads are allowed, a transfer waits for a person's approval (a
// console prompt here; a chat message or a ticket in a real system), and
// closing an account is denied with a message the code sees as an error.
// Then it prints the record of every call the code made.
//
//	go run ./examples/approvals
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/airlockrun/airlock/agent"
)

type accountIn struct {
	Account string `json:"account"`
}

type transferIn struct {
	From   string  `json:"from"`
	To     string  `json:"to"`
	Amount float64 `json:"amount" jsonschema:"in euros"`
}

func tools() []agent.Tool {
	balances := map[string]float64{"alice": 120, "bob": 40}
	return []agent.Tool{
		agent.NewTool("bank.get-balance", "Get an account's balance",
			func(_ context.Context, in accountIn) (float64, error) {
				b, ok := balances[in.Account]
				if !ok {
					return 0, fmt.Errorf("no account %q", in.Account)
				}
				return b, nil
			}),
		agent.NewTool("bank.transfer", "Move money between accounts",
			func(_ context.Context, in transferIn) (string, error) {
				return fmt.Sprintf("moved %.2f from %s to %s", in.Amount, in.From, in.To), nil
			}),
		agent.NewTool("bank.close-account", "Close an account",
			func(_ context.Context, in accountIn) (string, error) { return "closed " + in.Account, nil }),
	}
}

// policy allows reads, asks a person about transfers, and denies closing.
func policy(answers *bufio.Reader, prompt io.Writer) *agent.Policy {
	return &agent.Policy{
		Check: func(_ context.Context, c agent.CallRequest) agent.Decision {
			switch c.Tool {
			case "bank.get-balance":
				return agent.Decision{Action: agent.Allow}
			case "bank.transfer":
				return agent.Decision{Action: agent.Ask}
			default:
				return agent.Decision{Action: agent.Deny, Message: "only a person at the branch may do that"}
			}
		},
		Approve: func(ctx context.Context, c agent.CallRequest) agent.Decision {
			fmt.Fprintf(prompt, "approve %s %s? [y/N] ", c.Tool, c.Input)
			line, _ := answers.ReadString('\n')
			fmt.Fprintln(prompt)
			if strings.TrimSpace(line) == "y" {
				return agent.Decision{Action: agent.Allow}
			}
			return agent.Decision{Action: agent.Deny, Message: "the approver said no"}
		},
		Timeout: 5 * time.Second,
	}
}

// code is what a model might write for "Even out Alice's and Bob's
// balances, then close Bob's account".
const code = `
const a = bankGetBalance({ account: "alice" });
const b = await bankGetBalance({ account: "bob" });
const amount = (a - b) / 2;
const results = [];
for (const t of [{ from: "alice", to: "bob", amount }, { from: "alice", to: "bob", amount: 1000 }]) {
  try { results.push(bankTransfer(t)) } catch (err) { results.push("refused: " + err.message) }
}
try { bankCloseAccount({ account: "bob" }) } catch (err) { results.push("refused: " + err.message) }
results
`

func run(answers io.Reader, w io.Writer) error {
	tb, err := agent.NewToolbox(tools()...)
	if err != nil {
		return err
	}
	it := agent.NewInterpreter(agent.Config{Policy: policy(bufio.NewReader(answers), w)})
	e := it.Execute(context.Background(), code, agent.ExecuteOptions{Tools: tb})
	if !e.OK() {
		return fmt.Errorf("the code failed: %s", e.Error)
	}
	for _, r := range e.Result.([]any) {
		fmt.Fprintln(w, "result:", r)
	}
	fmt.Fprintln(w, "\ncalls:")
	for _, c := range e.Calls {
		outcome := "→ " + string(c.Output)
		if c.Error != "" {
			outcome = "✗ " + c.Error
		}
		if c.Denied {
			outcome += " (denied)"
		}
		fmt.Fprintf(w, "  %s %s %s\n", c.Tool, c.Input, outcome)
	}
	b, err := json.Marshal(e.Calls[0])
	if err != nil {
		return err
	}
	var rec map[string]any
	_ = json.Unmarshal(b, &rec)
	fmt.Fprintln(w, "\na record's fields:", strings.Join(keys(rec), ", "))
	return nil
}

func keys(m map[string]any) []string {
	var out []string
	for _, k := range []string{"tool", "input", "output", "error", "denied", "start", "durationNs"} {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

package service_test

import (
	"encoding/json"
	"testing"

	"github.com/airlockrun/airlock/service"
)

// A JavaScript execution whose default export held a function answered
// success with the function dropped from the result; it is now an error
// that names where the function was, in error and in scriptError alike.
// setResult takes the JSON text of its value (seed 004's output is JSON),
// so what JSON.stringify leaves out, it leaves out.
func TestJSResultThatCannotCross(t *testing.T) {
	url := newServer(t, service.Config{})
	var resp struct {
		Output      string `json:"output"`
		Status      string `json:"status"`
		Error       string `json:"error"`
		ExitCode    int    `json:"exit_code"`
		ScriptError struct {
			Name, Message string
		} `json:"scriptError"`
	}
	if err := json.Unmarshal(execute(t, url, "javascript", `export default { rows: [1, () => 2] }`), &resp); err != nil {
		t.Fatal(err)
	}
	const msg = "result.rows[1]: a function cannot leave the sandbox"
	if resp.Status != "error" || resp.ExitCode == 0 || resp.Error != "DataCloneError: "+msg ||
		resp.ScriptError.Name != "DataCloneError" || resp.ScriptError.Message != msg {
		t.Fatalf("response %+v", resp)
	}
	resp.Error = ""
	if err := json.Unmarshal(execute(t, url, "javascript", `setResult({ n: 1, f: () => 1 })`), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status != "success" || resp.Output != `{"n":1}` || resp.Error != "" {
		t.Fatalf("response %+v", resp)
	}
}

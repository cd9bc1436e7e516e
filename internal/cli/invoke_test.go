package cli

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// --invoke-arguments NAME=JSON gives a planned call its arguments instead
// of generated ones; anything but a JSON object for a name --invoke-tool
// names is a usage error.
func TestDriftInvokeArguments(t *testing.T) {
	_, url := mock(t, mockserver.Config{}, exampleV1)
	code, out, stderr := run(t, "", "drift", exampleV1, "--url", url, "--format", "json", "--invoke-tool", "list_branches",
		"--invoke-tool", "search_issues", "--invoke-arguments", `list_branches={"repo":"a/b", "n": 1.50}`)
	var plan struct {
		CallPlan []struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"call_plan"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 0 || len(plan.CallPlan) != 2 {
		t.Fatalf("exit %d %v %s", code, err, stderr)
	}
	var given bytes.Buffer
	_ = json.Compact(&given, plan.CallPlan[0].Arguments)
	if given.String() != `{"repo":"a/b","n":1.50}` {
		t.Errorf("given arguments: %s", plan.CallPlan[0].Arguments)
	}
	if got := string(plan.CallPlan[1].Arguments); got == "{}" || got == "" {
		t.Errorf("generated arguments: %s", got)
	}
	for _, a := range []string{`search_issues={}`, `list_branches=[1]`, `list_branches={"a":1,"a":2}`, `list_branches`, `list_branches=nope`} {
		if code, _, _ := run(t, "", "drift", exampleV1, "--url", url, "--invoke-tool", "list_branches", "--invoke-arguments", a); code != 2 {
			t.Errorf("--invoke-arguments %s: exit %d, want 2", a, code)
		}
	}
	if code, _, _ := run(t, "", "drift", exampleV1, "--url", url, "--invoke-tool", "list_branches",
		"--invoke-arguments", `list_branches={}`, "--invoke-arguments", `list_branches={}`); code != 2 {
		t.Errorf("given twice: exit %d, want 2", code)
	}
}

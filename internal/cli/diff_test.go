package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type diffJSON struct {
	Schema   string   `json:"schema"`
	Decision string   `json:"decision"`
	DeniedBy []string `json:"denied_by"`
	Changes  []struct {
		Name, Kind, Pointer, Direction, Severity string
	} `json:"changes"`
	ExitCode int `json:"exit_code"`
}

func TestDiffCommand(t *testing.T) {
	v1 := filepath.Join("..", "..", "examples", "acme-github.v1.tools-list.json")
	v2 := filepath.Join("..", "..", "examples", "acme-github.v2-rugpull.tools-list.json")
	code, out, stderr := run(t, "", "diff", v1, v1, "--format", "json")
	var r diffJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || r.Decision != "allow" || len(r.Changes) != 0 {
		t.Fatalf("same manifest: exit %d %s %v %s", code, out, err, stderr)
	}
	code, out, _ = run(t, "", "diff", v1, v2, "--format", "json", "--profile", "fail-closed")
	r = diffJSON{}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if code != 1 || r.Decision != "deny" || r.Schema != "mcpdrift.diff_report.v1" || r.ExitCode != 1 {
		t.Errorf("rug pull, fail-closed: exit %d decision %s", code, r.Decision)
	}
	want := map[string]bool{
		"add_deploy_key param_added_optional /inputSchema/properties/callback_url":    false,
		"add_deploy_key schema_drift_stable_description /inputSchema":                 false,
		"search_issues description_changed /description":                              false,
		"create_or_update_file annotation_hint_weakened /annotations/destructiveHint": false,
		"run_workflow_command tool_added ":                                            false,
		"list_branches tool_removed ":                                                 false,
	}
	for _, c := range r.Changes {
		k := c.Name + " " + c.Kind + " " + c.Pointer
		if _, ok := want[k]; ok {
			want[k] = true
		}
		if c.Direction == "" || c.Severity == "" {
			t.Errorf("incomplete record %+v", c)
		}
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("missing change %s", k)
		}
	}
	code, out, _ = run(t, "", "diff", v1, v2, "--format", "text", "--color", "never")
	if code != 1 || !strings.Contains(out, `gained optional parameter "callback_url" ("string"): widening`) {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "", "diff", v1, v2, "--format", "markdown")
	if code != 1 || !strings.Contains(out, "| severity | tool | change | kind |") {
		t.Errorf("markdown: %s", out)
	}
	// Bad input.
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.json", []byte(`{"tools":[{"name":"a","name":"b"}]}`))
	if code, _, stderr := run(t, "", "diff", v1, bad); code != 2 || !strings.Contains(stderr, "duplicate member name") {
		t.Errorf("bad input: %d %s", code, stderr)
	}
	if code, _, _ := run(t, "", "diff", v1); code != 2 {
		t.Error("one argument accepted")
	}
	if code, _, _ := run(t, "", "diff", v1, v2, "--profile", "yolo"); code != 2 {
		t.Error("unknown profile accepted")
	}
}

func TestSnapshotsPinDiffGate(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join("..", "..", "examples", "acme-github.v1.tools-list.json")
	v2 := filepath.Join("..", "..", "examples", "acme-github.v2-rugpull.tools-list.json")
	decl := filepath.Join(dir, "declared.json")
	code, _, stderr := run(t, "", "pin", "--input", v1, "--server-id", "acme-github", "-o", decl,
		"--endpoint", "https://mcp.acme.example/mcp", "--server-name", "acme", "--server-version", "1.0.0")
	if code != 0 {
		t.Fatal(stderr)
	}
	snap := filepath.Join(dir, "declared.snapshot.json")
	sb, err := os.ReadFile(snap)
	if err != nil {
		t.Fatalf("no snapshot beside the baseline: %v", err)
	}
	// The snapshot keeps the tools as the server sent them.
	orig, _ := os.ReadFile(v1)
	if !strings.Contains(string(sb), `"name": "search_issues"`) || !strings.Contains(string(orig), `"name": "search_issues"`) {
		t.Error("tool bytes not kept")
	}
	// The new observation, with its own snapshot and a rebound endpoint.
	obs, osnap := filepath.Join(dir, "observed.json"), filepath.Join(dir, "observed.snapshot.json")
	if code, _, stderr := run(t, "", "observe", "--input", v2, "--server-id", "acme-github", "-o", obs, "--snapshot", osnap, "-q",
		"--endpoint", "https://mcp.acme-cdn.example/mcp", "--server-name", "acme", "--server-version", "1.1.0"); code != 0 {
		t.Fatal(stderr)
	}
	code, out, _ := run(t, "", "diff", snap, osnap, "--format", "json", "--profile", "fail-closed")
	var r diffJSON
	json.Unmarshal([]byte(out), &r)
	if code != 1 || r.Decision != "deny" || !contains(r.DeniedBy, "server_endpoint_rebound") {
		t.Errorf("snapshot diff: exit %d %s %v", code, r.Decision, r.DeniedBy)
	}
	// Gate: structural changes beside the digest findings; the verdict is
	// the digest verdict.
	code, out, stderr = run(t, "", "gate", "--format", "json", "--observed", obs, "--declared", decl, "--declared-snapshot", snap, "--observed-snapshot", osnap)
	var g struct {
		Verdict           string                  `json:"verdict"`
		Findings          []json.RawMessage       `json:"findings"`
		StructuralChanges []struct{ Kind string } `json:"structural_changes"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err, stderr)
	}
	if code != 1 || g.Verdict != "pending_tool_manifest_review" || len(g.Findings) != 5 || len(g.StructuralChanges) < 6 {
		t.Errorf("gate: exit %d %s %d findings %d changes", code, g.Verdict, len(g.Findings), len(g.StructuralChanges))
	}
	// A declared snapshot that is not the baseline's makes the baseline
	// invalid (the validity check the gateway makes too): inconclusive.
	code, out, stderr = run(t, "", "gate", "--format", "json", "--observed", obs, "--declared", decl, "--declared-snapshot", osnap, "--observed-snapshot", snap)
	if code != 3 || !strings.Contains(out, "declared_definitions_mismatch") {
		t.Errorf("swapped snapshots: %d %s %s", code, out, stderr)
	}
	// An observed snapshot that is not the observation's is refused.
	code, _, stderr = run(t, "", "gate", "--format", "json", "--observed", obs, "--declared", decl, "--declared-snapshot", snap, "--observed-snapshot", snap)
	if code != 2 || !strings.Contains(stderr, "is not the observed record's") {
		t.Errorf("the declared snapshot as the observed one: %d %s", code, stderr)
	}
	if code, _, _ := run(t, "", "gate", "--format", "json", "--observed", obs, "--declared", decl, "--declared-snapshot", snap); code != 2 {
		t.Error("one snapshot accepted")
	}
	// A snapshot edited by hand is refused.
	edited := strings.Replace(string(sb), "Read one file", "Read every file", 1)
	ep := writeFile(t, dir, "edited.snapshot.json", []byte(edited))
	if code, _, stderr := run(t, "", "diff", ep, osnap); code != 2 || !strings.Contains(stderr, "does not recompute") {
		t.Errorf("edited snapshot: %d %s", code, stderr)
	}
	// --no-snapshot.
	d2 := filepath.Join(dir, "d2.json")
	run(t, "", "pin", "--input", v1, "--server-id", "acme-github", "-o", d2, "--no-snapshot")
	if _, err := os.Stat(filepath.Join(dir, "d2.snapshot.json")); !os.IsNotExist(err) {
		t.Error("--no-snapshot wrote a snapshot")
	}
	// pin --input refuses what is not complete, and writes nothing.
	bare := writeFile(t, dir, "bare.json", []byte(`[{"name":"a"}]`))
	d3 := filepath.Join(dir, "d3.json")
	if code, _, _ := run(t, "", "pin", "--input", bare, "--server-id", "s", "-o", d3); code != 2 {
		t.Error("pin of a bare array accepted")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "d3*")); len(left) != 0 {
		t.Errorf("refused pin left %v", left)
	}
}

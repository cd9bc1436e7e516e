package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/gate"
)

// observePinGate observes and pins baseline, observes next, and gates next
// against the baseline in format.
func observePinGate(t *testing.T, baseline, next []string, format string) (int, string) {
	t.Helper()
	list := func(names []string) []byte {
		var tools []map[string]any
		for _, n := range names {
			tools = append(tools, map[string]any{"name": n, "description": "d", "inputSchema": map[string]any{"type": "object"}})
		}
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"tools": tools}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dir := t.TempDir()
	v1, v2 := writeFile(t, dir, "v1.json", list(baseline)), writeFile(t, dir, "v2.json", list(next))
	o1, o2, decl := filepath.Join(dir, "o1.json"), filepath.Join(dir, "o2.json"), filepath.Join(dir, "declared.json")
	for _, args := range [][]string{
		{"observe", "--input", v1, "--server-id", "fs", "-o", o1, "-q"},
		{"observe", "--input", v2, "--server-id", "fs", "-o", o2, "-q"},
		{"pin", "--observed", o1, "-o", decl},
	} {
		if code, _, stderr := run(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	code, out, stderr := run(t, "", "gate", "--observed", o2, "--declared", decl, "--format", format)
	if stderr != "" && code == 2 {
		t.Fatalf("gate: %s", stderr)
	}
	return code, out
}

// The case: a new tool "dеlete_file" (Cyrillic е) is a HIGH new
// privileged tool, not a MEDIUM added one, with its own unsafe-name
// finding, and the reports show it escaped.
func TestGateNewLookAlikeTool(t *testing.T) {
	const fake = "d\u0435lete_file"
	code, out := observePinGate(t, []string{"read_file", "delete_file"}, []string{"read_file", "delete_file", fake}, "json")
	r := decodeReport(t, out)
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Name+" "+f.ReasonCode+" "+f.Severity)
	}
	for _, want := range []string{fake + " mcp_new_privileged_tool high", fake + " mcp_tool_name_unsafe high",
		fake + " mcp_tool_names_ambiguous high", "delete_file mcp_tool_names_ambiguous high"} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	if slices.Contains(got, fake+" mcp_tool_added medium") || code != 1 || r.Verdict != "pending_tool_manifest_review" {
		t.Errorf("exit %d verdict %s findings %q", code, r.Verdict, got)
	}
	for _, format := range []string{"text", "markdown", "sarif"} {
		_, out := observePinGate(t, []string{"read_file", "delete_file"}, []string{"read_file", "delete_file", fake}, format)
		if format == "text" && (!strings.Contains(out, `"d\u0435lete_file"  mcp_new_privileged_tool`) || !strings.Contains(out, "mcp_tool_name_unsafe")) {
			t.Errorf("text:\n%s", out)
		}
		if format == "sarif" {
			var log struct {
				Runs []struct {
					Results json.RawMessage `json:"results"`
				} `json:"runs"`
			}
			if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
				t.Fatalf("sarif: %v", err)
			}
			out = string(log.Runs[0].Results)
		}
		if strings.Contains(out, fake) {
			t.Errorf("%s: the raw look-alike name is printed:\n%s", format, out)
		}
	}
}

// Two names that differ only in case: the ambiguity finding on both, with
// the case-fold note.
func TestGateCaseCollision(t *testing.T) {
	code, out := observePinGate(t, []string{"read_file", "delete_file"}, []string{"read_file", "delete_file", "Delete_File"}, "json")
	var r gate.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range r.Findings {
		if f.ReasonCode == "mcp_tool_names_ambiguous" {
			n++
			if f.Severity != "high" || !slices.Equal(f.Notes, []string{"mcp_tool_names_fold_case"}) || (f.Name != "Delete_File" && f.Name != "delete_file") {
				t.Errorf("%+v", f)
			}
		}
	}
	if n != 2 || code != 1 {
		t.Errorf("exit %d, %d ambiguity findings: %s", code, n, out)
	}
	_, text := observePinGate(t, []string{"read_file", "delete_file"}, []string{"read_file", "delete_file", "Delete_File"}, "text")
	if !strings.Contains(text, "(note: mcp_tool_names_fold_case)") || !strings.Contains(text, "names should differ by more than case") {
		t.Errorf("text does not say which fold:\n%s", text)
	}
}

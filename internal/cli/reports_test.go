package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// TestLockCheckExtraReports: one lock check writes its report three ways
// (-o JSON, --report sarif=, --report markdown=) from one observation; a
// --report of a format the command has not is refused before anything
// runs.
func TestLockCheckExtraReports(t *testing.T) {
	dir := t.TempDir()
	lp := filepath.Join(dir, "mcpdrift.lock")
	s1, u1 := mock(t, mockserver.Config{Tools: e2eV1, ServerName: "files", ServerVersion: "1.0.0"}, "")
	if code, _, stderr := run(t, "", "lock", "add", "files", "--lock", lp, "--url", u1, "--by", "alice@example.com"); code != 0 {
		t.Fatalf("lock add: exit %d: %s", code, stderr)
	}
	if err := s1.SetTools(e2eV2); err != nil {
		t.Fatal(err)
	}
	js, sarif, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.sarif"), filepath.Join(dir, "r.md")
	code, _, stderr := run(t, "", "lock", "check", "--lock", lp, "--format", "json", "-o", js, "--report", "sarif="+sarif, "--report", "markdown="+md)
	if code != ExitFindings {
		t.Fatalf("lock check: exit %d, want 1: %s", code, stderr)
	}
	var j map[string]any
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &j) != nil {
		t.Fatalf("the JSON report: %v", err)
	}
	var s struct {
		Runs []struct {
			AutomationDetails struct{ ID string } `json:"automationDetails"`
			Results           []json.RawMessage
		}
	}
	b, err = os.ReadFile(sarif)
	if err != nil || json.Unmarshal(b, &s) != nil {
		t.Fatalf("the SARIF report: %v", err)
	}
	if len(s.Runs) != 1 || s.Runs[0].AutomationDetails.ID != "mcpdrift/gate/files/" || len(s.Runs[0].Results) == 0 {
		t.Errorf("SARIF runs %+v", s.Runs)
	}
	b, err = os.ReadFile(md)
	if err != nil || !strings.Contains(string(b), "files") || strings.Contains(string(b), "\x1b[") {
		t.Errorf("the Markdown report (%v): %.300s", err, b)
	}
	code, _, stderr = run(t, "", "lock", "check", "--lock", lp, "--report", "pdf="+filepath.Join(dir, "r.pdf"))
	if code != ExitUsage || !strings.Contains(stderr, "json|text|sarif|markdown|html") {
		t.Errorf("--report pdf=: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.pdf")); err == nil {
		t.Error("--report pdf= wrote a file")
	}
}

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// smallTools is n valid tools of about 60 bytes each, named t_00000...;
// rename, when set, renames tool i.
func smallTools(n int, rename map[int]string) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		name := fmt.Sprintf("t_%05d", i)
		if r, ok := rename[i]; ok {
			name = r
		}
		out[i] = json.RawMessage(`{"name":"` + name + `","inputSchema":{"type":"object"}}`)
	}
	return out
}

// toolsFile writes tools as a bare tools/list result.
func toolsFile(t *testing.T, tools []json.RawMessage) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"tools":[`)
	for i, x := range tools {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(x)
	}
	b.WriteString(`]}}`)
	p := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mockTools(t *testing.T, cfg mockserver.Config, tools []json.RawMessage) string {
	t.Helper()
	cfg.Tools = tools
	_, url := mock(t, cfg, "")
	return url
}

// TestLargeServerPinsAndDriftsByDefault: 10,000 tools in pages of 100 (100
// pages, beyond the old default cap of 50) pin and drift clean with no
// bound given.
func TestLargeServerPinsAndDriftsByDefault(t *testing.T) {
	url := mockTools(t, mockserver.Config{PageSize: 100}, smallTools(10000, nil))
	decl := filepath.Join(t.TempDir(), "declared.json")
	if code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "big", "-o", decl); code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	code, d, stderr := runDrift(t, decl, "--url", url)
	if code != 0 || d.Served == nil || d.Served.ToolCount != 10000 || d.Served.Completeness != "complete" || !d.Served.SecondCompared {
		t.Fatalf("drift: exit %d %+v %v: %s", code, d.Served, d.rules(), stderr)
	}
}

// TestExplicitPageCap: --max-list-pages still caps, with the same
// meaning: a partial list, MCP-DRIFT-PAGINATION-CAPPED, no missing-tool
// finding, and pin refuses.
func TestExplicitPageCap(t *testing.T) {
	tools := smallTools(1000, nil)
	url := mockTools(t, mockserver.Config{PageSize: 100}, tools)
	decl := toolsFile(t, tools)
	code, d, stderr := runDrift(t, decl, "--url", url, "--max-list-pages", "3")
	if code != 1 || d.Served == nil || d.Served.ToolCount != 300 || d.Served.Completeness != "partial" {
		t.Fatalf("drift capped: exit %d %+v: %s", code, d.Served, stderr)
	}
	rules := d.rules()
	if !slices.Contains(rules, "MCP-DRIFT-PAGINATION-CAPPED") || slices.ContainsFunc(rules, func(r string) bool { return strings.HasPrefix(r, "MCP-DRIFT-TOOL-MISSING") }) {
		t.Errorf("capped rules %v", rules)
	}
	code, _, stderr = run(t, "", "pin", "--url", url, "--server-id", "s", "-o", filepath.Join(t.TempDir(), "d.json"), "--max-list-pages", "3")
	if code != 2 || !strings.Contains(stderr, "capped at 3 pages") {
		t.Errorf("pin capped: exit %d: %s", code, stderr)
	}
}

// TestListBounds: a listing beyond --max-list-bytes or --max-list-tools is
// refused (exit 3, the bound named), never partly compared or pinned.
func TestListBounds(t *testing.T) {
	tools := smallTools(1000, nil)
	url := mockTools(t, mockserver.Config{PageSize: 100}, tools)
	decl := toolsFile(t, tools)
	for _, c := range []struct {
		flag, value, says string
	}{
		{"--max-list-bytes", "20000", "exceeded 20000 bytes"},
		{"--max-list-tools", "999", "exceeded 999 tools"},
	} {
		code, d, stderr := runDrift(t, decl, "--url", url, c.flag, c.value)
		if code != 3 || d.ExitCode != 3 || d.Served != nil || !strings.Contains(stderr, c.says) {
			t.Errorf("drift %s %s: exit %d %+v: %s", c.flag, c.value, code, d.Served, stderr)
		}
		code, _, stderr = run(t, "", "pin", "--url", url, "--server-id", "s", "-o", filepath.Join(t.TempDir(), "d.json"), c.flag, c.value)
		if code != 3 || !strings.Contains(stderr, c.says) {
			t.Errorf("pin %s %s: exit %d: %s", c.flag, c.value, code, stderr)
		}
	}
	// At the bound exactly, the list is read.
	if code, d, stderr := runDrift(t, decl, "--url", url, "--max-list-tools", "1000"); code != 0 || d.Served.ToolCount != 1000 {
		t.Errorf("at the tool bound: exit %d: %s", code, stderr)
	}
	for _, bad := range [][]string{{"--max-list-bytes", "0"}, {"--max-list-tools", "0"}, {"--max-list-pages", "0"}, {"--max-list-pages", "-1"}} {
		if code, _, _ := run(t, "", append([]string{"drift", decl, "--url", url}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestDefaultToolBound: 100,000 tools is the default bound: a listing of
// 100,000 is read, one of 100,001 refused.
func TestDefaultToolBound(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 tools")
	}
	tools := smallTools(100001, nil)
	url := mockTools(t, mockserver.Config{PageSize: 1000}, tools)
	code, _, stderr := run(t, "", "pin", "--url", url, "--server-id", "s", "-o", filepath.Join(t.TempDir(), "d.json"))
	if code != 3 || !strings.Contains(stderr, "exceeded 100000 tools") {
		t.Errorf("100,001 tools: exit %d: %s", code, stderr)
	}
}

// TestListDeadline: --timeout is one deadline over the whole run, however
// many pages a slow server has left.
func TestListDeadline(t *testing.T) {
	url := mockTools(t, mockserver.Config{PageSize: 1, Slow: 30 * time.Millisecond}, smallTools(500, nil))
	decl := toolsFile(t, smallTools(500, nil))
	start := time.Now()
	code, d, stderr := runDrift(t, decl, "--url", url, "--timeout", "600ms")
	if code != 3 || d.ExitCode != 3 || !strings.Contains(stderr, "deadline") {
		t.Errorf("slow server: exit %d: %s", code, stderr)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("a 600ms deadline took %v", el)
	}
}

// TestDuplicateOnTheLastPage: 100,000 tools whose last page repeats a name
// from the first: ambiguous (no manifest digest), never clean — drift
// reports it, the observed record says ambiguous, pin refuses, from the
// server and from the saved list (gate: TestDuplicateOnTheLastPageGated).
func TestDuplicateOnTheLastPage(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 10000
	}
	clean := smallTools(n, nil)
	dup := smallTools(n, map[int]string{n - 1: "t_00000"})
	url := mockTools(t, mockserver.Config{PageSize: 1000}, dup)
	dir := t.TempDir()
	decl := toolsFile(t, clean)
	observed := filepath.Join(dir, "observed.json")
	code, d, stderr := runDrift(t, decl, "--url", url, "--observed-out", observed, "--server-id", "big")
	if code != 1 || d.ExitCode != 1 || d.Served == nil || d.Served.ToolCount != n {
		t.Fatalf("drift: exit %d %+v: %s", code, d.Served, stderr)
	}
	if rules := d.rules(); !slices.Contains(rules, "MCP-CONF-DUPLICATE-TOOL-NAME t_00000") {
		t.Errorf("rules %v", rules)
	}
	var rec struct {
		Status   string `json:"status"`
		Observed struct {
			ManifestDigest *string `json:"manifest_digest"`
			ToolCount      int     `json:"tool_count"`
		} `json:"observed"`
	}
	b, err := os.ReadFile(observed)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Status != "ambiguous" || rec.Observed.ManifestDigest != nil || rec.Observed.ToolCount != n {
		t.Errorf("observed record: %v %+v", err, rec)
	}
	code, _, stderr = run(t, "", "pin", "--url", url, "--server-id", "big", "-o", filepath.Join(dir, "p.json"))
	if code != 2 || !strings.Contains(stderr, "ambiguous") {
		t.Errorf("pin --url: exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, "", "pin", "--input", toolsFile(t, dup), "--server-id", "big", "-o", filepath.Join(dir, "q.json"))
	if code != 2 || !strings.Contains(stderr, "ambiguous") {
		t.Errorf("pin --input: exit %d: %s", code, stderr)
	}
}

// TestDuplicateOnTheLastPageGated: the ambiguous record drift writes for a
// listing whose last page repeats a name is inconclusive to gate against
// the clean list's baseline: never clean. (1,000 tools: a 100,000-tool
// record and baseline would make the test long, and what gate decides
// does not depend on the count.)
func TestDuplicateOnTheLastPageGated(t *testing.T) {
	n := 1000
	clean := smallTools(n, nil)
	url := mockTools(t, mockserver.Config{PageSize: 100}, smallTools(n, map[int]string{n - 1: "t_00000"}))
	dir := t.TempDir()
	decl := toolsFile(t, clean)
	observed := filepath.Join(dir, "observed.json")
	if code, _, stderr := runDrift(t, decl, "--url", url, "--observed-out", observed, "--server-id", "big"); code != 1 {
		t.Fatalf("drift: exit %d: %s", code, stderr)
	}
	base := filepath.Join(dir, "base.json")
	if code, _, stderr := run(t, "", "pin", "--input", decl, "--server-id", "big", "-o", base, "--no-snapshot"); code != 0 {
		t.Fatalf("pin the clean list: exit %d: %s", code, stderr)
	}
	code, out, stderr := run(t, "", "gate", "--observed", observed, "--declared", base, "--format", "json")
	var g struct {
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || code != 3 || g.Verdict != "inconclusive" {
		t.Errorf("gate: exit %d, verdict %q (%v): %s", code, g.Verdict, err, stderr)
	}
}

// TestOneSessionServer: a server that keeps one session per client, and
// drops the older when another begins, fails a listing when the other
// connection opens beside it; that listing is made again alone, the run
// says so, and per-connection stability is still checked.
func TestOneSessionServer(t *testing.T) {
	tools := smallTools(200, nil)
	url := mockTools(t, mockserver.Config{Era: mockserver.LegacyOnly, MaxSessions: 1, PageSize: 10, Slow: 20 * time.Millisecond}, tools)
	decl := toolsFile(t, tools)
	var out strings.Builder
	code := Main([]string{"drift", decl, "--url", url, "--format", "json"}, strings.NewReader(""), &out, io.Discard)
	var d struct {
		Served *struct {
			ToolCount      int  `json:"tool_count"`
			SecondCompared bool `json:"second_connection_compared"`
		} `json:"served"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out.String()), &d); err != nil {
		t.Fatal(err)
	}
	if code == 3 || d.Served == nil || d.Served.ToolCount != 200 || !d.Served.SecondCompared {
		t.Fatalf("exit %d, served %+v, warnings %q", code, d.Served, d.Warnings)
	}
	if !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "while") && strings.Contains(w, "open") }) {
		t.Errorf("no warning says a listing was made again: %q", d.Warnings)
	}
}

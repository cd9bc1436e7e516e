package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/lock"
)

// lockReportOf is a check report of n servers with findings (each with
// findings findings) and clean clean ones.
func lockReportOf(n, findings, clean int) *lock.CheckReport {
	var rs []*lock.ServerResult
	for i := range n {
		g := &gate.Report{Verdict: "pending_tool_manifest_review", Mode: "granular", Profile: "default", ServerID: fmt.Sprintf("bad-%02d", i), ExitCode: 1, ObservedToolCount: findings}
		var pending []string
		for j := range findings {
			name := fmt.Sprintf("tool_%03d", j)
			g.Findings = append(g.Findings, gate.Finding{Name: name, ReasonCode: "mcp_tool_description_changed", Severity: "medium", Field: "description"})
			pending = append(pending, name)
		}
		rs = append(rs, &lock.ServerResult{Name: fmt.Sprintf("bad-%02d", i), Target: "http://127.0.0.1/mcp", Status: lock.StatusFindings, ExitCode: 1, Profile: "review", Pending: pending, Gate: g})
	}
	for i := range clean {
		g := &gate.Report{Verdict: "no_finding", Mode: "granular", Profile: "default", ObservedToolCount: 3}
		rs = append(rs, &lock.ServerResult{Name: fmt.Sprintf("good-%02d", i), Target: "http://127.0.0.1/ok", Status: lock.StatusClean, Profile: "review", Gate: g})
	}
	return lock.NewCheckReport("mcpdrift.lock", rs)
}

func renderLock(t *testing.T, r *lock.CheckReport, format string, verbose bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderLockCheck(&b, r, nil, format, Options{Verbose: verbose}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLockCheckTextTableThenFailingDetails: the summary, then a table of
// every server, then the details of the failing ones only; the clean ones
// are in the table alone.
func TestLockCheckTextTableThenFailingDetails(t *testing.T) {
	out := renderLock(t, lockReportOf(2, 3, 2), "text", false)
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], `mcpdrift lock check: "mcpdrift.lock", 4 server(s): 2 with findings`) {
		t.Fatalf("first line: %q", lines[0])
	}
	table := strings.Join(lines[2:7], "\n")
	for i, want := range []string{"STATUS", `findings  "bad-00"`, `findings  "bad-01"`, `clean     "good-00"`, `clean     "good-01"`} {
		if !strings.HasPrefix(lines[2+i], want) {
			t.Errorf("table row %d is %q, want it to start %q:\n%s", i, lines[2+i], want, table)
		}
	}
	if strings.Index(out, `FAIL "bad-00"`) < strings.Index(out, `clean     "good-01"`) {
		t.Errorf("details before the table:\n%s", out)
	}
	for _, bad := range []string{`FAIL "bad-00"`, `FAIL "bad-01"`, "mcp_tool_description_changed"} {
		if !strings.Contains(out, bad) {
			t.Errorf("the failing servers' details lack %q:\n%s", bad, out)
		}
	}
	if strings.Contains(out, `ok "good-00"`) || strings.Contains(out, "left out") {
		t.Errorf("a clean server detailed, or something left out of a short report:\n%s", out)
	}
	// --verbose details the clean ones too.
	if v := renderLock(t, lockReportOf(2, 3, 2), "text", true); !strings.Contains(v, `ok "good-00"`) || !strings.Contains(v, "no_finding") {
		t.Errorf("verbose does not detail the clean servers:\n%s", v)
	}
}

// TestLockCheckTextCapped: a server's details are capped at
// maxDetailLines lines and the servers detailed at maxDetailedServers,
// each cut said with how much was left out; --verbose leaves nothing out.
func TestLockCheckTextCapped(t *testing.T) {
	r := lockReportOf(maxDetailedServers+3, 60, 1)
	out := renderLock(t, r, "text", false)
	full := renderLock(t, r, "text", true)
	if !strings.Contains(out, fmt.Sprintf("… and the details of %d more servers that are not clean, left out", 3)) {
		t.Errorf("the servers left out are not counted:\n%s", out)
	}
	if strings.Contains(out, fmt.Sprintf(`FAIL "bad-%02d"`, maxDetailedServers)) || !strings.Contains(out, fmt.Sprintf(`"bad-%02d"`, maxDetailedServers)) {
		t.Errorf("server %d: detailed past the cap, or missing from the table", maxDetailedServers)
	}
	var cut int
	for _, s := range r.Servers[:maxDetailedServers] {
		d, err := lockCheckDetails(s, nil, false, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(d, "\n")
		if n != maxDetailLines+1 || !strings.Contains(d, "more lines of "+`"`+s.Name+`"'s details left out (--verbose shows everything)`) {
			t.Errorf("%s: %d lines, not capped at %d with the count:\n%s", s.Name, n, maxDetailLines, d)
		}
		cut++
	}
	if cut == 0 || strings.Contains(full, "left out") {
		t.Errorf("verbose left something out")
	}
	for i := range maxDetailedServers + 3 {
		if !strings.Contains(full, fmt.Sprintf(`FAIL "bad-%02d"`, i)) {
			t.Errorf("verbose: server %d not detailed", i)
		}
	}
	if lo, lf := strings.Count(out, "\n"), strings.Count(full, "\n"); lo >= lf/2 {
		t.Errorf("the capped report has %d lines, the full one %d", lo, lf)
	}
	// The count of lines left out is the true one.
	d, _ := lockCheckDetails(r.Servers[0], nil, false, Options{Verbose: true})
	total := strings.Count(d, "\n")
	want := fmt.Sprintf("… %d more lines of", total-maxDetailLines)
	if c, _ := lockCheckDetails(r.Servers[0], nil, false, Options{}); !strings.Contains(c, want) {
		t.Errorf("want %q in:\n%s", want, c)
	}
}

// TestLockCheckMarkdownTable: markdown has the table as a Markdown table,
// its cells escaped.
func TestLockCheckMarkdownTable(t *testing.T) {
	r := lockReportOf(1, 2, 1)
	r.Servers[0].Name = "a|b"
	out := renderLock(t, r, "markdown", false)
	if !strings.Contains(out, "| status | server | tools | to review | detail |\n|---|---|---:|---:|---|\n") || !strings.Contains(out, `a\|b`) {
		t.Errorf("markdown table:\n%s", out)
	}
}

package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// A tool name with a look-alike letter of another script never reaches
// text, Markdown or SARIF as it prints: every non-ASCII code point of a
// tool name is shown escaped, in every place a name appears. JSON keeps
// the name (it is data, and decodes to the same string).
const lookAlike = "d\u0435lete_file" // Cyrillic е

func checkLookAlike(t *testing.T, what, format, out string) {
	t.Helper()
	if format == "json" {
		return
	}
	if format == "sarif" {
		// Only the results carry names (the rules are the catalogue's).
		var log struct {
			Runs []struct {
				Results json.RawMessage `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
			t.Fatalf("%s sarif: %v", what, err)
		}
		out = string(log.Runs[0].Results)
	}
	if strings.Contains(out, "\u0435") {
		t.Errorf("%s %s: the raw look-alike reached the output:\n%s", what, format, out)
	}
	want := `d\u0435lete`
	if format == "html" {
		// The escape is marked (a span), the text is the same.
		out = strings.ReplaceAll(strings.ReplaceAll(out, `<span class="esc">`, ""), "</span>", "")
	}
	switch format {
	case "markdown":
		want = `d\\u0435lete`
	case "sarif":
		want = `d\\u0435lete` // a JSON string holding the escape
	}
	if !strings.Contains(out, want) {
		t.Errorf("%s %s: no escaped name %s in:\n%s", what, format, want, out)
	}
}

func TestLookAlikeNamesEscaped(t *testing.T) {
	r := granularFindings()
	for i := range r.Findings {
		r.Findings[i].Name = lookAlike
	}
	r.Findings = append(r.Findings, gate.Finding{Name: lookAlike, ReasonCode: "mcp_tool_name_unsafe", Severity: "high", Privileged: true})
	r.Details = append(r.Details, gate.Detail{Code: "mcp_pinned_tool_name_unsafe", Kind: "warning", Name: lookAlike, Message: "1 code point(s) outside [A-Za-z0-9_.-]: U+0435"})
	r.Warnings = append(r.Warnings, "mcp_pinned_tool_name_unsafe")
	r.StructuralChanges = []schemadiff.Change{{Name: lookAlike, Kind: schemadiff.ToolNameUnsafe, Pointer: "/name", Direction: schemadiff.Neutral, Severity: "high", Detail: "1 code point(s) outside [A-Za-z0-9_.-]: U+0435"}}
	for _, format := range Formats() {
		out := render(t, r, format, Options{})
		checkLookAlike(t, "gate", format, out)
		if format == "text" && !strings.Contains(out, "U+0435") {
			t.Errorf("text: the warning's code points are missing:\n%s", out)
		}
		if format == "json" {
			var back gate.Report
			if err := json.Unmarshal([]byte(out), &back); err != nil || back.Findings[0].Name != lookAlike {
				t.Errorf("json does not decode to the name: %v", err)
			}
		}
	}

	d := &probe.Report{Schema: probe.ReportSchemaID, Target: probe.Target{URL: "stdio:x", Class: probe.ClassStdio},
		Declared: probe.Declared{Source: "d.json", ToolCount: 1}, Served: &probe.Served{ToolCount: 1, Pages: 1, Completeness: "complete"},
		Findings: []probe.Finding{{RuleID: "MCP-CONF-TOOL-NAME-UNSAFE", Level: probe.LevelWarn, Severity: "medium", Tool: lookAlike, Message: "1 code point(s) outside [A-Za-z0-9_.-]: U+0435"}},
		ExitCode: probe.ExitFindings}
	for _, format := range DriftFormats() {
		var b strings.Builder
		if err := RenderDrift(&b, d, format, Options{}); err != nil {
			t.Fatal(err)
		}
		checkLookAlike(t, "drift", format, b.String())
	}

	df := diffReport()
	df.Changes = r.StructuralChanges
	for _, format := range DiffFormats() {
		var b strings.Builder
		if err := RenderDiff(&b, df, format, Options{}); err != nil {
			t.Fatal(err)
		}
		checkLookAlike(t, "diff", format, b.String())
	}
}

package report

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

func driftReport() *probe.Report {
	return &probe.Report{
		Schema:   probe.ReportSchemaID,
		Target:   probe.Target{URL: "https://mcp.acme.io/mcp\u202e", Class: probe.ClassProduction},
		Protocol: probe.Protocol{Era: "legacy", Reason: "no server/discover", ServerName: "srv\x1b[31m"},
		Declared: probe.Declared{Source: "declared.json", ToolCount: 2},
		Served:   &probe.Served{ToolCount: 2, Pages: 1, Completeness: "complete"},
		Findings: []probe.Finding{
			{RuleID: "MCP-DRIFT-SCHEMA", Level: probe.LevelError, Severity: "high", Tool: hostileName, Message: "the served schema differs in a breaking way",
				Changes: []schemadiff.Change{{Name: hostileName, Kind: "required_added", Pointer: "/inputSchema/required", Direction: "narrowing", Severity: "medium", Detail: "x\u200b is now required"}}},
			{RuleID: "MCP-AUTH-ANONYMOUS-LIST", Level: probe.LevelError, Severity: "high", Message: "anonymous", TargetClass: "production"},
			{RuleID: "MCP-DRIFT-LEGACY-SERVER", Level: probe.LevelInfo, Severity: "low", Message: "legacy"},
		},
		Warnings: []string{"the served tool " + safetext.Quote(hostileName) + " differs"},
		ExitCode: probe.ExitFindings,
	}
}

func TestRenderDrift(t *testing.T) {
	r := driftReport()
	for _, format := range DriftFormats() {
		var b strings.Builder
		if err := RenderDrift(&b, r, format, Options{Color: format == "text"}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if c, bad := rawUnsafe(out, format == "text"); bad {
			t.Errorf("%s: raw unsafe %U", format, c)
		}
		switch format {
		case "sarif":
			validateSARIF(t, "drift", out)
			if !strings.Contains(out, `"ruleId": "MCP-DRIFT-SCHEMA"`) || !strings.Contains(out, `"level": "error"`) {
				t.Errorf("sarif results: %s", out)
			}
		case "markdown":
			checkMarkdownTables(t, "drift", out)
			if !strings.Contains(out, "**Warning:**") {
				t.Errorf("markdown has no warning: %s", out)
			}
		case "text":
			if !strings.Contains(out, "MCP-DRIFT-SCHEMA") || !strings.Contains(out, "Exit 1") {
				t.Errorf("text: %s", out)
			}
		}
	}
	var b strings.Builder
	if err := RenderDrift(&b, r, "xml", Options{}); err == nil {
		t.Error("unknown format accepted")
	}
}

// A run that could not observe still writes one valid document in every
// format, saying so; SARIF marks the invocation failed.
func TestRenderDriftNotObserved(t *testing.T) {
	r := &probe.Report{Schema: probe.ReportSchemaID, Target: probe.Target{URL: "http://127.0.0.1:1/mcp", Class: probe.ClassLocal},
		Declared: probe.Declared{Source: "d.json"}, NotObserved: "cannot observe \"http://127.0.0.1:1/mcp\": connection refused\u202e", ExitCode: 3}
	for _, format := range DriftFormats() {
		var b strings.Builder
		if err := RenderDrift(&b, r, format, Options{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if c, bad := rawUnsafe(out, false); bad {
			t.Errorf("%s: raw unsafe %U", format, c)
		}
		switch format {
		case "sarif":
			validateSARIF(t, "not observed", out)
			if !strings.Contains(out, `"executionSuccessful": false`) || !strings.Contains(out, `"ruleId": "MCP-DRIFT-NOT-OBSERVED"`) || !strings.Contains(out, "toolExecutionNotifications") {
				t.Errorf("sarif: %s", out)
			}
		case "json":
			if !strings.Contains(out, `"not_observed": "cannot observe`) {
				t.Errorf("json: %s", out)
			}
		default:
			if !strings.Contains(strings.ToLower(out), "not observed") {
				t.Errorf("%s: %s", format, out)
			}
		}
	}
}

// The demo's reports are one document in every format.
func TestRenderDemoOneDocument(t *testing.T) {
	g := granularFindings()
	d := driftReport()
	for _, format := range DriftFormats() {
		var b strings.Builder
		if err := RenderDemo(&b, g, d, format, Options{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		switch format {
		case "sarif":
			validateSARIF(t, "demo", out)
			if strings.Count(out, `"mcpdriftReportSchema"`) != 2 {
				t.Errorf("sarif demo should have two runs")
			}
		case "json":
			if !strings.HasPrefix(out, "{\n  \"schema\": \"mcpdrift.demo_report.v1\"") {
				t.Errorf("json demo: %s", out[:min(len(out), 200)])
			}
		}
	}
	var b strings.Builder
	if err := RenderDemo(&b, g, d, "yaml", Options{}); err == nil {
		t.Error("unknown format accepted")
	}
}

package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/schemadiff"
)

func diffReport() *schemadiff.Report {
	return &schemadiff.Report{
		Schema: schemadiff.ReportSchemaID, Decision: schemadiff.Deny, Profile: "fail-closed",
		DeniedBy: []string{"param_added_optional"},
		Old:      schemadiff.Side{Source: "old\u202e.json", Form: "jsonrpc-response", ToolCount: 1, Completeness: "complete"},
		New:      schemadiff.Side{Source: "new.json", Form: "snapshot", ToolCount: 1, Completeness: "partial"},
		Changes:  hostileChanges(),
		Warnings: []string{"the new tool list is partial\x1b[0m"},
		ExitCode: 1,
	}
}

func TestRenderDiffHostile(t *testing.T) {
	r := diffReport()
	for _, format := range DiffFormats() {
		for _, color := range []bool{false, true} {
			var b strings.Builder
			if err := RenderDiff(&b, r, format, Options{Color: color}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if c, bad := rawUnsafe(out, color && format == "text"); bad {
				t.Errorf("%s: raw unsafe %U", format, c)
			}
			switch format {
			case "json":
				var back schemadiff.Report
				if err := json.Unmarshal([]byte(out), &back); err != nil || len(back.Changes) != 3 || back.Decision != "deny" {
					t.Errorf("json does not decode to the report: %v", err)
				}
			case "markdown":
				checkMarkdownTables(t, "diff", out)
				for _, bad := range []string{"<IMPORTANT>", "[x](", "@everyone", "\n+}", "http://"} {
					if strings.Contains(out, bad) {
						t.Errorf("markdown holds %q", bad)
					}
				}
			case "text":
				if !strings.Contains(out, "DENY") || !strings.Contains(out, "denied by: param_added_optional") {
					t.Errorf("text:\n%s", out)
				}
			}
		}
	}
	var b strings.Builder
	if err := RenderDiff(&b, r, "sarif", Options{}); err == nil {
		t.Error("diff has no sarif format yet; an unknown format must be an error")
	}
}

func TestRenderDiffNoChange(t *testing.T) {
	r := &schemadiff.Report{Schema: schemadiff.ReportSchemaID, Decision: schemadiff.Allow, Profile: "review", DeniedBy: []string{}, Changes: []schemadiff.Change{}, Warnings: []string{}}
	var b strings.Builder
	if err := RenderDiff(&b, r, "text", Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ALLOW") || !strings.Contains(b.String(), "Exit 0: nothing changed.") {
		t.Errorf("%s", b.String())
	}
}

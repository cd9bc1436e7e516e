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

// A diff whose every change is notation: the decision and its reason in
// the header, the tool marked, exit 0 said as such; the reason in markdown
// and JSON.
func TestRenderDiffNotationOnly(t *testing.T) {
	c := schemadiff.Change{Name: "get_tiny_image", Kind: schemadiff.SchemaNotationChanged, Pointer: "/inputSchema",
		Direction: schemadiff.Neutral, Severity: "low", Detail: "spelled differently; accepts exactly the same instances, with the same annotations"}
	r := &schemadiff.Report{
		Schema: schemadiff.ReportSchemaID, Decision: schemadiff.Allow, DecisionReason: schemadiff.ReasonNotationOnly, Profile: "fail-closed",
		DeniedBy: []string{}, Changes: []schemadiff.Change{c},
		Tools: []schemadiff.ToolVerdict{{Name: c.Name, Changes: 1, Severity: "low", NotationOnly: true, Decision: schemadiff.Allow, Reason: schemadiff.ReasonNotationOnly}},
		Old:   schemadiff.Side{Source: "old.json", Completeness: "complete"}, New: schemadiff.Side{Source: "new.json", Completeness: "complete"},
		Inconclusive: []string{}, Warnings: []string{}, ExitCode: schemadiff.ExitNoChange,
	}
	render := func(format string) string {
		var b strings.Builder
		if err := RenderDiff(&b, r, format, Options{}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	text := render("text")
	for _, want := range []string{
		"mcpdrift diff: ALLOW: notation only (profile fail-closed, 1 change(s))",
		`"get_tiny_image" (notation only: no review needed)`,
		`LOW the schema at "/inputSchema" is spelled differently but accepts the same instances  [schema_notation_changed]`,
		"Exit 0: only notation changed",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if md := render("markdown"); !strings.Contains(md, "### mcpdrift diff: allow (notation only)") {
		t.Errorf("markdown:\n%s", md)
	}
	var back struct {
		Reason string `json:"decision_reason"`
		Tools  []struct {
			Name         string `json:"name"`
			NotationOnly bool   `json:"notation_only"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(render("json")), &back); err != nil || back.Reason != "notation only" || len(back.Tools) != 1 || !back.Tools[0].NotationOnly {
		t.Errorf("json: %+v %v", back, err)
	}
}

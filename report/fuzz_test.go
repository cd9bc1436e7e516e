package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/gate"
)

var fuzzVerdicts = []string{
	gate.NoFinding, gate.NoFindingCoverageWarning, gate.PendingReview, gate.NotObserved,
	gate.PartialObservation, gate.ObservationAmbiguous, gate.Inconclusive,
}

var fuzzSeverities = []string{"high", "medium", "low", "none", ""}

// FuzzRender renders reports with arbitrary tool names, server ids and
// messages, and catalogue codes: no format fails or panics, the JSON
// formats stay valid, and text and Markdown hold no raw control character
// other than '\n'.
func FuzzRender(f *testing.F) {
	f.Add("search_issues", "github-tools", "msg", uint8(0), uint8(0), uint8(2), "description", true)
	f.Add(hostileName, "srv\u202e", "line\nbreak", uint8(5), uint8(1), uint8(6), "", false)
	f.Add("\x1b]8;;http://x\x07", "", "\xff\xfe", uint8(200), uint8(4), uint8(3), "a|b", true)
	f.Add("`|`|`", "@org/team", "<!--", uint8(17), uint8(2), uint8(0), "[x]", false)
	all := catalog.All()
	f.Fuzz(func(t *testing.T, name, server, msg string, code, sev, verdict uint8, field string, privileged bool) {
		fc := all[int(code)%len(all)]
		dc := all[int(code/3+1)%len(all)]
		digest := "sha256:" + name
		r := &gate.Report{
			Schema:                 gate.ReportSchemaID,
			Verdict:                fuzzVerdicts[int(verdict)%len(fuzzVerdicts)],
			Mode:                   "granular",
			Profile:                "default",
			ServerID:               server,
			ToolsListComplete:      field,
			ObservedManifestDigest: &digest,
			DeclaredManifestDigest: msg,
			ObservedToolCount:      int(code),
			Findings: []gate.Finding{{
				Name: name, ReasonCode: fc.Code, Severity: fuzzSeverities[int(sev)%len(fuzzSeverities)],
				Field: field, Privileged: privileged, ActionClass: msg, ObservedDigest: name, DeclaredDigest: server,
				Notes: []string{dc.Code, msg},
			}},
			Inconclusive: []string{dc.Code},
			Warnings:     []string{fc.Code, msg},
			Details: []gate.Detail{
				{Code: dc.Code, Kind: string(dc.Kind), Name: name, Message: msg},
				{Code: fc.Code, Kind: string(fc.Kind), Message: name},
			},
			ExitCode: int(verdict) % 5,
		}
		for _, format := range Formats() {
			for _, color := range []bool{false, true} {
				var b bytes.Buffer
				if err := Render(&b, r, format, Options{Color: color, ArtifactURI: server, ToolVersion: msg}); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				out := b.String()
				switch format {
				case "json", "sarif":
					if !json.Valid(b.Bytes()) {
						t.Fatalf("%s: invalid JSON:\n%s", format, out)
					}
				}
				if c, bad := rawUnsafe(out, color && format == "text"); bad {
					t.Fatalf("%s (color %v): raw %U in output", format, color, c)
				}
				if format == "text" {
					if color {
						out = stripANSI(out)
					}
					if strings.ContainsRune(out, 0x1b) {
						t.Fatalf("text: ESC outside colour codes")
					}
				}
				if format == "markdown" {
					checkMarkdownTables(t, "fuzz", out)
				}
			}
		}
		// The SARIF log names every result's rule correctly.
		var b bytes.Buffer
		_ = Render(&b, r, "sarif", Options{})
		var l sarifLog
		if err := json.Unmarshal(b.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		rules := l.Runs[0].Tool.Driver.Rules
		for _, res := range l.Runs[0].Results {
			if res.RuleIndex >= len(rules) || rules[res.RuleIndex].ID != res.RuleID {
				t.Fatalf("result %s has ruleIndex %d", res.RuleID, res.RuleIndex)
			}
		}
	})
}

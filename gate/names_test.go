package gate_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/gate"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// toolsJSON builds a bare tool array with the given names.
func toolsJSON(names ...string) string {
	var parts []string
	for _, n := range names {
		b, _ := json.Marshal(n)
		parts = append(parts, fmt.Sprintf(`{"name":%s,"description":"d","inputSchema":{"type":"object"}}`, b))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func notesOf(r *gate.Report, name, code string) []string {
	for _, f := range r.Findings {
		if f.Name == name && f.ReasonCode == code {
			return f.Notes
		}
	}
	return nil
}

func detailOf(r *gate.Report, name, code string) string {
	for _, d := range r.Details {
		if d.Name == name && d.Code == code {
			return d.Message
		}
	}
	return ""
}

// A new privileged look-alike: privileged because its fold classifies so,
// outside the safe set, and colliding with the pinned tool it imitates.
func TestNewLookAlikeOfPrivilegedTool(t *testing.T) {
	const fake = "d\u0435lete_file" // Cyrillic е
	d := pin(t, toolsJSON("search", "delete_file"))
	r := mustRun(t, gate.Input{Observed: observe(t, toolsJSON("search", "delete_file", fake), manifest.Complete), Declared: d})
	want := []string{
		"delete_file mcp_tool_names_ambiguous high",
		fake + " mcp_new_privileged_tool high",
		fake + " mcp_tool_name_unsafe high",
		fake + " mcp_tool_names_ambiguous high",
	}
	if got := findings(r); !slices.Equal(got, want) {
		t.Fatalf("findings %q, want %q", got, want)
	}
	if r.Verdict != gate.PendingReview || r.ExitCode != gate.ExitFindings {
		t.Errorf("verdict %s exit %d", r.Verdict, r.ExitCode)
	}
	if n := notesOf(r, fake, "mcp_tool_names_ambiguous"); !slices.Equal(n, []string{"mcp_tool_names_fold_confusable"}) {
		t.Errorf("notes %v", n)
	}
	for _, f := range r.Findings {
		if f.Name == fake && (!f.Privileged || f.ActionClass != "file_delete") {
			t.Errorf("%+v: want privileged file_delete", f)
		}
	}
	msg := detailOf(r, fake, "mcp_tool_name_unsafe")
	if !strings.Contains(msg, "U+0435") || strings.Contains(msg, fake) {
		t.Errorf("unsafe detail %q: want the code point, never the raw name", msg)
	}
	if msg := detailOf(r, "delete_file", "mcp_tool_names_ambiguous"); !strings.Contains(msg, "confusable fold") {
		t.Errorf("ambiguous detail %q", msg)
	}
}

// Every kind of disguise of a privileged name is a new privileged tool.
func TestDisguisedNewToolsArePrivileged(t *testing.T) {
	d := pin(t, toolsJSON("search"))
	for _, fake := range []string{
		"d\u0435lete_file", "del\u200bete_file", "ＤＥＬＥＴＥ_file", "𝐝𝐞𝐥𝐞𝐭𝐞_file", "de\u0301lete_file",
		"ex\u0435cute_command", "run_sh\u0435ll", "s\u0435nd_email", "gr\u03b1nt_access", "create_p\u0430yment",
		"delete\u00adfile", "\u202erun_shell", "git\U000E0041_push",
	} {
		r := mustRun(t, gate.Input{Observed: observe(t, toolsJSON("search", fake), manifest.Complete), Declared: d})
		got := findings(r)
		if !slices.Contains(got, fake+" mcp_new_privileged_tool high") || !slices.Contains(got, fake+" mcp_tool_name_unsafe high") {
			t.Errorf("%q: findings %q", fake, got)
		}
	}
}

func TestCaseCollision(t *testing.T) {
	d := pin(t, toolsJSON("delete_file", "search"))
	r := mustRun(t, gate.Input{Observed: observe(t, toolsJSON("delete_file", "search", "Delete_File"), manifest.Complete), Declared: d})
	want := []string{
		"Delete_File mcp_new_privileged_tool high",
		"Delete_File mcp_tool_names_ambiguous high",
		"delete_file mcp_tool_names_ambiguous high",
	}
	if got := findings(r); !slices.Equal(got, want) {
		t.Fatalf("findings %q, want %q", got, want)
	}
	if n := notesOf(r, "Delete_File", "mcp_tool_names_ambiguous"); !slices.Equal(n, []string{"mcp_tool_names_fold_case"}) {
		t.Errorf("notes %v", n)
	}
	// Not privileged: medium; NFC: its own note.
	d = pin(t, toolsJSON("caf\u00e9_menu"))
	r = mustRun(t, gate.Input{Observed: observe(t, toolsJSON("caf\u00e9_menu", "cafe\u0301_menu"), manifest.Complete), Declared: d})
	want = []string{
		"cafe\u0301_menu mcp_tool_added medium",
		"cafe\u0301_menu mcp_tool_name_unsafe medium",
		"cafe\u0301_menu mcp_tool_names_ambiguous medium",
		"caf\u00e9_menu mcp_tool_names_ambiguous medium",
	}
	if got := findings(r); !slices.Equal(got, want) {
		t.Fatalf("findings %q, want %q", got, want)
	}
	if n := notesOf(r, "caf\u00e9_menu", "mcp_tool_names_ambiguous"); !slices.Equal(n, []string{"mcp_tool_names_fold_nfc"}) {
		t.Errorf("notes %v", n)
	}
	// The pinned name is vouched for, so it is a warning, not a finding.
	if !slices.Contains(r.Warnings, "mcp_pinned_tool_name_unsafe") {
		t.Errorf("warnings %v", r.Warnings)
	}
}

// Issue 30, item 7: a baseline does not vouch for names that collide. An
// unsafe pinned name is a warning, but pinned names equal after NFC or case
// folding are findings (exit 1) until each is acknowledged in the
// suppression file, with a reason and an expiry; then they are listed as
// suppressed (exit 0), and once the acknowledgement expires they hold the
// run again. Before, the gate passed them with a warning, exit 0, "the
// baseline vouches for them".
func TestPinnedCollisionsAreFindings(t *testing.T) {
	list := toolsJSON("caf\u00e9", "cafe\u0301", "Delete_File", "delete_file")
	d := pin(t, list)
	r := mustRun(t, gate.Input{Observed: observe(t, list, manifest.Complete), Declared: d})
	want := []string{"Delete_File mcp_tool_names_ambiguous high", "delete_file mcp_tool_names_ambiguous high", "cafe\u0301 mcp_tool_names_ambiguous medium", "caf\u00e9 mcp_tool_names_ambiguous medium"}
	if got := findings(r); !slices.Equal(got, want) || r.ExitCode != 1 {
		t.Fatalf("findings %+q exit %d", got, r.ExitCode)
	}
	if msg := detailOf(r, "Delete_File", "mcp_tool_names_ambiguous"); !strings.Contains(msg, "case folding") {
		t.Errorf("detail %q", msg)
	}
	if !slices.Contains(r.Warnings, "mcp_pinned_tool_name_unsafe") {
		t.Errorf("warnings %v", r.Warnings)
	}
	ack := func(expires string, names ...string) *manifest.Suppressions {
		s := &manifest.Suppressions{Version: 1}
		for _, n := range names {
			s.Items = append(s.Items, manifest.Suppression{Rule: "mcp_tool_names_ambiguous", Tool: n, Reason: "two tools by design (TICKET-1)", Expires: expires, Source: "mcpdrift.yaml"})
		}
		return s
	}
	all := []string{"caf\u00e9", "cafe\u0301", "Delete_File", "delete_file"}
	r = mustRun(t, gate.Input{Observed: observe(t, list, manifest.Complete), Declared: d, Suppressions: ack("2027-01-31", all...), Today: "2026-12-07"})
	if len(r.Findings) != 0 || len(r.Suppressed) != 4 || r.ExitCode != 0 {
		t.Errorf("acknowledged: findings %q suppressed %d exit %d", findings(r), len(r.Suppressed), r.ExitCode)
	}
	// One name of a group acknowledged: the other still holds the run.
	r = mustRun(t, gate.Input{Observed: observe(t, list, manifest.Complete), Declared: d, Suppressions: ack("2027-01-31", "caf\u00e9", "cafe\u0301", "Delete_File"), Today: "2026-12-07"})
	if got := findings(r); !slices.Equal(got, []string{"delete_file mcp_tool_names_ambiguous high"}) || r.ExitCode != 1 {
		t.Errorf("partly acknowledged: %q exit %d", got, r.ExitCode)
	}
	r = mustRun(t, gate.Input{Observed: observe(t, list, manifest.Complete), Declared: d, Suppressions: ack("2026-12-01", all...), Today: "2026-12-07"})
	if len(r.Findings) != 4 || r.ExitCode != 1 {
		t.Errorf("expired: findings %q exit %d", findings(r), r.ExitCode)
	}
}

func TestCoarseNames(t *testing.T) {
	list := toolsJSON("search", "d\u0435lete_file")
	o := observe(t, list, manifest.Complete)
	clean := &manifest.Policy{DeclaredMCPManifests: map[string]manifest.PolicyManifest{"srv": {ManifestDigest: *o.Observed.ManifestDigest}}}
	r := mustRun(t, gate.Input{Observed: o, Policy: clean})
	if r.Verdict != gate.NoFindingCoverageWarning || len(r.Findings) != 0 || !slices.Equal(r.Warnings, []string{"mcp_pinned_tool_name_unsafe"}) {
		t.Errorf("matching digest: verdict %s findings %q warnings %v", r.Verdict, findings(r), r.Warnings)
	}
	drift := &manifest.Policy{DeclaredMCPManifests: map[string]manifest.PolicyManifest{"srv": {ManifestDigest: "sha256:" + strings.Repeat("0", 64)}}}
	r = mustRun(t, gate.Input{Observed: o, Policy: drift})
	want := []string{"d\u0435lete_file mcp_tool_name_unsafe high", " mcp_tool_manifest_drift medium"}
	if got := findings(r); r.Verdict != gate.PendingReview || !slices.Equal(got, want) {
		t.Errorf("drifted digest: verdict %s findings %q", r.Verdict, got)
	}
	// Not observed or ambiguous: the verdict is the specification's, alone.
	r = mustRun(t, gate.Input{Observed: observe(t, toolsJSON("d\u0435lete_file", "d\u0435lete_file"), manifest.Complete), Policy: clean})
	if r.Verdict != gate.ObservationAmbiguous || len(r.Findings) != 0 || len(r.Warnings) != 0 {
		t.Errorf("ambiguous: verdict %s findings %q warnings %v", r.Verdict, findings(r), r.Warnings)
	}
}

// A new unsafe name on a partial observation is asserted like an addition
// (the observed tools are judged), and the unseen pages are a warning.
func TestNamesOnPartialObservation(t *testing.T) {
	d := pin(t, toolsJSON("search"))
	r := mustRun(t, gate.Input{Observed: observe(t, toolsJSON("search", "caf\u00e9"), manifest.Partial), Declared: d})
	got := findings(r)
	if !slices.Contains(got, "caf\u00e9 mcp_tool_name_unsafe medium") || r.Verdict != gate.PendingReview {
		t.Errorf("findings %q verdict %s", got, r.Verdict)
	}
}

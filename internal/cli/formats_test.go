package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestTextIsTheDefaultFormat: every command with --format prints text
// unless told otherwise, and takes --format json where it has a JSON form
// (codes has none: its other form is the Markdown catalogue).
func TestTextIsTheDefaultFormat(t *testing.T) {
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("format"); f != nil {
			seen++
			if f.DefValue != "text" {
				t.Errorf("%s: --format defaults to %q, not text", c.CommandPath(), f.DefValue)
			}
			if c.Name() != "codes" && !strings.Contains(f.Usage+c.Use, "json") {
				t.Errorf("%s: --format has no json form (%q)", c.CommandPath(), f.Usage)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(CommandTree())
	if seen < 9 {
		t.Errorf("only %d commands with --format", seen)
	}
}

// TestGateDefaultsToText: gate prints the text report by default (it
// printed JSON before; CHANGELOG.md says so), the same verdict and exit
// code as --format json.
func TestGateDefaultsToText(t *testing.T) {
	dir := t.TempDir()
	decl := writeFile(t, dir, "declared.json", nil)
	if code, _, stderr := run(t, "", "pin", "--input", exampleV1, "--server-id", "acme-github", "-o", decl, "--no-snapshot"); code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	obs := writeFile(t, dir, "observed.json", nil)
	if code, _, stderr := run(t, "", "observe", "--input", exampleV2, "--server-id", "acme-github", "-o", obs); code != 0 {
		t.Fatalf("observe: exit %d: %s", code, stderr)
	}
	code, text, _ := run(t, "", "gate", "--observed", obs, "--declared", decl)
	jcode, js, _ := run(t, "", "gate", "--observed", obs, "--declared", decl, "--format", "json")
	if code != 1 || jcode != 1 {
		t.Fatalf("exit %d (text), %d (json); want 1 for the rug pull", code, jcode)
	}
	if json.Valid([]byte(text)) || !strings.Contains(text, "pending_tool_manifest_review") {
		t.Errorf("gate's default output is not the text report:\n%s", text)
	}
	var r gateReport
	if err := json.Unmarshal([]byte(js), &r); err != nil || r.Verdict != "pending_tool_manifest_review" {
		t.Errorf("--format json: %v, verdict %q", err, r.Verdict)
	}
}

// withoutWrote is stderr without the line that says which files a run
// wrote (it names paths that differ from run to run).
func withoutWrote(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "mcpdrift: wrote ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

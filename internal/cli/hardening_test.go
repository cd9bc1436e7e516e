package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// Issue 8, item 1 (live form): a server hides a privileged tool past the
// page cap; drift --observed-out records the listing as partial, and the
// granular gate must not pass it (exit 3), with or without a policy that
// says partial_observation: inconclusive. Warning-only must be explicit.
func TestPartialObservationNeverPassesTheGate(t *testing.T) {
	dir := t.TempDir()
	var visible []string
	for i := range 4 {
		visible = append(visible, fmt.Sprintf(`{"name":"read_%d","description":"reads","inputSchema":{"type":"object"}}`, i))
	}
	hidden := `{"name":"delete_everything","description":"deletes","inputSchema":{"type":"object"}}`
	served := writeFile(t, dir, "served.json", []byte("["+strings.Join(append(visible, hidden), ",")+"]"))
	approved := writeFile(t, dir, "approved.json", []byte(`{"tools":[`+strings.Join(visible, ",")+"]}"))
	_, url := mock(t, mockserver.Config{PageSize: 2}, served)

	decl := filepath.Join(dir, "declared.json")
	if code, _, stderr := run(t, "", "pin", "--input", approved, "--server-id", "srv", "-o", decl, "--no-snapshot"); code != 0 {
		t.Fatalf("pin: %d %s", code, stderr)
	}
	obs := filepath.Join(dir, "observed.json")
	code, d, stderr := drift(t, approved, "--base-url", url, "--max-list-pages", "2", "--observed-out", obs, "--server-id", "srv")
	if code == 0 || d.Served == nil || d.Served.Completeness != "partial" {
		t.Fatalf("drift: exit %d served %+v %s", code, d.Served, stderr)
	}
	code, out, stderr := run(t, "", "gate", "--observed", obs, "--declared", decl)
	if code != 3 || !strings.Contains(out, `"inconclusive_manifest_partial_observation"`) {
		t.Errorf("gate --declared on a partial observation: exit %d\n%s%s", code, out, stderr)
	}
	var rec struct {
		Observed struct {
			ManifestDigest string `json:"manifest_digest"`
		} `json:"observed"`
	}
	b, _ := os.ReadFile(obs)
	json.Unmarshal(b, &rec)
	strict := writeFile(t, dir, "strict.yaml", []byte("declared_mcp_manifests:\n  srv:\n    manifest_digest: \""+rec.Observed.ManifestDigest+"\"\n    partial_observation: inconclusive\n"))
	if code, _, _ := run(t, "", "gate", "--observed", obs, "--policy", strict); code != 3 {
		t.Errorf("gate --policy (inconclusive): exit %d", code)
	}
	// With the declared baseline too the policy must be the baseline's.
	var dd struct {
		ManifestDigest string `json:"manifest_digest"`
	}
	b, _ = os.ReadFile(decl)
	json.Unmarshal(b, &dd)
	strictD := writeFile(t, dir, "strictd.yaml", []byte("declared_mcp_manifests:\n  srv:\n    manifest_digest: \""+dd.ManifestDigest+"\"\n    partial_observation: inconclusive\n"))
	if code, out, _ := run(t, "", "gate", "--observed", obs, "--declared", decl, "--policy", strictD); code != 3 {
		t.Errorf("gate --declared --policy (inconclusive): exit %d\n%s", code, out)
	}
	warn := writeFile(t, dir, "warn.yaml", []byte("declared_mcp_manifests:\n  srv:\n    manifest_digest: \""+dd.ManifestDigest+"\"\n    partial_observation: warn\n"))
	if code, out, _ := run(t, "", "gate", "--observed", obs, "--declared", decl, "--policy", warn); code != 0 || !strings.Contains(out, "manifest_partial_observation_allowed") {
		t.Errorf("gate with explicit warning-only: exit %d\n%s", code, out)
	}
}

// Issue 8, item 1 (diff): a partial NEW list never prints ALLOW with exit
// 0, under any profile, in any format.
func TestDiffPartialNewListNeverAllows(t *testing.T) {
	dir := t.TempDir()
	list := `{"name":"a","description":"x","inputSchema":{"type":"object"}}`
	old := writeFile(t, dir, "old.json", []byte(`{"tools":[`+list+`]}`))
	partial := writeFile(t, dir, "new.json", []byte(`{"tools":[`+list+`],"nextCursor":"p2"}`))
	for _, profile := range []string{"review", "fail-closed"} {
		for _, format := range []string{"json", "text", "markdown"} {
			code, out, stderr := run(t, "", "diff", old, partial, "--profile", profile, "--format", format)
			if code != 3 {
				t.Errorf("%s %s: exit %d %s", profile, format, code, stderr)
			}
			if strings.Contains(out, `"decision": "allow"`) || strings.Contains(out, "ALLOW") || strings.Contains(out, "diff: allow") {
				t.Errorf("%s %s: says allow:\n%s", profile, format, out)
			}
			if !strings.Contains(strings.ReplaceAll(out, `\_`, "_"), "diff_new_list_partial") {
				t.Errorf("%s %s: does not say the new list is partial:\n%s", profile, format, out)
			}
			if profile == "fail-closed" && !strings.Contains(strings.ToLower(out), "deny") {
				t.Errorf("fail-closed %s: not denied:\n%s", format, out)
			}
		}
	}
}

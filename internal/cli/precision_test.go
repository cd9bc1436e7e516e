package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// OLD maximum 9007199254740993, NEW 9007199254740992: every digest is
// equal (RFC 8785 rounds both to 9007199254740992), and diff still says
// what changed, warns about the number it cannot pin, and exits 1.
func TestDiffNumberBeyondPrecision(t *testing.T) {
	dir := t.TempDir()
	const list = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"transfer","description":"Move funds.","inputSchema":{"type":"object","properties":{"amount":{"type":"integer","maximum":%s}}}}]}}`
	oldPath := writeFile(t, dir, "old.json", []byte(strings.Replace(list, "%s", "9007199254740993", 1)))
	newPath := writeFile(t, dir, "new.json", []byte(strings.Replace(list, "%s", "9007199254740992", 1)))

	code, out, stderr := run(t, "", "diff", oldPath, newPath, "--format", "json")
	var r struct {
		diffJSON
		Old, New struct {
			ManifestDigest string `json:"manifest_digest"`
		}
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	if code != 1 || r.ExitCode != 1 || r.Decision != "review" {
		t.Errorf("exit %d (report %d) decision %s: a change exists", code, r.ExitCode, r.Decision)
	}
	if r.Old.ManifestDigest == "" || r.Old.ManifestDigest != r.New.ManifestDigest {
		t.Errorf("the digests should be equal: %q %q", r.Old.ManifestDigest, r.New.ManifestDigest)
	}
	if len(r.Changes) != 1 || r.Changes[0].Kind != "number_beyond_precision_changed" || r.Changes[0].Pointer != "/inputSchema/properties/amount/maximum" ||
		r.Changes[0].Direction != "neutral" || r.Changes[0].Severity != "medium" {
		t.Errorf("changes %+v", r.Changes)
	}
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], `old tool "transfer" at "/inputSchema/properties/amount/maximum": the integer 9007199254740993 is beyond float64 precision`) {
		t.Errorf("warnings %q", r.Warnings)
	}

	code, out, _ = run(t, "", "diff", oldPath, newPath, "--format", "text", "--color", "never")
	if code != 1 || !strings.Contains(out, `number at "/inputSchema/properties/amount/maximum" changed beyond float64 precision`) ||
		!strings.Contains(out, "the digests cannot see the change") || !strings.Contains(out, "Warning: old tool") || strings.Contains(out, "nothing changed") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "", "diff", oldPath, newPath, "--format", "markdown")
	if code != 1 || !strings.Contains(out, `number\_beyond\_precision\_changed`) || !strings.Contains(out, "changed beyond float64 precision") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
	// The same list on both sides: no change, exit 0, but the warning for
	// each side stays.
	code, out, _ = run(t, "", "diff", oldPath, oldPath, "--format", "json")
	r.Warnings, r.Changes = nil, nil
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || len(r.Changes) != 0 || len(r.Warnings) != 2 {
		t.Errorf("same list: exit %d, %d changes, warnings %q (%v)", code, len(r.Changes), r.Warnings, err)
	}
}

// observe and pin --input print one warning line per number the digests
// cannot pin, on stderr, even with --quiet; the artifacts are unchanged.
func TestObservePinWarnBeyondPrecision(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "tools.json", []byte(`{"tools":[
	 {"name":"a\u001b[31m","inputSchema":{"type":"object","properties":{"id":{"type":"integer","maximum":9223372036854775807}}}},
	 {"name":"b","inputSchema":{"type":"object","properties":{"n":{"maximum":9007199254740992,"enum":[12345678901234567890.0,1]}}}}]}`))
	for _, args := range [][]string{
		{"observe", "--input", in, "--server-id", "s"},
		{"observe", "--input", in, "--server-id", "s", "-q"},
		{"pin", "--input", in, "--server-id", "s", "-o", filepath.Join(dir, "declared.json")},
	} {
		code, _, stderr := run(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var warns []string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(l, "mcpdrift: warning: ") {
				warns = append(warns, l)
			}
		}
		if len(warns) != 2 {
			t.Fatalf("%v: %d warning lines:\n%s", args, len(warns), stderr)
		}
		if !strings.Contains(warns[0], `tool "a\u001b[31m" at "/inputSchema/properties/id/maximum": the integer 9223372036854775807 is beyond float64 precision and canonicalizes (RFC 8785) to 9223372036854776000`) {
			t.Errorf("%v: %q", args, warns[0])
		}
		if !strings.Contains(warns[1], `tool "b" at "/inputSchema/properties/n/enum/0": the integer 12345678901234567890.0`) {
			t.Errorf("%v: %q", args, warns[1])
		}
		if strings.ContainsRune(stderr, 0x1b) {
			t.Errorf("%v: raw escape on stderr", args)
		}
	}
}

package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// TestDeprecatedBaseURL: drift's old --base-url keeps working for one
// release, on the command line, as MCPDRIFT_BASE_URL and as base-url in
// mcpdrift.yaml, each with a warning naming the new spelling; --url and
// MCPDRIFT_URL win over the old names.
func TestDeprecatedBaseURL(t *testing.T) {
	_, url := mock(t, mockserver.Config{}, exampleV1)
	manifest, err := filepath.Abs(exampleV1)
	if err != nil {
		t.Fatal(err)
	}
	const flagWarning = "mcpdrift: warning: --base-url is deprecated: use --url instead"

	inDir(t, "")
	code, d, stderr := runDrift(t, manifest, "--base-url", url)
	if code != 0 || d.Served == nil || d.Served.ToolCount == 0 {
		t.Fatalf("--base-url: exit %d, served %+v, stderr %q", code, d.Served, stderr)
	}
	if !strings.Contains(stderr, flagWarning) {
		t.Errorf("--base-url: no deprecation warning: %q", stderr)
	}
	if _, _, stderr := runDrift(t, manifest, "--url", url); strings.Contains(stderr, "deprecated") {
		t.Errorf("--url warned: %q", stderr)
	}

	t.Setenv("MCPDRIFT_BASE_URL", url)
	code, _, stderr = runDrift(t, manifest)
	if code != 0 || !strings.Contains(stderr, "MCPDRIFT_BASE_URL is deprecated: use MCPDRIFT_URL instead") {
		t.Errorf("MCPDRIFT_BASE_URL: exit %d, stderr %q", code, stderr)
	}
	// The new name wins over the old one.
	t.Setenv("MCPDRIFT_URL", "http://127.0.0.1:1/unreachable")
	if code, _, stderr := runDrift(t, manifest); code != ExitInconclusive || strings.Contains(stderr, "MCPDRIFT_BASE_URL") {
		t.Errorf("MCPDRIFT_URL beside MCPDRIFT_BASE_URL: exit %d (want 3: the new name's unreachable URL), stderr %q", code, stderr)
	}
	if code, _, _ := runDrift(t, manifest, "--url", url); code != 0 {
		t.Errorf("--url over MCPDRIFT_URL: exit %d", code)
	}
	t.Setenv("MCPDRIFT_URL", "")
	t.Setenv("MCPDRIFT_BASE_URL", "")

	inDir(t, "version: 1\ncommands:\n  drift:\n    base-url: "+url+"\n")
	code, _, stderr = runDrift(t, manifest)
	if code != 0 || !strings.Contains(stderr, `"mcpdrift.yaml": base-url is deprecated: use url instead`) {
		t.Errorf("base-url in mcpdrift.yaml: exit %d, stderr %q", code, stderr)
	}
	inDir(t, "version: 1\ndefaults:\n  base-url: "+url+"\n")
	if code, _, stderr := runDrift(t, manifest); code != 0 || !strings.Contains(stderr, "base-url is deprecated") {
		t.Errorf("defaults.base-url: exit %d, stderr %q", code, stderr)
	}
}

// TestDeprecatedAliasHidden: an old spelling is not in --help, and the
// flag it stands for is.
func TestDeprecatedAliasHidden(t *testing.T) {
	code, out, _ := run(t, "", "drift", "--help")
	if code != 0 || strings.Contains(out, "base-url") || !strings.Contains(out, "--url string") {
		t.Errorf("drift --help: exit %d, mentions base-url %v, --url %v", code, strings.Contains(out, "base-url"), strings.Contains(out, "--url string"))
	}
}

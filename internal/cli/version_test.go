package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	oldV, oldC, oldD := Version, Commit, Date
	t.Cleanup(func() { Version, Commit, Date = oldV, oldC, oldD })
	Version, Commit, Date = "1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-05-01T10:00:00Z"

	code, out, stderr := run(t, "", "version", "--format", "json")
	if code != 0 {
		t.Fatalf("version --format json: exit %d: %s", code, stderr)
	}
	var b buildInfo
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("version --format json: %v: %s", err, out)
	}
	want := buildInfo{Version: "1.2.3", Commit: Commit, Date: Date, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if b != want {
		t.Errorf("version --format json = %+v, want %+v", b, want)
	}

	code, out, _ = run(t, "", "version")
	if code != 0 {
		t.Fatalf("version: exit %d", code)
	}
	for _, w := range []string{"mcpdrift 1.2.3\n", "commit:   " + Commit + "\n", "built:    " + Date + "\n", "go:       " + runtime.Version() + "\n", "platform: " + runtime.GOOS + "/" + runtime.GOARCH + "\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("version: no %q in\n%s", w, out)
		}
	}
	// cobra's --version flag prints the same version.
	if code, out, _ = run(t, "", "--version"); code != 0 || !strings.Contains(out, "1.2.3") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	if code, _, stderr = run(t, "", "version", "--format", "yaml"); code != ExitUsage || !strings.Contains(stderr, "--format must be text or json") {
		t.Errorf("version --format yaml: exit %d, %q", code, stderr)
	}
}

// TestVersionUnstamped: a build without the release's ldflags still says
// something for every field.
func TestVersionUnstamped(t *testing.T) {
	oldV, oldC, oldD := Version, Commit, Date
	t.Cleanup(func() { Version, Commit, Date = oldV, oldC, oldD })
	Version, Commit, Date = "", "", ""
	b := readBuildInfo()
	if b.Version == "" || b.Commit == "" || b.Date == "" {
		t.Errorf("unstamped build info has an empty field: %+v", b)
	}
}

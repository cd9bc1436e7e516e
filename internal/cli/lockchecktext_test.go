package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// TestLockCheckTextTable: lock check's text is a table of the servers,
// then the details of the failing one only; --verbose details the clean
// one too, with its gate report.
func TestLockCheckTextTable(t *testing.T) {
	lp := filepath.Join(t.TempDir(), "mcpdrift.lock")
	s1, u1 := mock(t, mockserver.Config{}, acmeV1)
	_, u2 := mock(t, mockserver.Config{}, acmeV1)
	lockAddOneTwo(t, lp, u1, u2)
	if err := s1.SetTools(loadMockTools(t, acmeV2)); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "", "lock", "check", "--lock", lp, "--color", "never")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[2], "STATUS") || !strings.HasPrefix(lines[3], `findings  "one"`) || !strings.HasPrefix(lines[4], `clean     "two"`) {
		t.Fatalf("no table of the servers first:\n%s", out)
	}
	if !strings.Contains(out, `FAIL "one"`) || !strings.Contains(out, `"add_deploy_key": changed`) || strings.Contains(out, `ok "two"`) {
		t.Errorf("not the failing server's details alone:\n%s", out)
	}
	code, verbose, _ := run(t, "", "lock", "check", "--lock", lp, "--color", "never", "--verbose")
	if code != 1 || !strings.Contains(verbose, `ok "two"`) || strings.Count(verbose, "mcpdrift gate:") != 2 || len(verbose) <= len(out) {
		t.Errorf("--verbose does not show everything (exit %d):\n%s", code, verbose)
	}
}

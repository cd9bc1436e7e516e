package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mockserver"
)

// wroteLines are the lines of stderr that say what a run wrote.
func wroteLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "mcpdrift: wrote ") {
			out = append(out, l)
		}
	}
	return out
}

// TestEveryWriteSaysWhatItWrote: every command that writes a file says so
// in one line on stderr, naming each file and what it is; a report to
// stdout is not a file written, and --quiet says nothing.
func TestEveryWriteSaysWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	q := func(name string) string { return `"` + in(name) + `"` }
	_, url := mock(t, mockserver.Config{}, acmeV1)
	s2, url2 := mock(t, mockserver.Config{}, acmeV1)
	lp := in("mcpdrift.lock")
	for _, c := range []struct {
		name string
		args []string
		want string // the one line, "" for none
	}{
		{"pin", []string{"pin", "--input", acmeV1, "--server-id", "acme", "-o", in("d.json")},
			"mcpdrift: wrote the snapshot to " + q("d.snapshot.json") + " and the declared baseline to " + q("d.json")},
		{"pin --url", []string{"pin", "--url", url, "--server-id", "acme", "-o", in("live.json"), "--no-snapshot"},
			"mcpdrift: wrote the declared baseline to " + q("live.json")},
		{"pin to stdout", []string{"pin", "--input", acmeV1, "--server-id", "acme"}, ""},
		{"observe", []string{"observe", "--input", acmeV2, "--server-id", "acme", "-o", in("o.json")},
			"mcpdrift: wrote the observed record to " + q("o.json")},
		{"observe -q", []string{"observe", "-q", "--input", acmeV2, "--server-id", "acme", "-o", in("o2.json")}, ""},
		{"gate", []string{"gate", "--observed", in("o.json"), "--declared", in("d.json"), "-o", in("gate.txt")},
			"mcpdrift: wrote the report to " + q("gate.txt")},
		{"gate to stdout", []string{"gate", "--observed", in("o.json"), "--declared", in("d.json")}, ""},
		{"diff", []string{"diff", acmeV1, acmeV2, "-o", in("diff.txt")},
			"mcpdrift: wrote the report to " + q("diff.txt")},
		{"drift", []string{"drift", in("d.json"), "--url", url, "-o", in("drift.txt"), "--observed-out", in("drift.observed.json"), "--report", "sarif=" + in("drift.sarif")},
			"mcpdrift: wrote the observed record to " + q("drift.observed.json") + ", the report to " + q("drift.txt") + " and the sarif report to " + q("drift.sarif")},
		{"lock add", []string{"lock", "add", "one", "--lock", lp, "--url", url, "--by", "a@example.com"},
			"mcpdrift: wrote the lock to " + q("mcpdrift.lock")},
		{"lock add two", []string{"lock", "add", "two", "--lock", lp, "--url", url2, "--by", "a@example.com"},
			"mcpdrift: wrote the lock to " + q("mcpdrift.lock")},
		{"lock profile", []string{"lock", "profile", "two", "fail-closed", "--lock", lp, "--by", "a@example.com"},
			"mcpdrift: wrote the lock to " + q("mcpdrift.lock")},
		{"lock export", []string{"lock", "export", "one", "--assay", "--lock", lp, "-o", in("one.declared.json")},
			"mcpdrift: wrote the Assay declared baseline to " + q("one.declared.json")},
		{"lock check", []string{"lock", "check", "--lock", lp, "-o", in("check.txt")},
			"mcpdrift: wrote the report to " + q("check.txt")},
		{"scan", []string{"scan", "--lock", lp, "--observed-dir", dir},
			`mcpdrift: wrote 2 observed records into "` + dir + `"`},
		{"discover", []string{"discover", dir, "--format", "json", "-o", in("inventory.json")},
			"mcpdrift: wrote the inventory to " + q("inventory.json")},
		{"lock remove", []string{"lock", "remove", "one", "--lock", lp},
			"mcpdrift: wrote the lock to " + q("mcpdrift.lock")},
	} {
		code, _, stderr := run(t, "", c.args...)
		if code > 1 {
			t.Fatalf("%s: exit %d: %s", c.name, code, stderr)
		}
		got := wroteLines(stderr)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: wrote nothing to a file, yet: %q", c.name, got)
		case c.want != "" && (len(got) != 1 || got[0] != c.want):
			t.Errorf("%s: the wrote line is %q, want %q", c.name, got, c.want)
		}
	}
	// approve writes the lock too.
	if err := s2.SetTools(loadMockTools(t, acmeV2)); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "", "approve", "two", "--all", "--lock", lp, "--by", "b@example.com", "--i-reviewed-the-denied-change")
	if got := wroteLines(stderr); code != 0 || len(got) != 1 || got[0] != "mcpdrift: wrote the lock to "+q("mcpdrift.lock") {
		t.Errorf("approve: exit %d, wrote lines %q: %s", code, got, stderr)
	}
	// A run that fails writes nothing and says nothing of it.
	code, _, stderr = run(t, "", "lock", "remove", "nobody", "--lock", lp)
	if code != 2 || len(wroteLines(stderr)) != 0 {
		t.Errorf("a failed lock remove: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(in("o2.json")); err != nil {
		t.Errorf("observe -q wrote nothing: %v", err)
	}
}

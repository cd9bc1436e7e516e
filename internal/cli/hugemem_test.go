package cli

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/hugemem"
	"github.com/mcpdrift/mcpdrift/internal/mapfile"
	"github.com/mcpdrift/mcpdrift/mockserver"
)

// TestHugePagesOnlyForFileRuns: a run that reads its inputs from files
// whole and ends (observe, pin --input/--observed, gate, diff) has its
// large buffers advised into huge pages and its large inputs mapped; a
// live run (drift, pin --url) and everything else does not, whatever ran
// before it in the process.
func TestHugePagesOnlyForFileRuns(t *testing.T) {
	defer hugemem.Enable(hugemem.Enabled())
	if hugemem.Enable(true); !hugemem.Enabled() {
		t.Skip("GODEBUG=disablethp=1 keeps the advice off")
	}
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	_, url := mock(t, mockserver.Config{}, exampleV1)
	steps := []struct {
		args []string
		want bool
	}{
		{[]string{"observe", "--input", exampleV1, "--server-id", "acme", "-o", p("observed.json")}, true},
		{[]string{"codes"}, false},
		{[]string{"pin", "--input", exampleV1, "--server-id", "acme", "-o", p("declared.json")}, true},
		{[]string{"pin", "--url", url, "--server-id", "acme", "-o", p("live.json")}, false},
		{[]string{"pin", "--observed", p("observed.json"), "-o", p("from-observed.json")}, true},
		{[]string{"drift", p("declared.json"), "--base-url", url, "--format", "json", "-o", p("drift.json")}, false},
		{[]string{"gate", "--observed", p("observed.json"), "--declared", p("declared.json"), "--format", "json", "-o", p("gate.json")}, true},
		{[]string{"diff", exampleV1, exampleV2, "--format", "json", "-o", p("diff.json")}, true},
		{[]string{"observe", "--not-observed", "--server-id", "acme", "-o", p("none.json")}, true},
	}
	for _, s := range steps {
		code, _, stderr := run(t, "", s.args...)
		if code == ExitUsage {
			t.Fatalf("%v: exit %d: %s", s.args, code, stderr)
		}
		if got := hugemem.Enabled(); got != s.want {
			t.Errorf("%v: huge-page advice on = %v, want %v", s.args, got, s.want)
		}
		if got := mapfile.Enabled(); got != s.want {
			t.Errorf("%v: mapping of large inputs on = %v, want %v", s.args, got, s.want)
		}
	}
}

// TestReadAllRefusesUnholdableSize: a size no buffer can hold (on a 32-bit
// system, a file above 2 GiB under a raised --max-input-bytes) is an
// error, not a truncated capacity nor a crash; a size it can hold reads.
func TestReadAllRefusesUnholdableSize(t *testing.T) {
	for _, size := range []int64{math.MaxInt64, math.MaxInt} {
		if _, err := readAll(strings.NewReader("x"), size); err == nil || !strings.Contains(err.Error(), "cannot be held in memory") {
			t.Fatalf("readAll of a %d-byte file: %v", size, err)
		}
	}
	b, err := readAll(strings.NewReader("abc"), 3)
	if err != nil || string(b) != "abc" {
		t.Fatalf("readAll: %q %v", b, err)
	}
}

package classify

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// heldOutName is one row of testdata/heldout_names.txt: a real tool name
// that is not in realNames, labelled by hand. The rule table is not tuned on
// these names (see README.md, "How good is it?").
type heldOutName struct {
	file   string
	line   int
	server string
	name   string
	priv   bool
	why    string
}

// issueNamed are the tools issue 9 names as missed. They are in the
// held-out files, but the issue's list of verbs and nouns was written from
// them, so the blind figures leave them out.
var issueNamed = map[string]bool{
	"firecrawl_interact":        true,
	"kubectl_generic":           true,
	"node_management":           true,
	"firecrawl_browser_execute": true,
	"delete_entities":           true,
	"firecrawl_monitor_delete":  true,
}

func readHeldOut(t *testing.T, path string) []heldOutName {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []heldOutName
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "|")
		if len(parts) != 4 || parts[1] == "" || (parts[2] != "P" && parts[2] != "-") || strings.TrimSpace(parts[3]) == "" {
			t.Fatalf("%s:%d: want server|name|P or -|reason, have %q", path, n, line)
		}
		out = append(out, heldOutName{file: path, line: n, server: parts[0], name: parts[1], priv: parts[2] == "P", why: parts[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// confusion counts a classifier's answers against the labels.
type confusion struct{ tp, fp, fn, tn int }

func (c confusion) precision() float64 {
	if c.tp+c.fp == 0 {
		return 1
	}
	return float64(c.tp) / float64(c.tp+c.fp)
}

func (c confusion) recall() float64 {
	if c.tp+c.fn == 0 {
		return 1
	}
	return float64(c.tp) / float64(c.tp+c.fn)
}

func (c *confusion) add(want, got bool) {
	switch {
	case want && got:
		c.tp++
	case !want && got:
		c.fp++
	case want && !got:
		c.fn++
	default:
		c.tn++
	}
}

func TestHeldOutNames(t *testing.T) {
	rows := readHeldOut(t, "testdata/heldout_names.txt")
	train := map[string]bool{}
	for _, rn := range realNames {
		train[rn.name] = true
	}
	seen := map[string]bool{}
	c := Default()
	var all, blind confusion
	for _, r := range rows {
		if train[r.name] {
			t.Errorf("%s:%d: %q is in the training set (realNames); a held-out name must not be", r.file, r.line, r.name)
		}
		if seen[r.name] {
			t.Errorf("%s:%d: %q is listed twice", r.file, r.line, r.name)
		}
		seen[r.name] = true
		got := c.Classify(r.name).Privileged
		all.add(r.priv, got)
		if !issueNamed[r.name] {
			blind.add(r.priv, got)
		}
		if got != r.priv && testing.Verbose() {
			t.Logf("disagree: %s %q labelled %v (%s), classified %v %q", r.server, r.name, r.priv, r.why, got, c.Classify(r.name).ActionClass)
		}
	}
	for _, x := range []struct {
		label string
		c     confusion
	}{{"all", all}, {"without the issue's named tools", blind}} {
		t.Logf("held-out names (%s): %d (%d privileged), TP=%d FP=%d FN=%d TN=%d, precision=%.3f recall=%.3f",
			x.label, x.c.tp+x.c.fp+x.c.fn+x.c.tn, x.c.tp+x.c.fn, x.c.tp, x.c.fp, x.c.fn, x.c.tn, x.c.precision(), x.c.recall())
	}
}

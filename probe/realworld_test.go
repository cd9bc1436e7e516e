package probe

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// The drift of every pair of the real-world corpus (testdata/realworld:
// tool lists two published versions of a server served), the older
// version declared and the newer one served, as `mcpdrift drift` computes
// it after the listing.
func realworldDrift(t *testing.T) map[string]*Result {
	t.Helper()
	dirs, err := filepath.Glob("../testdata/realworld/*")
	if err != nil || len(dirs) < 16 {
		t.Fatalf("no corpus: %v", err)
	}
	out := map[string]*Result{}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.tools-list.json"))
		if len(files) != 2 {
			t.Fatalf("%s: %d tool lists", dir, len(files))
		}
		slices.SortFunc(files, func(a, b string) int { return dotted(filepath.Base(a), filepath.Base(b)) })
		read := func(f string) string {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		out[filepath.Base(dir)] = Evaluate(Input{Target: "stdio:x", TargetClass: ClassStdio, Declared: tools(t, read(files[0])), Primary: obs(t, read(files[1]))})
	}
	return out
}

// dotted orders "0.0.70.tools-list.json" before "0.0.86.tools-list.json".
func dotted(a, b string) int {
	as, bs := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, ex := strconv.Atoi(as[i])
		y, ey := strconv.Atoi(bs[i])
		if ex == nil && ey == nil && x != y {
			return x - y
		}
		if ex != nil || ey != nil {
			if c := strings.Compare(as[i], bs[i]); c != 0 {
				return c
			}
		}
	}
	return len(as) - len(bs)
}

// Issue 30, items 1 and 3: an escalation is a widening of the input. On
// every pair of the corpus, each MCP-DRIFT-ESCALATION carries a change of
// the input that widens (or schema drift that is not a narrowing), and
// none of the output, of text, or that validates the same. Before, drift
// of @playwright/mcp 0.0.70 against 0.0.86 reported 12 escalations, five
// of them over changes that only narrowed (browser_click, browser_hover,
// browser_select_option, browser_type) or only edited a parameter's
// description (browser_console_messages); and server-filesystem
// 2026.1.14 → 2026.8.31 an escalation of read_media_file over its output
// schema.
func TestRealworldEscalationIsAWidening(t *testing.T) {
	all := realworldDrift(t)
	for pair, r := range all {
		for _, f := range r.Findings {
			if f.RuleID != "MCP-DRIFT-ESCALATION" {
				continue
			}
			widens := false
			for _, c := range f.Changes {
				if schemadiff.IsOutput(c) || schemadiff.NeedsNoReview(c) || c.Kind == schemadiff.DescriptionChanged || c.Kind == schemadiff.TitleChanged {
					t.Errorf("%s: %q: escalation over %s at %s", pair, f.Tool, c.Kind, c.Pointer)
				}
				if c.Direction == schemadiff.Widening || c.Kind == schemadiff.SchemaDriftStableDescription && c.Direction != schemadiff.Narrowing {
					widens = true
				}
			}
			if !widens {
				t.Errorf("%s: %q: escalation without a widening: %s", pair, f.Tool, f.Message)
			}
		}
	}
	rules := func(r *Result, tool string) []string {
		var out []string
		for _, f := range r.Findings {
			if f.Tool == tool {
				out = append(out, f.RuleID)
			}
		}
		return out
	}
	pw := all["playwright-0.0.70"]
	for _, n := range []string{"browser_click", "browser_hover", "browser_select_option", "browser_type"} {
		if got := rules(pw, n); !slices.Equal(got, []string{"MCP-DRIFT-SCHEMA"}) {
			t.Errorf("playwright %s: %v, want only MCP-DRIFT-SCHEMA (a narrowing breaks callers)", n, got)
		}
	}
	if got := rules(pw, "browser_console_messages"); !slices.Equal(got, []string{"MCP-DRIFT-DESCRIPTION"}) {
		t.Errorf("playwright browser_console_messages: %v, want only MCP-DRIFT-DESCRIPTION (a parameter's description is text)", got)
	}
	n := 0
	for _, f := range pw.Findings {
		if f.RuleID == "MCP-DRIFT-ESCALATION" {
			n++
		}
	}
	if n != 7 {
		t.Errorf("playwright 0.0.70 → 0.0.86: %d escalations, want the 7 that widen", n)
	}
	fs := all["filesystem-2026.1.14"]
	if got := rules(fs, "read_media_file"); slices.Contains(got, "MCP-DRIFT-ESCALATION") {
		t.Errorf("filesystem read_media_file: %v: an output change escalates nothing", got)
	}
	// context7 3.2.5 → 4.1.1 changed $schema and execution only: it
	// validates the same, and drift exits 0.
	if c7 := all["context7-3.2.5"]; c7.ExitCode != ExitOK {
		t.Errorf("context7 3.2.5 → 4.1.1: exit %d, findings %v", c7.ExitCode, c7.Findings)
	}
}

// The control of the rule above: a real widening under a stable
// description is still an escalation, ERROR on a privileged tool.
func TestRealworldEscalationStillCaught(t *testing.T) {
	pw := realworldDrift(t)["playwright-0.0.70"]
	for _, f := range pw.Findings {
		if f.Tool == "browser_evaluate" && f.RuleID == "MCP-DRIFT-ESCALATION" && f.Level == LevelError {
			return
		}
	}
	t.Error("playwright browser_evaluate gained optional \"target\" under a stable description: no ERROR escalation")
}

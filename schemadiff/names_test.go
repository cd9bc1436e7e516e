package schemadiff_test

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// A new look-alike of a privileged name is high, its detail gives the code
// points and never the name, and the sentence says what it is.
func TestNameChangeRecords(t *testing.T) {
	parse := func(s string) []manifest.Tool {
		tl, err := manifest.ParseToolList([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return tl.Tools
	}
	old := parse(`[{"name":"delete_file"}]`)
	cs := schemadiff.DiffTools(old, parse(`[{"name":"delete_file"},{"name":"d\u0435lete_file"}]`), schemadiff.ToolOptions{})
	got := map[string]schemadiff.Change{}
	for _, c := range cs {
		got[c.Name+" "+c.Kind] = c
	}
	u, ok := got["d\u0435lete_file "+schemadiff.ToolNameUnsafe]
	if !ok || u.Severity != "high" || !strings.Contains(u.Detail, "U+0435") || strings.Contains(u.Detail, "d\u0435lete") {
		t.Fatalf("unsafe record %+v", u)
	}
	a, ok := got["delete_file "+schemadiff.ToolNamesAmbiguous]
	if !ok || a.Severity != "high" || !strings.Contains(a.Detail, "confusable fold") {
		t.Fatalf("ambiguous record %+v", a)
	}
	if s := schemadiff.Sentence(u, safetext.Quote); !strings.HasPrefix(s, `tool name unsafe: "1 code point(s) outside [A-Za-z0-9_.-]: U+0435"`) {
		t.Errorf("sentence %q", s)
	}
	// Not privileged: medium.
	cs = schemadiff.DiffTools(parse(`[{"name":"search"}]`), parse(`[{"name":"search"},{"name":"Search"}]`), schemadiff.ToolOptions{})
	for _, c := range cs {
		if c.Kind == schemadiff.ToolNamesAmbiguous && c.Severity != "medium" {
			t.Errorf("%+v", c)
		}
	}
}

package schemadiff_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// TestSameBytesNoChanges: a tool without an external reference diffed
// against another parse of its own bytes has no change, under any
// options, so DiffTools skips such a pair (a tool with one has its
// external_ref_present records, TestSeedCases). Every tool of the
// corpus's styles and of the real-world lists.
func TestSameBytesNoChanges(t *testing.T) {
	lists := [][]byte{corpus.LeanTools(1500, 1), corpus.Tools(300, 2), corpus.Tools(300, 7)}
	files, err := filepath.Glob("../testdata/realworld/*/*.tools-list.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("real-world lists: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lists = append(lists, b)
	}
	n := 0
	for _, src := range lists {
		a, err := manifest.ParseToolList(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := manifest.ParseToolList(append([]byte(nil), src...))
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Tools {
			if a.Tools[i].MayReferOut() {
				t.Fatalf("%s: an external reference in the corpus", a.Tools[i].Name)
			}
			for _, opt := range []schemadiff.ToolOptions{{}, {Schema: schemadiff.Options{MaxNodes: 50, MaxRefDepth: 2}}} {
				if cs := schemadiff.DiffTool(&a.Tools[i], &b.Tools[i], opt); len(cs) != 0 {
					t.Fatalf("%s: %d changes between two parses of the same bytes: %+v", a.Tools[i].Name, len(cs), cs[0])
				}
			}
			n++
		}
	}
	t.Logf("%d tools", n)
}

package decide_test

import (
	"runtime"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/internal/corpus"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// TestDecideToolsClassifiesInParallel: a list large enough for its names
// to be classified on every CPU gets, tool by tool and in served order,
// the classification of each name on its own, and the same decisions as
// one tool at a time (every tenth): in a list with every third tool
// added and a duplicate name, the privileged tools are what Classify says.
func TestDecideToolsClassifiesInParallel(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	tl, err := manifest.ParseToolList(corpus.LeanTools(2100, 3))
	if err != nil {
		t.Fatal(err)
	}
	var pinned []manifest.Tool
	for i := range tl.Tools {
		if i%3 != 0 {
			pinned = append(pinned, tl.Tools[i])
		}
	}
	served := append(tl.Tools[:len(tl.Tools):len(tl.Tools)], tl.Tools[7]) // a duplicate, decided once
	c := classify.Default()
	got := decide.DecideTools(pinned, served, decide.Options{Classifier: c})
	if len(got) != len(tl.Tools) {
		t.Fatalf("%d decisions for %d tools", len(got), len(tl.Tools))
	}
	privileged := 0
	for i, d := range got {
		if d.Name != tl.Tools[i].Name {
			t.Fatalf("decision %d is %q, want %q (served order)", i, d.Name, tl.Tools[i].Name)
		}
		if want := c.Classify(d.Name).Privileged; d.Privileged != want {
			t.Fatalf("%q: privileged %v, want %v", d.Name, d.Privileged, want)
		}
		if d.Privileged {
			privileged++
		}
		wantReason := decide.ReasonUnchanged
		if i%3 == 0 {
			wantReason = decide.ReasonAdded
		}
		if d.Reason != wantReason {
			t.Fatalf("%q: reason %q, want %q", d.Name, d.Reason, wantReason)
		}
		if i%10 != 0 {
			continue
		}
		one := decide.DecideTools(pinned, served[i:i+1], decide.Options{Classifier: c})
		if one[0].Decision != d.Decision || one[0].Privileged != d.Privileged || one[0].Reason != d.Reason {
			t.Fatalf("%q: %+v in the list, %+v alone", d.Name, d, one[0])
		}
	}
	if privileged == 0 || privileged == len(got) {
		t.Fatalf("%d of %d privileged: the corpus should have both", privileged, len(got))
	}
}

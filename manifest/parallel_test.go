package manifest

import (
	"runtime"
	"testing"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// TestParallelDigestsAgree: a list large enough to be digested on every
// CPU (digestTools, BuildObserved) gets, tool by tool, the digests, field
// digests and classification computed one tool at a time, in order, and
// the same through a snapshot; parallelRange covers every index once.
func TestParallelDigestsAgree(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	n := 4*parallelChunk + 37
	tl, err := ParseToolList(corpus.LeanTools(n, 7))
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Tools) != n {
		t.Fatalf("%d tools", len(tl.Tools))
	}
	o := BuildObserved("s", tl, tl.Completeness, nil)
	c := classify.Default()
	for i := range tl.Tools {
		tool := &tl.Tools[i]
		want := Digest(tool.Proj.AppendToolPreimage(nil))
		if tool.digest != want {
			t.Fatalf("tool %d: digest %s, want %s", i, tool.digest, want)
		}
		fd, _ := tool.Proj.FieldDigests(nil)
		e := o.Observed.ToolDigests[i]
		r := c.Classify(tool.Name)
		if e.Name != tool.Name || e.ToolDigest != want || *e.FieldDigests != fd || e.Privileged != r.Privileged || e.PrivilegeClassification != r.Classification {
			t.Fatalf("tool %d: entry %+v, want %s %s %+v %+v", i, e, tool.Name, want, fd, r)
		}
	}
	sb, err := MarshalSnapshot("s", Identity{Endpoint: "e"}, tl, tl.Completeness)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadTools(sb, "snap.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Snapshot.Tools {
		if d := got.Snapshot.Tools[i].digest; d != tl.Tools[i].digest {
			t.Fatalf("snapshot tool %d: digest %s, want %s", i, d, tl.Tools[i].digest)
		}
	}
	for _, n := range []int{0, 1, parallelChunk - 1, 2 * parallelChunk, 5*parallelChunk + 3} {
		seen := make([]int32, n)
		parallelRange(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d: index %d covered %d times", n, i, s)
			}
		}
	}
}

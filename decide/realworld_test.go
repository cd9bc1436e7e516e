package decide

import (
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// Issue 30, item 2: the gateway serves a tool whose every change validates
// the same. @upstash/context7-mcp 3.2.5 → 4.1.1 changed only each schema's
// $schema (draft-07 → 2020-12, no keyword read differently) and the
// execution member (outside the digest projection): under fail-closed the
// gateway hid both tools before (schema_drift_stable_description denied).
func TestRealworldValidatesSameServed(t *testing.T) {
	read := func(f string) []manifest.Tool {
		b, err := os.ReadFile("../testdata/realworld/context7-3.2.5/" + f)
		if err != nil {
			t.Fatal(err)
		}
		tl, err := manifest.ParseToolList(b)
		if err != nil {
			t.Fatal(err)
		}
		return tl.Tools
	}
	old, nw := read("3.2.5.tools-list.json"), read("4.1.1.tools-list.json")
	for _, p := range []*schemadiff.DecisionProfile{schemadiff.ReviewProfile, schemadiff.FailClosedProfile} {
		ds := DecideTools(old, nw, Options{Profile: p})
		if len(ds) != 2 {
			t.Fatalf("%d decisions", len(ds))
		}
		for _, d := range ds {
			if !d.Serve || d.Decision != Allow || d.Reason != ReasonValidatesSame {
				t.Errorf("%s: %q: serve %v, %s, %s; want served, allow, %s", p.Name, d.Name, d.Serve, d.Decision, d.Reason, ReasonValidatesSame)
			}
			if v := d.Verdict(); v.Reason != schemadiff.ReasonValidatesSame || v.NotationOnly {
				t.Errorf("%s: %q: verdict %+v", p.Name, d.Name, v)
			}
		}
	}
}

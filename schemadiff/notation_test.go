package schemadiff

import (
	"fmt"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
)

func notationTools(t testing.TB, in, out []byte) []manifest.Tool {
	t.Helper()
	raw := fmt.Sprintf(`[{"name":"t","description":"d","inputSchema":%s,"outputSchema":%s}]`, in, out)
	tl, err := manifest.ParseToolList([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return tl.Tools
}

// TestNotationCorpus: on pairs of schemas that accept the same instances
// (notationCorpus: every spelling of issue 9 section 2, combined, nested in
// properties, items, anyOf branches and definitions), used as input and
// output schemas, in both directions, under both profiles, no change is
// graded above low, every change is schema_notation_changed, and the
// decision is allow for the reason "notation only", for the report and
// for the tool. Before this normalization the same corpus gave 1568 changes
// above low (784 per profile: schema_drift_stable_description and
// keyword_unmodeled on every pair) and review/deny on every pair.
func TestNotationCorpus(t *testing.T) {
	pairs := notationCorpus(6, 1)
	if len(pairs) < 100 {
		t.Fatalf("only %d pairs", len(pairs))
	}
	above, compared, records := 0, 0, 0
	for _, p := range pairs {
		for _, dir := range [2][2][]byte{{p.old, p.new}, {p.new, p.old}} {
			old := Input{Side: Side{Completeness: "complete"}, Tools: notationTools(t, dir[0], dir[0])}
			nw := Input{Side: Side{Completeness: "complete"}, Tools: notationTools(t, dir[1], dir[1])}
			for _, prof := range []*DecisionProfile{ReviewProfile, FailClosedProfile} {
				r := Compare(old, nw, prof, ToolOptions{})
				compared++
				for _, c := range r.Changes {
					records++
					if c.Severity != "low" {
						above++
					}
					if c.Kind != SchemaNotationChanged || c.Direction != Neutral {
						t.Errorf("base %d, %s:\n%s\n→ %s\n%s %s at %s (%s)", p.base, prof.Name, dir[0], dir[1], c.Kind, c.Direction, c.Pointer, c.Detail)
					}
				}
				if len(r.Changes) == 0 {
					continue // the same canonical form (1 and 1.0 only)
				}
				if r.Decision != Allow || r.DecisionReason != ReasonNotationOnly || r.ExitCode != ExitNoChange {
					t.Errorf("base %d, %s: decision %s (%q), exit %d", p.base, prof.Name, r.Decision, r.DecisionReason, r.ExitCode)
				}
				if v := r.Tool("t"); v == nil || !v.NotationOnly || v.Decision != Allow || v.Reason != ReasonNotationOnly {
					t.Errorf("base %d, %s: tool verdict %+v", p.base, prof.Name, v)
				}
			}
		}
	}
	if above != 0 {
		t.Errorf("%d changes above low on notation-only pairs", above)
	}
	t.Logf("%d pairs, %d comparisons (both directions, both profiles), %d notation records, %d above low", len(pairs), compared, records, above)
}

// TestNotationNormalizeCorpus: each spelling's normal form is a fixpoint,
// equal for every spelling of one base, and different between bases.
func TestNotationNormalizeCorpus(t *testing.T) {
	forms := map[int]string{}
	for _, p := range notationCorpus(6, 2) {
		for _, raw := range [][]byte{p.old, p.new} {
			v := mustRoot(t, raw)
			nf, ok := Normalize(v)
			if !ok {
				t.Fatalf("no normal form: %s", raw)
			}
			if again, ok := Normalize(mustRoot(t, nf)); !ok || string(again) != string(nf) {
				t.Fatalf("not a fixpoint:\n%s\n%s", nf, again)
			}
			if f, seen := forms[p.base]; seen && f != string(nf) {
				t.Fatalf("base %d: two normal forms:\n%s\n%s\n(of %s)", p.base, f, nf, raw)
			}
			forms[p.base] = string(nf)
			if !Equivalent(v, mustRoot(t, nf)) {
				t.Fatalf("not equivalent to its normal form: %s", raw)
			}
		}
	}
	seen := map[string]int{}
	for b, f := range forms {
		if o, dup := seen[f]; dup {
			t.Errorf("bases %d and %d have one normal form", o, b)
		}
		seen[f] = b
	}
}

// TestNotationToolVerdicts: per tool, notation-only is a fact of the
// report; a tool with a real change beside notation still needs review,
// and the report's decision follows the tools that need it.
func TestNotationToolVerdicts(t *testing.T) {
	list := func(a, b string) []manifest.Tool {
		tl, err := manifest.ParseToolList([]byte(`[{"name":"a","description":"d","inputSchema":` + a + `},{"name":"b","description":"d","inputSchema":` + b + `}]`))
		if err != nil {
			t.Fatal(err)
		}
		return tl.Tools
	}
	old := Input{Side: Side{Completeness: "complete"}, Tools: list(`{"type":"object"}`, `{"type":"object","properties":{"q":{"type":"string"}}}`)}
	nw := Input{Side: Side{Completeness: "complete"}, Tools: list(`{"type":"object","properties":{},"required":[]}`, `{"type":"object","properties":{"q":{"type":["string"]},"callback_url":{"type":"string"}},"required":[]}`)}
	for _, prof := range []*DecisionProfile{ReviewProfile, FailClosedProfile} {
		r := Compare(old, nw, prof, ToolOptions{})
		a, b := r.Tool("a"), r.Tool("b")
		if a == nil || !a.NotationOnly || a.Decision != Allow || a.Reason != ReasonNotationOnly || a.Severity != "low" {
			t.Errorf("%s: tool a %+v", prof.Name, a)
		}
		if b == nil || b.NotationOnly || b.Decision == Allow || b.Reason != "" {
			t.Errorf("%s: tool b %+v", prof.Name, b)
		}
		if r.Decision == Allow || r.DecisionReason != "" || r.ExitCode != ExitChanged {
			t.Errorf("%s: report %s (%q) exit %d", prof.Name, r.Decision, r.DecisionReason, r.ExitCode)
		}
		if prof == FailClosedProfile && (r.Decision != Deny || b.Decision != Deny) {
			t.Errorf("fail-closed: %s, tool b %s", r.Decision, b.Decision)
		}
	}
	// A partial new list never allows, notation or not; nothing else
	// changed among the tools seen: exit 3.
	nwPartial := nw
	nwPartial.Tools = list(`{"type":"object","properties":{},"required":[]}`, `{"type":"object","properties":{"q":{"type":"string"}}}`)
	nwPartial.Completeness = "partial"
	r := Compare(old, nwPartial, ReviewProfile, ToolOptions{})
	if r.Decision != Review || r.DecisionReason != "" || r.ExitCode != ExitInconclusive || !r.Tool("a").NotationOnly {
		t.Errorf("partial: %s (%q) exit %d", r.Decision, r.DecisionReason, r.ExitCode)
	}
}

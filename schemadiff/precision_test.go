package schemadiff_test

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// OLD maximum 9007199254740993, NEW 9007199254740992: RFC 8785 makes both
// 9007199254740992, so every digest is equal, and the diff must still say
// that the number changed (and warn about the number it cannot pin).
func TestPrecisionChangeUnderEqualDigests(t *testing.T) {
	oldList := `{"tools":[{"name":"transfer","description":"Move funds.","inputSchema":{"type":"object","properties":{"amount":{"type":"integer","minimum":0,"maximum":9007199254740993}}}}]}`
	newList := strings.Replace(oldList, "9007199254740993", "9007199254740992", 1)
	o, n := tools(t, oldList), tools(t, newList)
	do, _ := manifest.ManifestDigestOf(o)
	dn, _ := manifest.ManifestDigestOf(n)
	if do != dn {
		t.Fatalf("the digests differ (%s, %s): this test needs a change they cannot see", do, dn)
	}
	to, fo, _ := o[0].Proj().Digests(nil)
	tn, fn, _ := n[0].Proj().Digests(nil)
	if to != tn || fo != fn {
		t.Fatal("tool or field digests differ")
	}
	r := schemadiff.Compare(
		schemadiff.Input{Side: schemadiff.Side{Completeness: "complete"}, Tools: o},
		schemadiff.Input{Side: schemadiff.Side{Completeness: "complete"}, Tools: n},
		nil, schemadiff.ToolOptions{})
	if len(r.Changes) != 1 {
		t.Fatalf("changes %+v", r.Changes)
	}
	c := r.Changes[0]
	if c.Kind != schemadiff.NumberBeyondPrecisionChanged || c.Pointer != "/inputSchema/properties/amount/maximum" ||
		c.Direction != schemadiff.Neutral || c.Severity != "medium" || c.Name != "transfer" {
		t.Errorf("change %+v", c)
	}
	if r.ExitCode != schemadiff.ExitChanged || r.Decision != schemadiff.Review {
		t.Errorf("exit %d decision %s: a change exists", r.ExitCode, r.Decision)
	}
	want := `number at "/inputSchema/properties/amount/maximum" changed beyond float64 precision ("integer 9007199254740993 → 9007199254740992; both canonicalize to 9007199254740992, so the digests cannot see the change")`
	if got := schemadiff.Sentence(c, safetext.Quote); got != want {
		t.Errorf("sentence %q, want %q", got, want)
	}
	// The old side holds the number RFC 8785 misstates: warned, by side,
	// tool and pointer; the new side's 9007199254740992 is exact.
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `old tool "transfer" at "/inputSchema/properties/amount/maximum": the integer 9007199254740993`) {
		t.Errorf("warnings %q", r.Warnings)
	}
	// Reversed: the same record, the warning on the new side.
	r = schemadiff.Compare(
		schemadiff.Input{Side: schemadiff.Side{Completeness: "complete"}, Tools: n},
		schemadiff.Input{Side: schemadiff.Side{Completeness: "complete"}, Tools: o},
		nil, schemadiff.ToolOptions{})
	if len(r.Changes) != 1 || r.Changes[0].Kind != schemadiff.NumberBeyondPrecisionChanged || len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "new tool") {
		t.Errorf("reverse: %+v %q", r.Changes, r.Warnings)
	}
	// Unchanged, but imprecise: no change, still the warning on both sides.
	r = schemadiff.Compare(
		schemadiff.Input{Side: schemadiff.Side{Completeness: "complete"}, Tools: o},
		schemadiff.Input{Side: schemadiff.Side{Completeness: "complete"}, Tools: o},
		nil, schemadiff.ToolOptions{})
	if len(r.Changes) != 0 || r.ExitCode != schemadiff.ExitNoChange || len(r.Warnings) != 2 {
		t.Errorf("unchanged: %+v %q", r.Changes, r.Warnings)
	}
	// The same value written another way (1.0 for 1) is no change.
	r = schemadiff.Compare(
		schemadiff.Input{Side: schemadiff.Side{Completeness: "complete"}, Tools: tools(t, `[{"name":"a","inputSchema":{"maximum":10}}]`)},
		schemadiff.Input{Side: schemadiff.Side{Completeness: "complete"}, Tools: tools(t, `[{"name":"a","inputSchema":{"maximum":1.0e1}}]`)},
		nil, schemadiff.ToolOptions{})
	if len(r.Changes) != 0 || len(r.Warnings) != 0 {
		t.Errorf("10 and 1.0e1: %+v %q", r.Changes, r.Warnings)
	}
}

// Beside other schema changes, and outside the projection: still reported.
func TestPrecisionChangeAlongsideOthers(t *testing.T) {
	o := tools(t, `[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"n":{"maximum":12345678901234567890}}},"_meta":{"v":9007199254740993}}]`)
	n := tools(t, `[{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"n":{"maximum":12345678901234567000},"m":{"type":"string"}}},"_meta":{"v":9007199254740992}}]`)
	cs := schemadiff.DiffTools(o, n, schemadiff.ToolOptions{})
	got := map[string]bool{}
	for _, c := range cs {
		got[c.Kind+" "+c.Pointer] = true
	}
	for _, w := range []string{
		"number_beyond_precision_changed /inputSchema/properties/n/maximum",
		"number_beyond_precision_changed /_meta/v",
		"param_added_optional /inputSchema/properties/m",
	} {
		if !got[w] {
			t.Errorf("missing %s in %v", w, got)
		}
	}
	if got["keyword_unmodeled /_meta"] {
		t.Error("_meta canonicalizes alike: no keyword_unmodeled")
	}
}

// Many changed numbers in one tool: bounded records, the last says how
// many more.
func TestPrecisionChangesBounded(t *testing.T) {
	var ob, nb strings.Builder
	for i := range 150 {
		if i > 0 {
			ob.WriteByte(',')
			nb.WriteByte(',')
		}
		ob.WriteString("9007199254740993")
		nb.WriteString("9007199254740992")
	}
	o := tools(t, `[{"name":"a","inputSchema":{"enum":[`+ob.String()+`]}}]`)
	n := tools(t, `[{"name":"a","inputSchema":{"enum":[`+nb.String()+`]}}]`)
	cs := schemadiff.DiffTools(o, n, schemadiff.ToolOptions{})
	notes := 0
	for _, c := range cs {
		if c.Note != "" {
			notes++
			if c.Note != "50 more numbers of this tool changed beyond float64 precision" {
				t.Errorf("note %q", c.Note)
			}
		}
	}
	if len(cs) != 100 || notes != 1 {
		t.Errorf("%d records, %d notes", len(cs), notes)
	}
}

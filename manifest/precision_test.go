package manifest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
)

func TestImpreciseNumbers(t *testing.T) {
	src := `{"tools":[
	 {"name":"a","inputSchema":{"type":"object","properties":{"id":{"type":"integer","maximum":9007199254740993,"minimum":-9007199254740992}}},"_meta":{"n":9007199254740993}},
	 {"name":"b\u202e","input_schema":{"maximum":12345678901234567890.0},"outputSchema":{"x/y":[0.1,1e-400]},"annotations":{"n":9007199254740992}},
	 {"name":"c","inputSchema":{"maximum":1},"input_schema":{"maximum":9007199254740993}}
	]}`
	tl, err := manifest.ParseToolList([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	found, total := manifest.ImpreciseNumbers(tl.Tools, -1)
	var got []string
	for _, n := range found {
		got = append(got, n.Tool+" "+n.Pointer+" "+n.Text+" "+n.Canonical)
	}
	// _meta is outside the digests; c's input_schema is not what its
	// projection reads (inputSchema wins).
	want := []string{
		"a /inputSchema/properties/id/maximum 9007199254740993 9007199254740992",
		"b\u202e /input_schema/maximum 12345678901234567890.0 12345678901234567000",
		"b\u202e /outputSchema/x~1y/1 1e-400 0",
	}
	if !slices.Equal(got, want) || total != 3 {
		t.Fatalf("got %q (total %d), want %q", got, total, want)
	}
	if !found[0].Integer || !found[1].Integer || found[2].Integer {
		t.Errorf("integer flags %v %v %v", found[0].Integer, found[1].Integer, found[2].Integer)
	}
	ws := manifest.PrecisionWarnings("old", tl.Tools)
	if len(ws) != 3 {
		t.Fatalf("%d warnings", len(ws))
	}
	if w := ws[0]; !strings.Contains(w, `old tool "a" at "/inputSchema/properties/id/maximum": the integer 9007199254740993 is beyond float64 precision and canonicalizes (RFC 8785) to 9007199254740992`) {
		t.Errorf("warning %q", w)
	}
	if strings.ContainsRune(ws[1], 0x202e) || !strings.Contains(ws[1], `\u202e`) {
		t.Errorf("tool name not escaped: %q", ws[1])
	}
	if manifest.PrecisionWarnings("", tl.Tools[2:]) != nil {
		t.Error("no warning for a list without such numbers")
	}
	// The cap: one line per number up to MaxPrecisionWarnings, then a summary.
	var b strings.Builder
	b.WriteString(`[{"name":"big","inputSchema":{"enum":[`)
	for i := range manifest.MaxPrecisionWarnings + 7 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("9007199254740993")
	}
	b.WriteString(`]}}]`)
	tl, err = manifest.ParseToolList([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	ws = manifest.PrecisionWarnings("", tl.Tools)
	if len(ws) != manifest.MaxPrecisionWarnings+1 || !strings.Contains(ws[len(ws)-1], "7 more numbers beyond float64 precision (57 in all)") {
		t.Errorf("%d warnings, last %q", len(ws), ws[len(ws)-1])
	}
}

package probe

import (
	"strings"
	"testing"
)

// A served number that differs from the declared one only beyond float64
// precision: every digest is equal, so only the raw text shows it. The
// drift report warns (it does not call it compatible), and names the
// numbers the digests cannot pin on each side.
func TestPrecisionWarnings(t *testing.T) {
	declared := `[{"name":"transfer","inputSchema":{"type":"object","properties":{"amount":{"type":"integer","maximum":9007199254740993}}}}]`
	served := strings.Replace(declared, "9007199254740993", "9007199254740992", 1)
	p := obs(t, served)
	if d := obs(t, declared); d.ManifestDigest != p.ManifestDigest {
		t.Fatal("the digests should be equal")
	}
	r := Evaluate(Input{Target: "http://localhost/mcp", TargetClass: ClassLocal, Declared: tools(t, declared), Primary: p})
	for _, f := range r.Findings {
		if strings.HasPrefix(f.RuleID, "MCP-DRIFT-SCHEMA") {
			t.Errorf("graded as %s: %s", f.RuleID, f.Message)
		}
	}
	if len(r.Warnings) != 2 {
		t.Fatalf("warnings %q", r.Warnings)
	}
	all := strings.Join(r.Warnings, "\n")
	for _, want := range []string{
		`declared tool "transfer" at "/inputSchema/properties/amount/maximum": the integer 9007199254740993 is beyond float64 precision`,
		`served tool "transfer" differs from the declared one: number at "/inputSchema/properties/amount/maximum" changed beyond float64 precision`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in\n%s", want, all)
		}
	}
	// The same numbers on both sides: no drift, the warnings about them stay.
	r = Evaluate(Input{Target: "http://localhost/mcp", TargetClass: ClassLocal, Declared: tools(t, declared), Primary: obs(t, declared)})
	if len(r.Warnings) != 2 || !strings.HasPrefix(r.Warnings[0], "declared tool") || !strings.HasPrefix(r.Warnings[1], "served tool \"transfer\" at") {
		t.Errorf("unchanged: %q", r.Warnings)
	}
}

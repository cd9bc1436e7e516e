package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/probe"
)

// outsideCode is the Markdown with every <code>…</code> element removed.
func outsideCode(out string) string {
	for {
		i := strings.Index(out, "<code>")
		if i < 0 {
			return out
		}
		j := strings.Index(out[i:], "</code>")
		if j < 0 {
			return out
		}
		out = out[:i] + out[i+j+len("</code>"):]
	}
}

func jv(t *testing.T, s string) jcs.Value {
	d, err := jcs.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d.Root()
}

// Server text in a drift report's Markdown stays inside code elements:
// (1) a declared outputSchema whose pattern does not compile (the note
// holds the library's multi-line message, which Inert escapes whole,
// doubling the \" of its quotes so that mdMsg pairs them wrongly);
// (2) a property name of structuredContent (probe shows the pointer with
// Escape, unquoted).
func TestDriftMarkdownServerTextInCode(t *testing.T) {
	out := jv(t, `{"type":"object","properties":{"a":{"type":"string","pattern":"q\" @org/security #12 ("},"n":{"type":"integer"}}}`)
	res := probe.Evaluate(probe.Input{Target: "stdio:x", TargetClass: probe.ClassStdio, Primary: &probe.Observation{Completeness: "complete", Era: "modern"}, Calls: []probe.CallCheck{
		{Tool: "s", DeclaredOutput: out, Result: []byte(`{"content":[],"structuredContent":{}}`)},
		{Tool: "s", DeclaredOutput: jv(t, `{"type":"object","properties":{"@org/admins #34":{"type":"integer"}}}`), Result: []byte(`{"content":[],"structuredContent":{"@org/admins #34":"x"}}`)},
	}})
	r := &probe.Report{Findings: res.Findings, Notes: res.Notes}
	var b bytes.Buffer
	if err := RenderDrift(&b, r, "markdown", Options{}); err != nil {
		t.Fatal(err)
	}
	o := outsideCode(b.String())
	for _, w := range []string{"org/security", "admins"} {
		if strings.Contains(o, w) {
			t.Errorf("server text %q outside a code element:\n%s", w, b.String())
		}
	}

}

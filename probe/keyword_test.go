package probe

import (
	"strings"
	"testing"
)

// Found by the second review: the output-schema finding shows the failing keyword's path
// escaped, not quoted, but the library's keyword path of a dependency
// (draft-07 "dependencies", 2019-09+ "dependentRequired") ends in the
// schema's property name: a server's text stands outside any quote (and
// so outside Markdown's <code>).
func TestOutputSchemaKeywordQuoted(t *testing.T) {
	out := schemaOf(t, `{"type":"object","dependentRequired":{"a @org/security #1":["b"]}}`)
	validate := func(structured string) []string {
		ps, err := validateOutput(out, schemaOf(t, structured))
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	ps := validate(`{"a @org/security #1":1}`)
	if len(ps) == 0 {
		t.Fatal("no problem")
	}
	for _, p := range ps {
		if strings.Contains(p, "a @org/security #1") && !strings.Contains(p, `"a @org/security #1"`) && !strings.Contains(p, `"/dependentRequired/a @org/security #1"`) {
			t.Errorf("server text outside a quote: %s", p)
		}
	}
}

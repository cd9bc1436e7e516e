package schemadiff

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// A schema change's detail quotes a server's value in safetext's dialect,
// as every value mcpdrift shows: an ESC reads \u001b (Go's quote wrote
// \x1b) and an invisible filler (U+3164, which Go's quote leaves as it
// is) is escaped, in the Detail a JSON report carries and in the
// sentence. Found by the review.
func TestSchemaDetailQuotedInOneDialect(t *testing.T) {
	parse := func(s string) []manifest.Tool {
		tl, err := manifest.ParseToolList([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return tl.Tools
	}
	old := parse(`[{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"string","pattern":"^a$"}}}}]`)
	nw := parse(`[{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"string","pattern":"^\u001b\u3164$"}}}}]`)
	found := false
	for _, c := range DiffTools(old, nw, ToolOptions{}) {
		if c.Kind != ConstraintLoosened {
			continue
		}
		found = true
		if !strings.Contains(c.Detail, `\u001b\u3164`) || strings.Contains(c.Detail, `\x1b`) || strings.Contains(c.Detail, "\u3164") {
			t.Errorf("Detail %s", c.Detail)
		}
		if s := Sentence(c, safetext.Quote); !safetext.IsSafe(strings.ReplaceAll(s, `\`, "")) {
			t.Errorf("Sentence %s", s)
		}
	}
	if !found {
		t.Fatal("no constraint change")
	}
}

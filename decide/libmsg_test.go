package decide_test

import (
	"testing"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// A pinned inputSchema whose pattern does not compile is refused with a
// message that holds no active character: the server's pattern is shown
// escaped once. The regexp package quotes the expression raw between
// backticks, which the requoted library message kept raw (found by the
// review), as it kept a metaschema error's newlines.
func TestSchemaUnusableMessageInert(t *testing.T) {
	src := `[{"name":"p","inputSchema":{"type":"object","properties":{"a":{"type":"string","pattern":"\u001b\\[2J("}}}}]`
	b := decide.NewBaseline("x", manifest.Identity{}, tools(t, src))
	l := decide.DecideList(b, served(t, src, manifest.Identity{}), decide.Options{})
	got := l.DecideCall("p", args(t, `{"a":"z"}`), decide.CallOptions{})
	if got.Reason != decide.ReasonSchemaUnusable {
		t.Fatalf("%+v", got)
	}
	if safetext.Inert(got.Message) != got.Message {
		t.Errorf("the refusal holds active characters: %q", got.Message)
	}
}

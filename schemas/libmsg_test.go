package schemas

import (
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// A format checker's or the regexp package's message holds the instance's
// or the pattern's text raw: every Problem.Msg and compile error is inert.
func TestProblemMsgInert(t *testing.T) {
	ps := problemsOf(t, `{"$schema":"http://json-schema.org/draft-07/schema#","format":"regex"}`, `"q\" @x \u001b("`)
	for _, p := range ps {
		if safetext.Inert(p.Msg) != p.Msg {
			t.Errorf("Problem.Msg holds active characters: %q", p.Msg)
		}
	}
	_, err := Compile([]byte(`{"type":"string","pattern":"\u001b("}`))
	if safetext.Inert(err.Error()) != err.Error() {
		t.Errorf("compile error holds active characters: %q", err.Error())
	}
}

// A value clipped inside its quote is not left in Go's dialect: the
// message is clipped once rewritten.
func TestRequoteClippedSpan(t *testing.T) {
	name := "x\x1b" + strings.Repeat("y", 3000)
	err := Validate(Declared, map[string]any{"schema": "assay.declared_mcp_manifest.v0", name: 1})
	if err == nil || strings.Contains(err.Error(), `\x1b`) {
		t.Errorf("%.200s", err)
	}
}

// A property name that ends in a backslash: the library writes it '\'
// (kind.quote drops one backslash), RequoteGo reads \' as an escaped
// quote, and the next name is left outside the quotes.
func TestRequoteTrailingBackslash(t *testing.T) {
	err := Validate(Declared, map[string]any{"schema": "assay.declared_mcp_manifest.v0", `a\`: 1, "b @org/security #1": 1})
	if err == nil || !strings.Contains(err.Error(), `"b @org/security #1"`) {
		t.Errorf("%v", err)
	}
}

// problemsOf validates instance against schema and fails unless it has
// problems.
func problemsOf(t *testing.T, schema, instance string) []Problem {
	t.Helper()
	c, err := Compile([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Validate([]byte(instance))
	if err != nil || len(ps) == 0 {
		t.Fatalf("%v %v", ps, err)
	}
	return ps
}

package schemas

import (
	"strings"
	"testing"
)

// The library quotes values in Go's dialect ('x\x1b', kind.quote); a
// message holds safetext's ("x\u001b"), the one every other message
// holds, so that it is never escaped again where it is shown.
func TestRequote(t *testing.T) {
	for in, want := range map[string]string{
		`additional properties 'x\x1by\u202ez' not allowed`: `additional properties "x\u001by\u202ez" not allowed`,
		`additional properties 'a', 'b' not allowed`:        `additional properties "a", "b" not allowed`,
		`'it\'s "q"' does not match pattern '^a$'`:          `"it's \"q\"" does not match pattern "^a$"`,
		`'not' failed`:              `"not" failed`,
		`the value's type is wrong`: `the value's type is wrong`,
		`got string, want null`:     `got string, want null`,
		`'\xff' is not valid`:       `"\xff" is not valid`,
	} {
		if got := requote(in, nil); got != want {
			t.Errorf("requote(%s) = %s, want %s", in, got, want)
		}
	}
	// And through the library: a property name with an ESC and a bidi
	// control, escaped once.
	err := Validate(Declared, map[string]any{"schema": "assay.declared_mcp_manifest.v0", "x\x1by\u202ez": 1})
	if err == nil || !strings.Contains(err.Error(), `"x\u001by\u202ez"`) || strings.Contains(err.Error(), `\\`) {
		t.Errorf("%v", err)
	}
}

// A schema that does not compile is refused with the library's message
// in safetext's dialect: a server's pattern quoted as "…\u001b", not
// '…\x1b'.
func TestCompileErrorRequoted(t *testing.T) {
	_, err := Compile([]byte(`{"type":"string","pattern":"(\u001b"}`))
	if err == nil || strings.Contains(err.Error(), `\x1b`) || !strings.Contains(err.Error(), `\u001b`) {
		t.Errorf("%v", err)
	}
}

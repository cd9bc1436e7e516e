package probe

import (
	"strings"
	"testing"
)

// A declared outputSchema whose pattern does not compile gives a note that
// shows the server's pattern escaped once: "\u001b", never "\\u001b", and
// its quote boundaries intact (never \\").
func TestOutputSchemaCompileNoteEscapedOnce(t *testing.T) {
	out := schemaOf(t, `{"type":"object","properties":{"a":{"type":"string","pattern":"x\"\u001b("}}}`)
	r := &Result{}
	checkCall(r, CallCheck{Tool: "s", DeclaredOutput: out, Result: []byte(`{"content":[],"structuredContent":{"a":"z"}}`)})
	if len(r.Notes) != 1 {
		t.Fatalf("notes %q", r.Notes)
	}
	n := r.Notes[0]
	if strings.Contains(n, `\\u001b`) || strings.Contains(n, `\\"`) {
		t.Errorf("escaped twice: %s", n)
	}
}

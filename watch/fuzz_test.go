package watch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemas"
)

// FuzzEvent: whatever tool list a server sends, the event built from it
// is one valid JSON line that validates against the schema and carries no
// raw control, bidi or non-ASCII character.
func FuzzEvent(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`), []byte(`{"tools":[{"name":"a\u202e\u0000","inputSchema":{"type":"object","x":1}}]}`))
	f.Add([]byte(`{"tools":[]}`), []byte(`{"tools":[{"name":"\n{\"kind\":\"x\"}","inputSchema":{}}]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ta, err := manifest.ParseToolList(a)
		if err != nil {
			return
		}
		tb, err := manifest.ParseToolList(b)
		if err != nil {
			return
		}
		d, _ := manifest.ManifestDigestOf(tb.Tools)
		if d == "" {
			return
		}
		n := len(tb.Tools)
		ev := &Event{Schema: SchemaID, Seq: 1, Time: "2026-12-01T00:00:00Z", Server: "s", Kind: KindChanged, Trigger: TriggerTTL,
			ManifestDigest: &DigestPair{New: d}, ToolCount: &n, Tools: Compare(ta.Tools, tb.Tools)}
		ev.Decision, ev.Decisions = Verdict(ta.Tools, tb.Tools, Options{}.Decide)
		line := ev.Line()
		if strings.Count(string(line), "\n") != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("not one line: %q", line)
		}
		for _, c := range line[:len(line)-1] {
			if c < 0x20 || c > 0x7e {
				t.Fatalf("raw byte %#x in %q", c, line)
			}
		}
		var doc any
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatal(err)
		}
		if err := schemas.Validate(schemas.WatchEvent, doc); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
	})
}

package manifest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/corpus"
)

// declaredOf is the baseline pinned from a tool list (JSON).
func declaredOf(t testing.TB, tools string) []byte {
	t.Helper()
	tl, err := ParseToolList([]byte(tools))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Pin(BuildObserved("s", tl, Complete, nil), PinOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalArtifact(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameDeclared fails t unless the lean reading of src (streamed when it
// can be) and ReadTools' agree: the same baseline, or the same error.
// streamed says whether the lean reading streamed.
func sameDeclared(t testing.TB, src []byte) (streamed bool) {
	t.Helper()
	_, streamed = readDeclaredStreamed(src, "d.json")
	lean, lerr := ReadToolsWith(src, "d.json", ReadOptions{Lean: true, DeferDigests: true})
	whole, werr := ReadTools(src, "d.json")
	if (lerr == nil) != (werr == nil) || (lerr != nil && lerr.Error() != werr.Error()) {
		t.Fatalf("lean %v, whole %v", lerr, werr)
	}
	if lerr != nil {
		if streamed {
			t.Fatalf("streamed a baseline the whole reading refuses: %v", werr)
		}
		return streamed
	}
	if !reflect.DeepEqual(lean, whole) {
		a, _ := json.Marshal(lean.Declared)
		b, _ := json.Marshal(whole.Declared)
		t.Fatalf("lean %s\nwhole %s", a, b)
	}
	return streamed
}

// TestDeclaredStreamedSame: a declared baseline read lean (drift's
// declared side) is read entry by entry, never as one tree, and gives what
// a whole reading gives; one the streamed reading cannot take is read
// whole, with the whole reading's outcome.
func TestDeclaredStreamedSame(t *testing.T) {
	tools := string(corpus.Tools(200, 5))
	good := declaredOf(t, tools)
	empty := declaredOf(t, `[]`)
	classified := declaredOf(t, `[{"name":"delete_repo","description":"Deletes a repository.","inputSchema":{"type":"object"}},{"name":"read","inputSchema":{"type":"object"}}]`)
	for name, c := range map[string]struct {
		src    string
		stream bool
	}{
		"corpus":     {string(good), true},
		"no tools":   {string(empty), true},
		"classified": {string(classified), true},
		// An entry the hand check is not certain of (an unknown member):
		// the whole reading refuses it.
		"unknown entry member": {strings.Replace(string(good), `"privileged":`, `"extra":1,"privileged":`, 1), false},
		"bad tool digest":      {strings.Replace(string(good), `"tool_digest": "sha256:`, `"tool_digest": "sha257:`, 1), false},
		"a misspelt member":    {strings.Replace(string(classified), `"action_class": "`, `"action_klass": "`, 1), false},
		"tools not an array":   {`{"schema":"assay.declared_mcp_manifest.v0","tools":{}}`, false},
		"tools twice":          {strings.Replace(string(good), `"tools": [`, `"tools": [], "tools": [`, 1), false},
		"unknown top member":   {strings.Replace(string(good), `"tools": [`, `"surprise": 1, "tools": [`, 1), false},
		"bad manifest digest":  {strings.Replace(string(good), `"manifest_digest": "sha256:`, `"manifest_digest": "md5:`, 1), false},
		"truncated":            {string(good[:len(good)-3]), false},
		"trailing data":        {string(good) + "x", false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := sameDeclared(t, []byte(c.src)); got != c.stream {
				t.Fatalf("streamed %v, want %v", got, c.stream)
			}
		})
	}
}

// TestDeclaredStreamedClassifiedEntryRule: an entry the schema accepts
// but the baseline's own rule refuses ("classified" without an
// action_class) is refused as a whole reading refuses it.
func TestDeclaredStreamedClassifiedEntryRule(t *testing.T) {
	classified := string(declaredOf(t, `[{"name":"delete_repo","description":"Deletes a repository.","inputSchema":{"type":"object"}}]`))
	if !strings.Contains(classified, `"privilege_classification": "classified"`) {
		t.Skip("the default rules did not classify the tool")
	}
	bad := strings.Replace(classified, `"privileged": true`, `"privileged": false`, 1)
	if sameDeclared(t, []byte(bad)) {
		t.Fatal("streamed a baseline whose entry breaks the classification rule")
	}
}

// FuzzDeclaredStreamed: whatever the input, the lean reading of a
// declared baseline and the whole one agree, and a baseline is streamed
// only when the whole reading accepts it.
func FuzzDeclaredStreamed(f *testing.F) {
	f.Add(declaredOf(f, `[{"name":"a","inputSchema":{"type":"object"}},{"name":"delete_all","description":"Deletes everything."}]`))
	f.Add(declaredOf(f, `[]`))
	f.Add([]byte(`{"schema":"assay.declared_mcp_manifest.v0","tools":[{"name":"a"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if PeekHead(b).Schema != DeclaredSchemaID {
			return
		}
		sameDeclared(t, b)
	})
}

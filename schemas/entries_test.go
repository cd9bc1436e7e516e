package schemas

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// The fast path checks the tool entry by hand: it holds only while the
// schemas say of an entry exactly what entryValid checks, and of the
// entries' array no more than its type and its items.
func TestEntryShapeIsTheSchemas(t *testing.T) {
	const entry = `{"type":"object","additionalProperties":false,"required":["name","tool_digest","privileged"],
		"properties":{"name":{"type":"string","minLength":1},"tool_digest":{"$ref":"#/$defs/digest"},"privileged":{"type":"boolean"},
		"privilege_classification":{"enum":["classified","unclassified"]},"action_class":{"type":["string","null"]},
		"field_digests":{"type":"object","additionalProperties":false,"properties":{"description":{"$ref":"#/$defs/digest"},
		"input_schema":{"$ref":"#/$defs/digest"},"output_schema":{"$ref":"#/$defs/digest"},"annotations":{"$ref":"#/$defs/digest"}}}}}`
	var want any
	if err := json.Unmarshal([]byte(entry), &want); err != nil {
		t.Fatal(err)
	}
	read := func(name string) map[string]any {
		b, err := files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for name, path := range entryArrays {
		s := read(name)
		if d := s["$defs"].(map[string]any)["digest"]; !reflect.DeepEqual(d, map[string]any{"type": "string", "pattern": digestPattern}) {
			t.Fatalf("%s: $defs.digest is %v", name, d)
		}
		node := any(s)
		for _, seg := range path {
			node = node.(map[string]any)["properties"].(map[string]any)[seg]
		}
		arr := node.(map[string]any)
		if len(arr) != 2 || arr["type"] != "array" {
			t.Fatalf("%s: the entries' array says more than its type and items: %v", name, arr)
		}
		items := arr["items"].(map[string]any)
		if ref, ok := items["$ref"].(string); ok {
			items = s["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		delete(items, "description")
		props := items["properties"].(map[string]any)
		for k, p := range props {
			pm := p.(map[string]any)
			if ref, ok := pm["$ref"].(string); ok && ref != "#/$defs/digest" && len(pm) == 1 {
				pm = s["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
				props[k] = pm
			}
			delete(pm, "description")
		}
		if !reflect.DeepEqual(items, want) {
			got, _ := json.Marshal(items)
			t.Fatalf("%s: the tool entry is not the shape entryValid checks: %s", name, got)
		}
	}
}

// fastDoc is an artifact of the named schema whose entries are good,
// good and entry.
func fastDoc(name, entry string) string {
	const good = `{"name":"a","tool_digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","privileged":false,"privilege_classification":"unclassified","action_class":null,"field_digests":{"description":"sha256:1111111111111111111111111111111111111111111111111111111111111111"}}`
	entries := good + "," + good + "," + entry
	if name == Declared {
		return `{"schema":"assay.declared_mcp_manifest.v0","server":{"id":"s"},"canonicalization":"c","manifest_digest":"sha256:2222222222222222222222222222222222222222222222222222222222222222","tools":[` + entries + `]}`
	}
	return `{"schema":"assay.mcp_manifest_observed.v0","status":"observed","server":{"id":"s"},"observed":{"canonicalization":"c","tools_list_observed":true,"tools_list_complete":"complete","tool_digests":[` + entries + `]}}`
}

// FuzzEntryFastPath: a document is valid by the fast path exactly when the
// schema validator calls the whole of it valid. (The messages are not
// compared: the validator lists additional properties in map order, which
// varies from run to run.)
func FuzzEntryFastPath(f *testing.F) {
	for _, e := range []string{
		`{"name":"b","tool_digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","privileged":true}`,
		`{"name":"","tool_digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","privileged":true}`,
		`{"name":"b","tool_digest":"sha256:33","privileged":true}`,
		`{"name":"b","tool_digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","privileged":"yes"}`,
		`{"name":"b","tool_digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","privileged":true,"extra":1}`,
		`{"name":"b","tool_digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","privileged":true,"field_digests":{"x":"sha256:3333333333333333333333333333333333333333333333333333333333333333"}}`,
		`{"name":"b","tool_digest":"SHA256:3333333333333333333333333333333333333333333333333333333333333333","privileged":true,"action_class":1}`,
		`{"name":"b","tool_digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","privileged":false,"privilege_classification":"classified","action_class":"fs"}`,
		`17`, `null`, `[]`,
	} {
		f.Add(e, true)
		f.Add(e, false)
	}
	prev := fastEntries
	fastEntries = 1
	f.Cleanup(func() { fastEntries = prev })
	f.Fuzz(func(t *testing.T, entry string, declared bool) {
		name := Observed
		if declared {
			name = Declared
		}
		doc, err := jcs.Parse([]byte(fastDoc(name, entry)))
		if err != nil {
			return
		}
		fast := ValidateValue(name, doc.Root())
		whole := Validate(name, instanceOf(doc.Root()))
		if (fast == nil) != (whole == nil) {
			t.Fatalf("%s entry %s: fast path %v, the whole document %v", name, entry, fast, whole)
		}
	})
}

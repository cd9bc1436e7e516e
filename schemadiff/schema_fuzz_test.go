package schemadiff

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// FuzzDiffSchema: DiffSchema never panics, is deterministic, finds nothing
// between a schema and itself, and every change it reports is well formed
// (known kind, valid direction and severity, pointer under base, sorted,
// no duplicates). Bytes that are not JSON stand for an absent schema.
func FuzzDiffSchema(f *testing.F) {
	files, _ := filepath.Glob("testdata/schema/*.json")
	for _, file := range files {
		for _, c := range loadGolden(f, file) {
			f.Add([]byte(c.Old), []byte(c.New))
		}
	}
	f.Add([]byte(`{"$ref":"#"}`), []byte(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#"}}}`))
	f.Add([]byte(`true`), []byte(`false`))
	f.Add([]byte(`{"items":[{"$ref":"#/items/0"}],"additionalItems":false}`), []byte(`{"prefixItems":[{"$ref":"#/prefixItems/0"}],"items":false}`))
	f.Add([]byte(`{"dependencies":{"a":["b"],"c":{"$ref":"#"}}}`), []byte(`{"dependencies":{"a":{"required":["b"]},"c":["d"]}}`))
	f.Add([]byte(`{"$dynamicRef":"#x","$defs":{"x":{"$dynamicAnchor":"x","not":{"$ref":"#"}}}}`), []byte(`{"if":{"not":{"minimum":1}},"then":{"$ref":"#/if"}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		old, new := fuzzValue(a), fuzzValue(b)
		opt := Options{MaxNodes: 5000, MaxRefDepth: 16}
		for _, out := range []bool{false, true} {
			opt.Output = out
			cs := DiffSchema("fz", "/inputSchema", old, new, opt)
			checkChanges(t, "fz", "/inputSchema", cs)
			if again := DiffSchema("fz", "/inputSchema", old, new, opt); !slices.Equal(cs, again) {
				t.Fatalf("not deterministic:\n%+v\n%+v", cs, again)
			}
			for _, v := range []jcs.Value{old, new} {
				if self := DiffSchema("fz", "/inputSchema", v, v, opt); self != nil {
					t.Fatalf("self diff: %+v", self)
				}
			}
		}
		_ = ExternalRefs(old)
	})
}

func fuzzValue(b []byte) jcs.Value {
	d, err := jcs.Parse(b)
	if err != nil {
		return jcs.Value{}
	}
	return d.Root()
}

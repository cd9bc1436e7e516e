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
// Normal forms: a schema and its normal form differ in notation only (when
// the schema has one and refers to no external document, whose references
// the normal form may move), the normal form is a fixpoint, and
// equivalence is symmetric. Directions: a change graded widening one way
// has its mirror kind graded narrowing the other way, and the reverse, for
// the kinds that mirror (type, enum, additionalProperties, constraint and
// composition changes; required lists), where the schemas are well formed
// (no keyword_unmodeled, no schema_unresolved either way).
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
		opt.Output = false
		for _, v := range []jcs.Value{old, new} {
			nf, ok := Normalize(v)
			if !ok || len(ExternalRefs(v)) > 0 {
				continue
			}
			nv := fuzzValue(nf)
			if !nv.Valid() {
				t.Fatalf("normal form is not JSON: %s", nf)
			}
			if again, ok := Normalize(nv); !ok || string(again) != string(nf) {
				t.Fatalf("normal form is not a fixpoint:\n%s\n%s", nf, again)
			}
			if !Equivalent(v, nv) || !Equivalent(nv, v) {
				t.Fatalf("not equivalent to its normal form: %s", nf)
			}
			for _, cs := range [][]Change{DiffSchema("fz", "/inputSchema", v, nv, opt), DiffSchema("fz", "/inputSchema", nv, v, opt)} {
				if len(cs) > 0 && !NotationOnly(cs) {
					t.Fatalf("schema against its normal form %s: %+v", nf, cs)
				}
			}
		}
		if Equivalent(old, new) != Equivalent(new, old) {
			t.Fatal("equivalence is not symmetric")
		}
		fwd := DiffSchema("fz", "/inputSchema", old, new, opt)
		back := DiffSchema("fz", "/inputSchema", new, old, opt)
		noExt := len(ExternalRefs(old)) == 0 && len(ExternalRefs(new)) == 0
		if noExt && Equivalent(old, new) && (!NotationOnly(fwd) || !NotationOnly(back)) && (fwd != nil || back != nil) {
			t.Fatalf("equivalent schemas with changes beyond notation:\n%+v\n%+v", fwd, back)
		}
		wellFormed := !slices.ContainsFunc(append(slices.Clip(fwd), back...), func(c Change) bool {
			return c.Kind == KeywordUnmodeled || c.Kind == SchemaUnresolved
		})
		for _, pair := range [2][2][]Change{{fwd, back}, {back, fwd}} {
			if !wellFormed {
				break
			}
			for _, c := range pair[0] {
				if c.Direction == Neutral || !fuzzMirrors[c.Kind] {
					continue
				}
				k, dir, _ := mirrorKind(c.Kind, c.Direction)
				if !slices.ContainsFunc(pair[1], func(b Change) bool { return b.Kind == k && b.Direction == dir }) {
					t.Fatalf("%s %s at %s (%s) has no %s %s the other way:\n%+v", c.Kind, c.Direction, c.Pointer, c.Detail, k, dir, pair[1])
				}
			}
		}
		_ = ExternalRefs(old)
	})
}

// fuzzMirrors are the kinds whose widening has a narrowing mirror the
// other way (mirrorKind).
var fuzzMirrors = map[string]bool{
	TypeWidened: true, TypeNarrowed: true, EnumWidened: true, EnumNarrowed: true,
	AdditionalPropertiesLoosened: true, AdditionalPropertiesTightened: true,
	ConstraintLoosened: true, ConstraintTightened: true, CompositionWidened: true, CompositionNarrowed: true,
	RequiredAdded: true, RequiredDropped: true,
}

func fuzzValue(b []byte) jcs.Value {
	d, err := jcs.Parse(b)
	if err != nil {
		return jcs.Value{}
	}
	return d.Root()
}

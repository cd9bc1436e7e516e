package schemadiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Soundness of the normal form against an independent validator
// (santhosh-tekuri/jsonschema, 2020-12): a random schema and its normal
// form accept exactly the same instances, on random instances. Equal
// normal forms then mean equal sets of instances, which is what a
// schema_notation_changed record claims.

// schemaGen builds random schemas over a small vocabulary, so that random
// instances often hit their edges.
type schemaGen struct {
	r    *rand.Rand
	defs map[string]any
}

var genTypes = []any{"null", "boolean", "integer", "number", "string", "array", "object"}

func (g *schemaGen) pick(xs ...any) any { return xs[g.r.IntN(len(xs))] }

func (g *schemaGen) value(depth int) any {
	switch g.r.IntN(9) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2, 3:
		return json.Number(fmt.Sprint(g.r.IntN(4)))
	case 4:
		return json.Number(g.pick("1.5", "2.0", "-1").(string))
	case 5, 6:
		return g.pick("", "a", "ab", "b").(string)
	case 7:
		if depth > 1 {
			return "a"
		}
		var a []any
		for range g.r.IntN(3) {
			a = append(a, g.value(depth+1))
		}
		if a == nil {
			a = []any{}
		}
		return a
	default:
		if depth > 1 {
			return nil
		}
		o := map[string]any{}
		for _, k := range []string{"a", "b", "c"} {
			if g.r.IntN(2) == 0 {
				o[k] = g.value(depth + 1)
			}
		}
		return o
	}
}

func (g *schemaGen) schema(depth int) any {
	if depth > 3 || g.r.IntN(8) == 0 {
		return g.pick(true, false, map[string]any{}, map[string]any{"type": g.pick(genTypes...)})
	}
	s := map[string]any{}
	n := 1 + g.r.IntN(3)
	for range n {
		switch g.r.IntN(26) {
		case 24, 25:
			// Branches of one type each, with keywords of that type (and
			// sometimes of another).
			kws := map[string][]string{
				"string": {"minLength", "maxLength"}, "integer": {"minimum", "maximum"}, "number": {"exclusiveMinimum", "maximum"},
				"array": {"minItems", "maxItems"}, "object": {"minProperties", "maxProperties"}, "null": {"maxLength"}, "boolean": {"minimum"},
			}
			var br []any
			for range 2 + g.r.IntN(2) {
				t := g.pick(genTypes...).(string)
				b := map[string]any{"type": t}
				if g.r.IntN(3) > 0 {
					k := kws[t][g.r.IntN(len(kws[t]))]
					b[k] = json.Number(g.pick("0", "1", "2").(string))
				}
				if g.r.IntN(5) == 0 {
					b["required"] = []any{"a"}
				}
				br = append(br, b)
			}
			s[g.pick("anyOf", "oneOf").(string)] = br
		case 0:
			s["type"] = g.pick(genTypes...)
		case 1:
			i := g.r.IntN(len(genTypes))
			j := (i + 1 + g.r.IntN(len(genTypes)-1)) % len(genTypes)
			s["type"] = []any{genTypes[i], genTypes[j]}
		case 2:
			var e []any
			for range 1 + g.r.IntN(3) {
				e = append(e, g.value(1))
			}
			s["enum"] = e
		case 3:
			s["const"] = g.value(1)
		case 4:
			p := map[string]any{}
			for _, k := range []string{"a", "b"} {
				if g.r.IntN(2) == 0 {
					p[k] = g.schema(depth + 1)
				}
			}
			s["properties"] = p
		case 5:
			var req []any
			for _, k := range []string{"a", "b", "c"} {
				if g.r.IntN(2) == 0 {
					req = append(req, k)
				}
			}
			if req == nil {
				req = []any{}
			}
			s["required"] = req
		case 6:
			s["additionalProperties"] = g.schema(depth + 1)
		case 7:
			s["items"] = g.schema(depth + 1)
		case 8:
			s["prefixItems"] = []any{g.schema(depth + 1)}
		case 9:
			s[g.pick("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties").(string)] = json.Number(g.pick("0", "1", "2", "1.0").(string))
		case 10:
			s["uniqueItems"] = g.r.IntN(2) == 0
		case 11:
			s[g.pick("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum").(string)] = json.Number(g.pick("0", "1", "1.5", "2").(string))
		case 12:
			s["multipleOf"] = json.Number(g.pick("1", "0.5", "2").(string))
		case 13, 14:
			kw := g.pick("allOf", "anyOf", "oneOf").(string)
			var br []any
			for range 1 + g.r.IntN(3) {
				br = append(br, g.schema(depth+1))
			}
			s[kw] = br
		case 15:
			s["not"] = g.schema(depth + 1)
		case 16:
			s["if"] = g.schema(depth + 1)
			if g.r.IntN(2) == 0 {
				s["then"] = g.schema(depth + 1)
			}
			if g.r.IntN(2) == 0 {
				s["else"] = g.schema(depth + 1)
			}
		case 17:
			name := fmt.Sprintf("d%d", len(g.defs))
			g.defs[name] = g.schema(depth + 1)
			s["$ref"] = "#/$defs/" + name
		case 18:
			s["contains"] = g.schema(depth + 1)
			if g.r.IntN(2) == 0 {
				s["minContains"] = json.Number(g.pick("0", "1", "2").(string))
			}
		case 19:
			s["patternProperties"] = map[string]any{"^a": g.schema(depth + 1)}
		case 20:
			s["propertyNames"] = g.schema(depth + 1)
		case 21:
			s["dependentRequired"] = map[string]any{"a": []any{g.pick("b", "c")}}
		case 22:
			s["description"] = g.pick("x", "y")
		case 23:
			s["then"] = g.schema(depth + 1) // without if: ignored
		}
	}
	return s
}

func compileForTest(t testing.TB, raw []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(nil)
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return s
}

func TestNormalizeSoundAgainstValidator(t *testing.T) {
	const schemas, instances = 3000, 80
	r := rand.New(rand.NewPCG(9, 9))
	var insts []any
	ig := &schemaGen{r: r}
	for range instances {
		raw, _ := json.Marshal(ig.value(0))
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, v)
	}
	normalized, failed := 0, 0
	for i := range schemas {
		g := &schemaGen{r: rand.New(rand.NewPCG(uint64(i), 17)), defs: map[string]any{}}
		s := g.schema(0)
		if m, ok := s.(map[string]any); ok && len(g.defs) > 0 {
			m["$defs"] = g.defs
		} else if len(g.defs) > 0 {
			s = map[string]any{"allOf": []any{s}, "$defs": g.defs}
		}
		raw, _ := json.Marshal(s)
		nf, ok := Normalize(mustRoot(t, raw))
		if !ok {
			failed++
			continue
		}
		normalized++
		a, b := compileForTest(t, raw), compileForTest(t, nf)
		for _, x := range insts {
			if (a.Validate(x) == nil) != (b.Validate(x) == nil) {
				xr, _ := json.Marshal(x)
				t.Fatalf("schema %d and its normal form disagree on %s:\n%s\n%s", i, xr, raw, nf)
			}
		}
	}
	t.Logf("%d schemas normalized (%d without a normal form), each checked on %d instances", normalized, failed, instances)
}

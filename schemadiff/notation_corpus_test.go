package schemadiff

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// The notation corpus: pairs of schemas that accept exactly the same
// instances, spelled differently. Each base schema below is written out
// several times, every time with an independent random choice of spelling
// at every place a spelling applies (nested inside properties, items,
// anyOf branches and definitions), so any two spellings of one base form a
// notation-only pair, and so do combinations of spellings.
//
// The spellings (issue 9, section 2): empty properties and required; type
// as a string or a one-element array; allOf with one branch; $ref to an
// identical definition; default-valued keywords written out
// (additionalProperties: true, minItems: 0, uniqueItems: false, minLength:
// 0, minProperties: 0, items: {}); the order of enum, required and type
// arrays; integers written as 1.0; const against a one-element enum; and
// anyOf/oneOf with a single branch.

// nb is a base schema: a tree the spelling functions rewrite.
type nb = map[string]any

// notationBases are the base schemas. Each uses keywords whose spellings
// the corpus varies; none uses unevaluated* (under which some defaults are
// not defaults).
func notationBases() []nb {
	str := func(extra ...any) nb {
		s := nb{"type": "string"}
		for i := 0; i+1 < len(extra); i += 2 {
			s[extra[i].(string)] = extra[i+1]
		}
		return s
	}
	return []nb{
		// mcp-go v0.40.0 → v1.2.1: an object without parameters.
		{"type": "object"},
		{"type": "object", "description": "no parameters"},
		// A typical tool.
		{"type": "object", "properties": nb{
			"query": str("description", "what to search for", "minLength", json.Number("1")),
			"limit": nb{"type": "integer", "minimum": json.Number("1"), "maximum": json.Number("100")},
			"mode":  nb{"type": "string", "enum": []any{"fast", "exact", "fuzzy"}},
			"tags":  nb{"type": "array", "items": str(), "maxItems": json.Number("10")},
		}, "required": []any{"query", "mode"}},
		// Nested objects and arrays of objects.
		{"type": "object", "properties": nb{
			"parent": nb{"type": "object", "properties": nb{
				"page_id": str("format", "uuid"),
				"kind":    nb{"const": "page_id"},
			}, "required": []any{"page_id", "kind"}},
			"children": nb{"type": "array", "items": nb{"type": "object", "properties": nb{
				"text":  str(),
				"level": nb{"type": "integer", "enum": []any{json.Number("1"), json.Number("2"), json.Number("3")}},
			}, "required": []any{"text"}}},
		}, "required": []any{"parent"}, "additionalProperties": false},
		// Compositions.
		{"type": "object", "properties": nb{
			"command": nb{"anyOf": []any{str(), nb{"type": "array", "items": str()}}},
			"target":  nb{"anyOf": []any{nb{"type": "object", "properties": nb{"id": str()}, "required": []any{"id"}}, nb{"type": "null"}}},
			"value":   nb{"oneOf": []any{nb{"type": "integer"}, str()}},
		}},
		// Constants, numbers and nullable types.
		{"type": "object", "properties": nb{
			"confirm": nb{"type": "boolean", "const": false},
			"ratio":   nb{"type": "number", "multipleOf": json.Number("0.5"), "exclusiveMaximum": json.Number("2")},
			"name":    nb{"type": []any{"string", "null"}, "maxLength": json.Number("64")},
			"count":   nb{"type": "integer", "minimum": json.Number("0"), "default": json.Number("5")},
		}},
		// An array at the root of a property with unique items and tuple
		// arrays.
		{"type": "object", "properties": nb{
			"ids":  nb{"type": "array", "items": nb{"type": "integer"}, "uniqueItems": true, "minItems": json.Number("1")},
			"pair": nb{"type": "array", "prefixItems": []any{str(), nb{"type": "number"}}, "items": false},
			"meta": nb{"type": "object", "additionalProperties": str(), "maxProperties": json.Number("8")},
		}},
	}
}

// notationSpeller writes a base schema with random spellings.
type notationSpeller struct {
	r    *rand.Rand
	defs nb
	n    int
}

func (sp *notationSpeller) coin() bool { return sp.r.IntN(2) == 0 }

// spellRoot spells a base schema; definitions made for $refs go to the
// root's $defs.
func (sp *notationSpeller) spellRoot(b nb) any {
	sp.defs = nb{}
	sp.n = 0
	s := sp.spell(b, 0)
	if len(sp.defs) == 0 {
		return s
	}
	m, ok := s.(nb)
	if !ok || m["$ref"] != nil || m["$defs"] != nil {
		return nb{"allOf": []any{s}, "$defs": sp.defs}
	}
	m["$defs"] = sp.defs
	return m
}

// spell returns an equivalent spelling of schema b.
func (sp *notationSpeller) spell(b nb, depth int) any {
	s := nb{}
	for k, v := range b {
		s[k] = v
	}
	// Subschemas first.
	if p, ok := s["properties"].(nb); ok {
		q := nb{}
		for k, v := range p {
			q[k] = sp.spell(v.(nb), depth+1)
		}
		s["properties"] = q
	}
	if it, ok := s["items"].(nb); ok {
		s["items"] = sp.spell(it, depth+1)
	}
	if ap, ok := s["additionalProperties"].(nb); ok {
		s["additionalProperties"] = sp.spell(ap, depth+1)
	}
	for _, kw := range []string{"anyOf", "oneOf", "prefixItems"} {
		if br, ok := s[kw].([]any); ok {
			out := make([]any, len(br))
			for i, x := range br {
				out[i] = sp.spell(x.(nb), depth+1)
			}
			if kw != "prefixItems" {
				sp.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
			}
			s[kw] = out
		}
	}
	// Keyword spellings.
	if t, ok := s["type"].(string); ok && sp.coin() {
		s["type"] = []any{t}
	}
	if t, ok := s["type"].([]any); ok {
		t = slices.Clone(t)
		sp.r.Shuffle(len(t), func(i, j int) { t[i], t[j] = t[j], t[i] })
		s["type"] = t
	}
	for _, kw := range []string{"enum", "required"} {
		if e, ok := s[kw].([]any); ok {
			e = slices.Clone(e)
			sp.r.Shuffle(len(e), func(i, j int) { e[i], e[j] = e[j], e[i] })
			s[kw] = sp.numbers(e)
		}
	}
	if c, ok := s["const"]; ok && sp.coin() {
		delete(s, "const")
		s["enum"] = []any{c}
	} else if e, ok := s["enum"].([]any); ok && len(e) == 1 && sp.coin() {
		delete(s, "enum")
		s["const"] = e[0]
	}
	for _, kw := range []string{"minimum", "maximum", "exclusiveMaximum", "maxLength", "maxItems", "minItems", "maxProperties", "minLength", "const"} {
		if n, ok := s[kw].(json.Number); ok && !strings.ContainsAny(string(n), ".eE") && sp.coin() {
			s[kw] = json.Number(string(n) + ".0")
		}
	}
	isType := func(t string) bool {
		switch x := s["type"].(type) {
		case string:
			return x == t
		case []any:
			return slices.Contains(x, any(t))
		}
		return false
	}
	if isType("object") {
		if s["properties"] == nil && sp.coin() {
			s["properties"] = nb{}
		}
		if s["required"] == nil && sp.coin() {
			s["required"] = []any{}
		}
		if s["additionalProperties"] == nil && sp.coin() {
			s["additionalProperties"] = true
		}
		if s["minProperties"] == nil && sp.coin() {
			s["minProperties"] = json.Number("0")
		}
	}
	if isType("array") {
		if s["minItems"] == nil && sp.coin() {
			s["minItems"] = json.Number("0")
		}
		if s["uniqueItems"] == nil && sp.coin() {
			s["uniqueItems"] = false
		}
		if s["items"] == nil && s["prefixItems"] == nil && sp.coin() {
			s["items"] = nb{}
		}
	}
	if isType("string") && s["minLength"] == nil && sp.coin() {
		s["minLength"] = json.Number("0")
	}
	// Wrappers: a one-branch allOf/anyOf/oneOf, or a reference to an
	// identical definition.
	var out any = s
	switch sp.r.IntN(6) {
	case 0:
		out = nb{"allOf": []any{s}}
	case 1:
		if d, ok := s["description"]; ok {
			// The annotation outside, the validation inside.
			inner := nb{}
			for k, v := range s {
				if k != "description" {
					inner[k] = v
				}
			}
			out = nb{"description": d, "allOf": []any{inner}}
		} else {
			out = nb{"anyOf": []any{s}}
		}
	case 2:
		if depth > 0 {
			name := fmt.Sprintf("D%d", sp.n)
			sp.n++
			sp.defs[name] = s
			out = nb{"$ref": "#/$defs/" + name}
		}
	case 3:
		out = nb{"oneOf": []any{s}}
	}
	return out
}

// numbers writes some integers of a list as 1.0.
func (sp *notationSpeller) numbers(e []any) []any {
	for i, v := range e {
		if n, ok := v.(json.Number); ok && !strings.ContainsAny(string(n), ".eE") && sp.coin() {
			e[i] = json.Number(string(n) + ".0")
		}
	}
	return e
}

// notationPair is two spellings of one base.
type notationPair struct {
	base     int
	old, new []byte
}

// notationCorpus returns pairs of equivalent spellings: per base, spells
// different spellings, every pair among them (in one direction; tests run
// both).
func notationCorpus(spellings int, seed uint64) []notationPair {
	var out []notationPair
	for bi, b := range notationBases() {
		sp := &notationSpeller{r: rand.New(rand.NewPCG(seed, uint64(bi)))}
		seen := map[string]bool{}
		var texts [][]byte
		for range spellings * 4 {
			raw, err := json.Marshal(sp.spellRoot(b))
			if err != nil {
				panic(err)
			}
			if seen[string(raw)] {
				continue
			}
			seen[string(raw)] = true
			texts = append(texts, raw)
			if len(texts) == spellings {
				break
			}
		}
		sort.Slice(texts, func(i, j int) bool { return string(texts[i]) < string(texts[j]) })
		for i := range texts {
			for j := i + 1; j < len(texts); j++ {
				out = append(out, notationPair{base: bi, old: texts[i], new: texts[j]})
			}
		}
	}
	return out
}

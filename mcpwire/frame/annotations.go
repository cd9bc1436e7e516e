package frame

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// ParamAnnotation is the key of the annotation that mirrors an argument
// into an Mcp-Param-{Name} header (SEP-2243, 2026-07-28).
const ParamAnnotation = "x-mcp-header"

// Subschema keywords of JSON Schema (2020-12, and draft-07's spellings)
// under which an annotation is not reached through a chain of properties:
// one there is invalid. Keywords whose values are not schemas (enum,
// const, default, examples) are not read: an object in them is data.
var (
	schemaKeywords      = []string{"items", "additionalItems", "contains", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "propertyNames", "not", "if", "then", "else", "contentSchema"}
	schemaArrayKeywords = []string{"prefixItems", "allOf", "anyOf", "oneOf", "items"}
	schemaMapKeywords   = []string{"patternProperties", "dependentSchemas", "$defs", "definitions", "dependencies"}
)

// ParamAnnotationProblem says how a tool's inputSchema breaks the rules of
// the x-mcp-header annotation (the 2026-07-28 Streamable HTTP transport),
// or "" when every annotation keeps them or there is none. Clients of that
// transport MUST exclude such a tool from the tools/list result they
// expose: an agent behind one never sees it. An annotation is valid when
// it sits on a property reached from the schema's root through properties
// only (at any depth; not on the root, not under items, a combinator, a
// conditional or $defs), its value is a non-empty RFC 9110 token, the
// property's "type" is "string", "integer" or "boolean" ("number" is not
// permitted), and no other annotation of the schema names the same header
// in any case. The first problem found is said, its JSON pointer (in the
// inputSchema) and values quoted.
//
// The walk reads every schema of the inputSchema once, without recursion;
// a schema whose bytes cannot spell the key (neither "x-mcp-header" nor
// an escape of an ASCII character) is not walked.
func ParamAnnotationProblem(inputSchema jcs.Value) string {
	if !inputSchema.Valid() || inputSchema.Kind() != jcs.Object {
		return ""
	}
	if !MaySpellParamAnnotation(inputSchema.Raw()) {
		return ""
	}
	// A pointer is assembled only for a problem it reports: each schema
	// keeps its parent and the tokens that lead to it (a long key under
	// many members is not copied once per member).
	type step struct {
		parent int    // index in steps; -1 for the root
		kw     string // the keyword, as written
		sub    string // the member's name or the item's index, when hasSub
		hasSub bool
	}
	steps := []step{{parent: -1}}
	pointer := func(id int) string {
		var toks []string
		for ; id > 0; id = steps[id].parent {
			st := steps[id]
			if st.hasSub {
				toks = append(toks, st.sub)
			}
			toks = append(toks, st.kw)
		}
		slices.Reverse(toks)
		return jcs.PointerJoin("", toks...)
	}
	type node struct {
		v         jcs.Value
		id        int  // in steps
		reachable bool // through properties only, and not the root
	}
	seen := map[string]int{}     // lower-cased header name → its schema
	names := map[string]string{} // lower-cased header name → as written
	stack := []node{{v: inputSchema}}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s := n.v
		if s.Kind() != jcs.Object {
			continue
		}
		if h, ok := s.Get(ParamAnnotation); ok {
			at := "the schema's root"
			if n.id != 0 {
				at = safetext.Quote(pointer(n.id))
			}
			if !n.reachable {
				return "x-mcp-header at " + at + " is not on a property reached from the schema's root through properties only; clients of the 2026-07-28 HTTP transport must exclude the tool"
			}
			if h.Kind() != jcs.String || h.Str() == "" {
				return "x-mcp-header at " + at + " is not a non-empty string; clients of the 2026-07-28 HTTP transport must exclude the tool"
			}
			name := h.Str()
			if !httpguts.ValidHeaderFieldName(name) {
				return "x-mcp-header " + safetext.Quote(name) + " at " + at + " is not an HTTP header name (an RFC 9110 token); clients of the 2026-07-28 HTTP transport must exclude the tool"
			}
			ty, ok := s.Get("type")
			switch {
			case !ok:
				return "x-mcp-header " + safetext.Quote(name) + " at " + at + " annotates a property with no \"type\"; only string, integer and boolean properties may carry one, and clients of the 2026-07-28 HTTP transport must exclude the tool"
			case ty.Kind() != jcs.String:
				return "x-mcp-header " + safetext.Quote(name) + " at " + at + " annotates a property whose \"type\" is not one type name; only string, integer and boolean properties may carry one, and clients of the 2026-07-28 HTTP transport must exclude the tool"
			case !ty.StrEqual("string") && !ty.StrEqual("integer") && !ty.StrEqual("boolean"):
				return "x-mcp-header " + safetext.Quote(name) + " at " + at + " annotates a property of type " + safetext.Quote(ty.Str()) + "; only string, integer and boolean properties may carry one (not number), and clients of the 2026-07-28 HTTP transport must exclude the tool"
			}
			lower := strings.ToLower(name)
			if prev, dup := seen[lower]; dup {
				return "x-mcp-header " + safetext.Quote(name) + " at " + at + " names the header " + safetext.Quote(names[lower]) + " at " + safetext.Quote(pointer(prev)) + " names too (header names are case-insensitive); clients of the 2026-07-28 HTTP transport must exclude the tool"
			}
			seen[lower], names[lower] = n.id, name
		}
		// Pushed in reverse, so that the schema is read in document
		// order and the first problem said is the first in the text.
		var kids []node
		child := func(v jcs.Value, kw, sub string, hasSub, reachable bool) {
			steps = append(steps, step{parent: n.id, kw: kw, sub: sub, hasSub: hasSub})
			kids = append(kids, node{v: v, id: len(steps) - 1, reachable: reachable})
		}
		for i := range s.Len() {
			k, v := s.Member(i)
			key := k.Str()
			switch {
			case key == "properties" && v.Kind() == jcs.Object:
				for j := range v.Len() {
					pk, pv := v.Member(j)
					child(pv, key, pk.Str(), true, n.reachable || n.id == 0)
				}
			case isKeyword(key, schemaMapKeywords) && v.Kind() == jcs.Object:
				for j := range v.Len() {
					pk, pv := v.Member(j)
					child(pv, key, pk.Str(), true, false)
				}
			case isKeyword(key, schemaArrayKeywords) && v.Kind() == jcs.Array:
				for j := range v.Len() {
					child(v.Index(j), key, strconv.Itoa(j), true, false)
				}
			case isKeyword(key, schemaKeywords) && v.Kind() == jcs.Object:
				child(v, key, "", false, false)
			}
		}
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
	return ""
}

// MaySpellParamAnnotation reports whether JSON text b can hold the key
// x-mcp-header: it holds the key as written, or an escape of one of the
// key's letters (\u0078 for "x", and so on; any case of hex digits). Text
// for which it is false holds no annotation, and is not parsed to look.
func MaySpellParamAnnotation(b []byte) bool {
	if bytes.Contains(b, []byte(ParamAnnotation)) {
		return true
	}
	for {
		i := bytes.Index(b, []byte(`\u00`))
		if i < 0 || i+6 > len(b) {
			return false
		}
		hi, lo := b[i+4], b[i+5]|0x20 // a hex letter in lower case
		switch {
		case hi == '2' && lo == 'd', // -
			hi == '6' && (lo == '1' || lo == '3' || lo == '4' || lo == '5' || lo == '8' || lo == 'd'), // a c d e h m
			hi == '7' && (lo == '0' || lo == '2' || lo == '8'):                                        // p r x
			return true
		}
		b = b[i+4:]
	}
}

func isKeyword(k string, set []string) bool {
	for _, s := range set {
		if k == s {
			return true
		}
	}
	return false
}

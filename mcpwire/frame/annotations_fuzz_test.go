package frame

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// refToken is RFC 9110's token, written out again for the reference.
var refToken = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")

// refAnnotationsInvalid is a second, recursive reading of the rules over
// encoding/json's values: whether any annotation of schema breaks them.
func refAnnotationsInvalid(schema any) bool {
	seen := map[string]bool{}
	var visit func(n any, reachable, root bool) bool
	visit = func(n any, reachable, root bool) bool {
		m, ok := n.(map[string]any)
		if !ok {
			return false
		}
		if h, ok := m["x-mcp-header"]; ok {
			s, isStr := h.(string)
			ty, _ := m["type"].(string)
			if root || !reachable || !isStr || !refToken.MatchString(s) || (ty != "string" && ty != "integer" && ty != "boolean") || seen[strings.ToLower(s)] {
				return true
			}
			seen[strings.ToLower(s)] = true
		}
		for k, v := range m {
			switch k {
			case "properties":
				if pm, ok := v.(map[string]any); ok {
					for _, c := range pm {
						if visit(c, reachable || root, false) {
							return true
						}
					}
				}
			case "patternProperties", "dependentSchemas", "$defs", "definitions", "dependencies":
				if pm, ok := v.(map[string]any); ok {
					for _, c := range pm {
						if visit(c, false, false) {
							return true
						}
					}
				}
			case "prefixItems", "allOf", "anyOf", "oneOf", "items", "additionalItems", "contains", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "propertyNames", "not", "if", "then", "else", "contentSchema":
				if arr, ok := v.([]any); ok && (k == "prefixItems" || k == "allOf" || k == "anyOf" || k == "oneOf" || k == "items") {
					for _, c := range arr {
						if visit(c, false, false) {
							return true
						}
					}
				} else if visit(v, false, false) {
					return true
				}
			}
		}
		return false
	}
	return visit(schema, false, true)
}

// FuzzParamAnnotationProblem: the walk agrees with a second reading of
// the rules on whether a schema's annotations are valid (the order in
// which they are read aside), never panics, and says its problem inert.
func FuzzParamAnnotationProblem(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"integer","x-mcp-header":"a"}}}`,
		`{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}`,
		`{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string","x-mcp-header":"Id"}}}}`,
		`{"type":"object","x-mcp-header":"Root"}`,
		`{"type":"object","$defs":{"d":{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}}}`,
		`{"type":"object","properties":{"v":{"type":"string","x\u002dmcp-header":"A\r\nB"}}}`,
		`{"type":"object","properties":{"x-mcp-header":{"type":"string","x-mcp-header":"x-mcp-header"}}}`,
		`{"type":"object","default":{"x-mcp-header":""},"properties":{"o":{"type":"object","properties":{"p":{"type":"boolean","x-mcp-header":"P"}}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		d, err := jcs.Parse(src)
		if err != nil {
			return
		}
		p := ParamAnnotationProblem(d.Root())
		if safetext.Inert(p) != p {
			t.Fatalf("not inert: %q", p)
		}
		dec := json.NewDecoder(bytes.NewReader(src))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		if want := refAnnotationsInvalid(v); (p != "") != want {
			t.Fatalf("%s: problem %q, the reference says invalid=%v", src, p, want)
		}
	})
}

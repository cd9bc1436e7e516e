package schemadiff

import (
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Decl is what a schema position declares to the model that reads it: the
// JSON types it accepts and its description and title. It is read, not
// diffed: the change records say what changed, a Decl says what the
// parameter they name is.
type Decl struct {
	// Type is the set of JSON types the position accepts, as change
	// details write it ("string", "integer|null", "any" when nothing
	// limits it, "nothing" for false): its type keyword narrowed by enum,
	// const, internal references and compositions.
	Type string `json:"type"`
	// Title and Description are the position's annotations ("" when it has
	// none, or they are not strings). Beside a pure internal reference the
	// outer annotation wins, as the diff layers them; otherwise the
	// referenced definition's is used. Server-controlled: escape them.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// DeclAt reads the declaration at ptr, an RFC 6901 pointer into the tool
// object as Change.Pointer gives it ("/inputSchema/properties/url"). ok is
// false when ptr is not inside the tool's inputSchema or outputSchema (or
// their snake_case forms), or names nothing there.
func DeclAt(t *manifest.Tool, ptr string) (Decl, bool) {
	side, v, ok := schemaAt(t, ptr)
	if !ok {
		return Decl{}, false
	}
	return side.decl(v), true
}

// ValueAt returns the value at ptr in the tool object (the zero Value when
// ptr names nothing): what a change's pointer points at, for example the
// reference an external_ref_introduced record names.
func ValueAt(t *manifest.Tool, ptr string) jcs.Value {
	if t == nil {
		return jcs.Value{}
	}
	v, _ := t.Value().Resolve(ptr)
	return v
}

// StringAt is ValueAt's string ("" and false when ptr names no string).
func StringAt(t *manifest.Tool, ptr string) (string, bool) {
	v := ValueAt(t, ptr)
	if !v.Valid() || v.Kind() != jcs.String {
		return "", false
	}
	return v.Str(), true
}

// Param is one top-level parameter of a tool's input schema.
type Param struct {
	Name     string `json:"name"`
	Pointer  string `json:"pointer"`
	Required bool   `json:"required"`
	Decl
}

// Params lists the top-level parameters of t's input schema (the members
// of its "properties", following pure internal references at the root, in
// canonical order), with whether "required" lists them: what an added tool
// takes. nil when the schema declares no properties.
func Params(t *manifest.Tool) []Param {
	if t == nil {
		return nil
	}
	v := t.Value()
	is := manifest.Project(v).InputSchema
	if !is.Valid() {
		return nil
	}
	base := schemaPointer(v, "inputSchema", "input_schema")
	s := newSchSide(is)
	chain := s.chain(schNode{v: is})
	root := chain[len(chain)-1]
	props, ok := root.get("properties")
	if !ok || props.Kind() != jcs.Object {
		return nil
	}
	req := map[string]bool{}
	if r, ok := root.get("required"); ok {
		set, _, ok := schStringSet(r, true)
		if ok {
			req = set
		}
	}
	rootPtr := base + root.path.str()
	out := make([]Param, 0, props.Len())
	for i := 0; i < props.Len(); i++ {
		k, v := props.Member(i)
		name := k.Str()
		out = append(out, Param{Name: name, Pointer: jcs.PointerJoin(rootPtr, "properties", name), Required: req[name], Decl: s.decl(v)})
	}
	return out
}

// schemaAt finds the schema ptr points into and the value at ptr.
func schemaAt(t *manifest.Tool, ptr string) (*schSide, jcs.Value, bool) {
	if t == nil || !strings.HasPrefix(ptr, "/") {
		return nil, jcs.Value{}, false
	}
	first, rest, _ := strings.Cut(ptr[1:], "/")
	switch first {
	case "inputSchema", "input_schema", "outputSchema", "output_schema":
	default:
		return nil, jcs.Value{}, false
	}
	root, ok := t.Value().Get(first)
	if !ok {
		return nil, jcs.Value{}, false
	}
	v := root
	if ptr != "/"+first {
		v, _ = root.Resolve("/" + rest)
	}
	if !v.Valid() {
		return nil, jcs.Value{}, false
	}
	return newSchSide(root), v, true
}

// chain is x followed by the targets of the pure internal references it
// stands for (bounded like the diff's: MaxRefDepth, no cycles; an
// unresolvable reference ends the chain).
func (s *schSide) chain(x schNode) []schNode {
	chain := []schNode{x}
	for range schDefaultMaxRefDepth {
		ref, _, ok := s.pureRef(x.v)
		if !ok {
			break
		}
		t, p, problem := s.resolveAt(ref, x.v)
		if problem != "" {
			break
		}
		for _, c := range chain {
			if c.v.Valid() && c.v.Offset() == t.Offset() {
				return chain
			}
		}
		x = schNode{v: t, path: p}
		chain = append(chain, x)
	}
	return chain
}

// decl reads a position's declaration (see Decl).
func (s *schSide) decl(v jcs.Value) Decl {
	d := &schDiffer{opt: Options{MaxNodes: schDefaultMaxNodes, MaxRefDepth: schDefaultMaxRefDepth}, old: s, new: s}
	out := Decl{Type: schTypeString(d.effMask(s, v, 0))}
	for _, x := range s.chain(schNode{v: v}) {
		if t, ok := x.get("title"); ok && t.Kind() == jcs.String && out.Title == "" {
			out.Title = t.Str()
		}
		if t, ok := x.get("description"); ok && t.Kind() == jcs.String && out.Description == "" {
			out.Description = t.Str()
		}
	}
	return out
}

// HintKeys are the MCP annotation hints the diff compares, in its order.
func HintKeys() []string {
	out := make([]string, len(hintDefaults))
	for i, h := range hintDefaults {
		out[i] = h.key
	}
	return out
}

// HintText shows the hint key of an annotations object as every report
// does: "true" or "false", "default (X)" when it is absent (X is the
// specification's default: true for destructiveHint and openWorldHint,
// false for the others), or, for a value that is not a boolean, its
// canonical JSON clipped to 40 bytes (server-controlled: escape it).
func HintText(annotations jcs.Value, key string) string {
	def := false
	for _, h := range hintDefaults {
		if h.key == key {
			def = h.def
		}
	}
	var v jcs.Value
	if annotations.Valid() && annotations.Kind() == jcs.Object {
		v, _ = annotations.Get(key)
	}
	b, ok := hintValue(v, def)
	if !ok {
		return safetext.Clip(string(v.Canonical()), 40)
	}
	return hintText(v, b)
}

// HintMeaningless reports whether a change of hint key between two
// annotations objects means nothing: destructiveHint and idempotentHint
// describe modifications, and both sides claim readOnlyHint true.
func HintMeaningless(key string, old, new jcs.Value) bool {
	return (key == "destructiveHint" || key == "idempotentHint") && readOnly(old) && readOnly(new)
}

// IdentityKind reports whether kind is a change of the server's identity
// (endpoint, install, environment, publisher key, server name or
// version): named after the server, not a tool.
func IdentityKind(kind string) bool { return identityKinds[kind] }

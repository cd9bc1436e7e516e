package schemadiff

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// Resolving a reference inside the document: its schema resources (an
// $id starts one, a base URI for the references inside), their anchors,
// and a fragment's JSON pointer (read by jcs).

// schAnchor is a plain-name fragment target ($anchor, $dynamicAnchor, or a
// draft-07 "$id": "#name").
type schAnchor struct {
	v         jcs.Value
	path      *schPath
	ambiguous bool
}

// schResource is a schema resource: the root, or a subschema with an "$id"
// that is not a plain-name fragment. Its $id (resolved against the
// enclosing resource's) is the base URI of the references inside it, and
// its anchors are its own.
type schResource struct {
	uri       string // absolute, without fragment; "" for a root without $id
	base      *url.URL
	v         jcs.Value
	path      *schPath
	anchors   map[string]schAnchor
	ambiguous bool // two subschemas have this $id
}

// schSyntheticBase stands for the unknown retrieval URI of a document
// without a root $id: relative $ids and references resolve against it, and
// no reference can name the root through it.
var schSyntheticBase = &url.URL{Scheme: "https", Host: "mcpdrift.invalid", Path: "/"}

// schSchemaKeywords are the keywords whose values are subschemas (1), objects
// of subschemas (2) or arrays of subschemas (3): the places where an "$id"
// starts a resource and an anchor names a schema. $id and anchors inside
// unknown keywords or instance data are not schema resources (a runtime
// need not see them), so a reference to them is not resolved through them.
var schSchemaKeywords = map[string]uint8{
	"additionalProperties": 1, "unevaluatedProperties": 1, "propertyNames": 1, "items": 1,
	"additionalItems": 1, "unevaluatedItems": 1, "contains": 1, "not": 1, "if": 1, "then": 1, "else": 1,
	"properties": 2, "patternProperties": 2, "$defs": 2, "definitions": 2, "dependentSchemas": 2, "dependencies": 2,
	"allOf": 3, "anyOf": 3, "oneOf": 3, "prefixItems": 3,
}

// index builds the resource and anchor tables once.
func (s *schSide) index() {
	if s.indexed {
		return
	}
	s.indexed = true
	s.resources = make(map[string]*schResource)
	s.scopes = make(map[int]*schResource)
	if !s.root.Valid() {
		return
	}
	x := &schIndexer{s: s}
	s.root0 = &schResource{base: schSyntheticBase, v: s.root, anchors: map[string]schAnchor{}}
	x.walkSchema(s.root, s.root0)
	if s.root0.uri != "" {
		if _, dup := s.resources[s.root0.uri]; dup {
			s.resources[s.root0.uri].ambiguous = true
		} else {
			s.resources[s.root0.uri] = s.root0
		}
	}
}

// schIndexer is the walk of index: the side it indexes and the pointer
// segments (unescaped) of the position it is at.
type schIndexer struct {
	s    *schSide
	segs []string
}

func (x *schIndexer) here() *schPath {
	var p *schPath
	for _, seg := range x.segs {
		p = &schPath{p, jcs.PointerToken(seg)}
	}
	return p
}

func (x *schIndexer) addAnchor(r *schResource, name string, v jcs.Value) {
	if a, ok := r.anchors[name]; ok {
		if a.v.Offset() != v.Offset() {
			a.ambiguous = true
			r.anchors[name] = a
		}
		return
	}
	r.anchors[name] = schAnchor{v: v, path: x.here()}
}

func (x *schIndexer) walkSchema(v jcs.Value, cur *schResource) {
	if v.Kind() == jcs.Object {
		x.walk(v, cur)
	}
}

func (x *schIndexer) walk(v jcs.Value, cur *schResource) {
	s := x.s
	if id, ok := v.Get("$id"); ok && id.Kind() == jcs.String {
		cur = x.id(v, id.Str(), cur)
	}
	for _, kw := range [...]string{"$anchor", "$dynamicAnchor"} {
		if a, ok := v.Get(kw); ok && a.Kind() == jcs.String && a.Str() != "" {
			x.addAnchor(cur, a.Str(), v)
		}
	}
	if _, ok := v.Get("$ref"); ok {
		s.scopes[v.Offset()] = cur
	} else if _, ok := v.Get("$dynamicRef"); ok {
		s.scopes[v.Offset()] = cur
	}
	for i := 0; i < v.Len(); i++ {
		k, c := v.Member(i)
		ks := k.Str()
		switch schSchemaKeywords[ks] {
		case 1:
			x.segs = append(x.segs, ks)
			if c.Kind() == jcs.Array && ks == "items" {
				for j := 0; j < c.Len(); j++ {
					x.segs = append(x.segs, strconv.Itoa(j))
					x.walkSchema(c.Index(j), cur)
					x.segs = x.segs[:len(x.segs)-1]
				}
			} else {
				x.walkSchema(c, cur)
			}
			x.segs = x.segs[:len(x.segs)-1]
		case 2:
			if c.Kind() != jcs.Object {
				continue
			}
			x.segs = append(x.segs, ks)
			for j := 0; j < c.Len(); j++ {
				mk, mc := c.Member(j)
				x.segs = append(x.segs, mk.Str())
				x.walkSchema(mc, cur)
				x.segs = x.segs[:len(x.segs)-1]
			}
			x.segs = x.segs[:len(x.segs)-1]
		case 3:
			if c.Kind() != jcs.Array {
				continue
			}
			x.segs = append(x.segs, ks)
			for j := 0; j < c.Len(); j++ {
				x.segs = append(x.segs, strconv.Itoa(j))
				x.walkSchema(c.Index(j), cur)
				x.segs = x.segs[:len(x.segs)-1]
			}
			x.segs = x.segs[:len(x.segs)-1]
		}
	}
}

// id reads the "$id" ids of schema v, inside resource cur: a plain-name
// fragment is an anchor of cur; anything else starts a resource (the
// root's own $id names the root), which it returns.
func (x *schIndexer) id(v jcs.Value, ids string, cur *schResource) *schResource {
	s := x.s
	switch {
	case strings.HasPrefix(ids, "#"):
		if len(ids) > 1 {
			x.addAnchor(cur, ids[1:], v)
		}
	default:
		if u, err := url.Parse(ids); err == nil {
			abs := cur.base.ResolveReference(u)
			frag := abs.Fragment
			abs.Fragment, abs.RawFragment = "", ""
			key := abs.String()
			if cur.v.Valid() && cur.v.Offset() == v.Offset() {
				// The root's own $id.
				cur.uri, cur.base = key, abs
			} else if r, dup := s.resources[key]; dup {
				r.ambiguous = true
				cur = r
			} else {
				cur = &schResource{uri: key, base: abs, v: v, path: x.here(), anchors: map[string]schAnchor{}}
				s.resources[key] = cur
			}
			if frag != "" && !strings.HasPrefix(frag, "/") {
				x.addAnchor(cur, frag, v)
			}
		}
	}
	return cur
}

// scope is the resource a reference held by object at resolves in.
func (s *schSide) scope(at jcs.Value) *schResource {
	s.index()
	if at.Valid() {
		if r, ok := s.scopes[at.Offset()]; ok {
			return r
		}
	}
	if s.root0 == nil {
		return &schResource{base: schSyntheticBase, anchors: map[string]schAnchor{}}
	}
	return s.root0
}

// locate finds the resource an absolute-or-relative reference names (the
// part before its fragment) and the fragment; ok is false when it names no
// resource of this document: an external reference.
func (s *schSide) locate(ref string, at jcs.Value) (r *schResource, frag string, ok bool) {
	if strings.HasPrefix(ref, "#") {
		return s.scope(at), ref[1:], true
	}
	if ref == "" {
		// The base URI itself: the schema does not pin what that is.
		return nil, "", false
	}
	s.index()
	if len(s.resources) == 0 || !at.Valid() {
		return nil, "", false
	}
	if _, ok := s.scopes[at.Offset()]; !ok {
		// Not at a schema position (an unknown keyword, instance data): no
		// runtime resolves it through the document's $ids.
		return nil, "", false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return nil, "", false
	}
	abs := s.scope(at).base.ResolveReference(u)
	frag = abs.EscapedFragment()
	abs.Fragment, abs.RawFragment = "", ""
	r, ok = s.resources[abs.String()]
	return r, frag, ok
}

// internalRef reports whether a reference held by object at resolves
// inside the document: a fragment ("#...") of the current resource, or the
// URI of a resource the document embeds with "$id".
func (s *schSide) internalRef(ref string, at jcs.Value) bool {
	if strings.HasPrefix(ref, "#") {
		return true
	}
	_, _, ok := s.locate(ref, at)
	return ok
}

// resolveAt finds the target of an internal reference held by object at:
// the resource it names ("#" alone: the current one, whose $id is the base
// URI; "other.json#..." an embedded resource), then the fragment in it (a
// JSON pointer with ~0, ~1 and %-escapes, or an anchor of that resource),
// and returns it with its canonical pointer in the document. problem is
// non-empty when the reference cannot be resolved.
func (s *schSide) resolveAt(ref string, at jcs.Value) (target jcs.Value, path *schPath, problem string) {
	if !s.root.Valid() {
		return jcs.Value{}, nil, "the schema is absent"
	}
	r, rawFrag, ok := s.locate(ref, at)
	if !ok {
		return jcs.Value{}, nil, "not an internal reference"
	}
	if r.ambiguous {
		return jcs.Value{}, nil, "two subschemas have the $id " + schQuote(r.uri)
	}
	frag, ok := jcs.FragmentPointer(rawFrag)
	if !ok {
		return jcs.Value{}, nil, "invalid %-escape in the reference"
	}
	root, rootPath := r.v, r.path
	if !root.Valid() {
		root = s.root
	}
	if frag == "" {
		return root, rootPath, ""
	}
	if frag[0] != '/' {
		a, ok := r.anchors[frag]
		switch {
		case !ok:
			return jcs.Value{}, nil, "no $anchor named " + schQuote(frag)
		case a.ambiguous:
			return jcs.Value{}, nil, "the anchor " + schQuote(frag) + " is defined more than once"
		}
		return a.v, a.path, ""
	}
	v := root
	p := rootPath
	for rest := frag; rest != ""; {
		var seg string
		if seg, rest, ok = jcs.CutPointer(rest); !ok {
			return jcs.Value{}, nil, "invalid ~ escape in the JSON pointer"
		}
		c, ok := v.Step(seg)
		if !ok {
			switch v.Kind() {
			case jcs.Object:
				return jcs.Value{}, nil, "no member " + schQuote(seg) + " at " + schQuote(p.str())
			case jcs.Array:
				return jcs.Value{}, nil, "no element " + schQuote(seg) + " at " + schQuote(p.str())
			}
			return jcs.Value{}, nil, "the pointer goes through a " + v.Kind().String() + " at " + schQuote(p.str())
		}
		v = c
		p = &schPath{p, jcs.PointerToken(seg)}
	}
	return v, p, ""
}

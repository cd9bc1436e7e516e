package schemadiff

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// References. A pure internal reference ({"$ref": "#..."} with only
// annotations beside it) stands for its target (follow); one with
// validating keywords beside it is an implicit allOf member (refs); an
// external one is never fetched: it is introduced, or present beside
// other changes (externalRefs). How a reference is resolved: resolve.go.

// ExternalRefs returns the RFC 6901 pointers, relative to schema (not
// prefixed with the schema's place in the tool), of every "$ref" and
// "$dynamicRef" member whose value is a string that leaves the document: it
// does not start with "#" and does not name a schema resource the document
// embeds (a subschema with that "$id", resolved against the enclosing
// resources' $ids). The walk covers the whole value, schema keywords or not
// ($defs, unknown keywords, enum values, arrays), as the effective schema of
// any such reference is whatever the referenced document says when the
// runtime loads it. An empty reference ("") counts as external: it names the
// base URI, which the schema does not pin. Nothing is ever fetched. Pointers
// come in document order (members in canonical order, depth first).
func ExternalRefs(schema jcs.Value) []string {
	var out []string
	for _, r := range newSchSide(schema).externalRefs() {
		out = append(out, r.ptr)
	}
	return out
}

// schExtRef is one external reference: where it is, what it says, and
// what it names (extIdentity).
type schExtRef struct{ ptr, val, id string }

// extIdentity is what an external reference held by object at names: the
// reference as written when its resource has no $id (the base is where the
// runtime got the schema from, unknown here and the same for both sides),
// else the URI resolved against the $ids around it, so that a changed $id
// that moves a relative reference elsewhere changes its identity.
// synthetic: the base comes from relative $ids only, so the identity is
// relative to the unknown base and cannot be written as a reference.
func (s *schSide) extIdentity(ref string, at jcs.Value) (id string, synthetic bool) {
	r := s.scope(at)
	if r.base == schSyntheticBase {
		return ref, false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ref, false
	}
	abs := r.base.ResolveReference(u).String()
	if r.base.Host == schSyntheticBase.Host && r.base.Scheme == schSyntheticBase.Scheme {
		return abs, true
	}
	return abs, false
}

func (s *schSide) externalRefs() []schExtRef {
	v := s.root
	if !v.Valid() {
		return nil
	}
	var out []schExtRef
	var segs []schSeg
	var walk func(v jcs.Value)
	walk = func(v jcs.Value) {
		switch v.Kind() {
		case jcs.Object:
			for i := 0; i < v.Len(); i++ {
				k, c := v.Member(i)
				segs = append(segs, schSeg{key: k, idx: -1})
				if (k.StrEqual("$ref") || k.StrEqual("$dynamicRef")) && c.Kind() == jcs.String && !s.internalRef(c.Str(), v) {
					id, _ := s.extIdentity(c.Str(), v)
					out = append(out, schExtRef{schJoinSegs(segs), c.Str(), id})
				}
				if c.Kind() == jcs.Object || c.Kind() == jcs.Array {
					walk(c)
				}
				segs = segs[:len(segs)-1]
			}
		case jcs.Array:
			for i := 0; i < v.Len(); i++ {
				c := v.Index(i)
				if c.Kind() == jcs.Object || c.Kind() == jcs.Array {
					segs = append(segs, schSeg{idx: i})
					walk(c)
					segs = segs[:len(segs)-1]
				}
			}
		}
	}
	walk(v)
	return out
}

// schSeg is a pointer segment: an object member's name or an array index.
type schSeg struct {
	key jcs.Value
	idx int
}

func schJoinSegs(segs []schSeg) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		if s.idx >= 0 {
			b.WriteString(strconv.Itoa(s.idx))
		} else {
			b.WriteString(jcs.PointerToken(s.key.Str()))
		}
	}
	return b.String()
}

// schPureRefSiblings may stand beside a $ref that is followed
// transparently: annotations and document bookkeeping.
var schPureRefSiblings = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$comment": true,
	"$defs": true, "definitions": true, "$schema": true, "$id": true, "$anchor": true, "$dynamicAnchor": true,
}

// pureRef reports whether v is an internal reference with nothing that
// validates beside it.
func (s *schSide) pureRef(v jcs.Value) (ref, kw string, ok bool) {
	if !v.Valid() || v.Kind() != jcs.Object {
		return "", "", false
	}
	for i := 0; i < v.Len(); i++ {
		k, c := v.Member(i)
		ks := k.Str()
		if ks == "$ref" || ks == "$dynamicRef" {
			if kw != "" || c.Kind() != jcs.String || !s.internalRef(c.Str(), v) {
				return "", "", false
			}
			ref, kw = c.Str(), ks
			continue
		}
		if !schPureRefSiblings[ks] {
			return "", "", false
		}
	}
	return ref, kw, kw != ""
}

// mixedRef reports an internal reference with validating siblings.
func (s *schSide) mixedRef(v jcs.Value) bool {
	if !v.Valid() || v.Kind() != jcs.Object {
		return false
	}
	if _, _, ok := s.pureRef(v); ok {
		return false
	}
	for _, kw := range [...]string{"$ref", "$dynamicRef"} {
		if r, ok := v.Get(kw); ok && r.Kind() == jcs.String && s.internalRef(r.Str(), v) {
			return true
		}
	}
	return false
}

// follow expands a chain of pure references. The chain starts with x.
func (d *schDiffer) follow(s *schSide, x schNode, rd int) ([]schNode, bool) {
	chain := []schNode{x}
	for {
		ref, kw, ok := s.pureRef(x.v)
		if !ok {
			return chain, true
		}
		at := func() string { return x.path.str() + "/" + kw }
		if rd >= d.opt.MaxRefDepth {
			d.unresolved(at(), kw+" "+schQuote(ref), "more than "+strconv.Itoa(d.opt.MaxRefDepth)+" nested $ref expansions; not compared beyond")
			return nil, false
		}
		t, p, problem := s.resolveAt(ref, x.v)
		if problem == "" && t.Kind() != jcs.Object && t.Kind() != jcs.True && t.Kind() != jcs.False {
			problem = "the target is a " + t.Kind().String() + ", not a schema"
		}
		if problem == "" {
			for _, c := range chain {
				if c.v.Valid() && c.v.Offset() == t.Offset() {
					problem = "cyclic $ref: the references lead back to themselves with nothing to validate"
					break
				}
			}
		}
		if problem != "" {
			d.unresolved(at(), kw+" "+schQuote(ref), "unresolved reference: "+problem+"; not compared")
			return nil, false
		}
		x = schNode{v: t, path: p}
		chain = append(chain, x)
		rd++
	}
}

// refs compares internal references that have sibling keywords (implicit
// allOf members); pure references were followed by diff.
func (d *schDiffer) refs(o, n schNode, pol int8, rd int) {
	for _, kw := range [...]string{"$ref", "$dynamicRef"} {
		ro, ho := d.old.internalRefAt(o, kw)
		rn, hn := d.new.internalRefAt(n, kw)
		switch {
		case ho && hn:
			if rd >= d.opt.MaxRefDepth {
				d.unresolved(n.path.str()+"/"+kw, kw+" "+schQuote(rn), "more than "+strconv.Itoa(d.opt.MaxRefDepth)+" nested $ref expansions; not compared beyond")
				continue
			}
			to, po, pbO := d.old.resolveAt(ro, o.v)
			tn, pn, pbN := d.new.resolveAt(rn, n.v)
			if pbO != "" {
				d.unresolved(o.path.str()+"/"+kw, kw+" "+schQuote(ro), "unresolved reference: "+pbO+"; not compared")
			}
			if pbN != "" {
				d.unresolved(n.path.str()+"/"+kw, kw+" "+schQuote(rn), "unresolved reference: "+pbN+"; not compared")
			}
			if pbO == "" && pbN == "" {
				d.diff(schNode{v: to, path: po}, schNode{v: tn, path: pn}, pol, rd+1)
			}
		case hn:
			d.emit(CompositionNarrowed, n.path.str()+"/"+kw, Narrowing, pol, false, kw+" added: "+schQuote(rn), "")
		case ho:
			d.emit(CompositionWidened, o.path.str()+"/"+kw, Widening, pol, false, kw+" removed (was "+schQuote(ro)+")", "")
		}
	}
}

func (s *schSide) internalRefAt(x schNode, kw string) (string, bool) {
	r, ok := x.get(kw)
	if !ok || r.Kind() != jcs.String || !s.internalRef(r.Str(), x.v) {
		return "", false
	}
	return r.Str(), true
}

// externalRefs reports the external references of the new schema: one
// not at the same pointer, naming the same target (extIdentity), in the old
// one is introduced; the others are present, reported when something else
// changed.
func (d *schDiffer) externalRefs() {
	type key struct{ ptr, id string }
	before := make(map[key]bool)
	for _, r := range d.old.externalRefs() {
		before[key{r.ptr, r.id}] = true
	}
	var present []schExtRef
	for _, r := range d.new.externalRefs() {
		if before[key{r.ptr, r.id}] {
			present = append(present, r)
			continue
		}
		d.emit(ExternalRefIntroduced, r.ptr, Widening, 1, false,
			"external reference "+schQuote(r.val)+": its target is resolved by the runtime, not pinned here", "")
		d.opt.Refs.judge(&d.out[len(d.out)-1], r)
	}
	if len(d.out) == 0 {
		return
	}
	for _, r := range present {
		d.emit(ExternalRefPresent, r.ptr, Neutral, 1, false,
			"external reference "+schQuote(r.val)+" (unchanged): the effective schema also depends on its target", "")
		d.opt.Refs.judge(&d.out[len(d.out)-1], r)
	}
}

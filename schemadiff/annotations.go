package schemadiff

import (
	"github.com/mcpdrift/mcpdrift/jcs"
)

// The keywords of a schema that validation never reads, and how a change
// to each is graded:
//
//	description, title         planner-facing text: description_changed
//	                           (medium) or title_changed (low) at the
//	                           keyword's own pointer, the detail a word diff
//	default                    schema_default_changed (medium): an executor
//	                           may apply it when the argument is omitted
//	$comment, examples,        schema_annotation_changed (low): neutral, it
//	deprecated, readOnly,      needs no review
//	writeOnly
//	$schema                    the dialect (dialect.go): schema_dialect_changed
//	                           (low, neutral) when no keyword of the schemas
//	                           is read differently by the two dialects, else
//	                           schema_unresolved
//
// A keyword the diff does not know is keyword_unmodeled.

// meta compares the annotation and unmodeled keywords of two positions.
// A chain of pure references is layered: the outermost place that has a
// keyword gives its value.
func (d *schDiffer) meta(oc, nc []schNode, pol int8) {
	var keys []string
	var seen map[string]bool
	for _, chain := range [2][]schNode{oc, nc} {
		for _, x := range chain {
			if !x.v.Valid() || x.v.Kind() != jcs.Object {
				continue
			}
			for i := 0; i < x.v.Len(); i++ {
				k, _ := x.v.Member(i)
				ks := k.Str()
				if c := schKeywords[ks]; c == schKwStructural || c == schKwIgnored {
					continue
				}
				if seen == nil {
					seen = make(map[string]bool)
				}
				if !seen[ks] {
					seen[ks] = true
					keys = append(keys, ks)
				}
			}
		}
	}
	lookup := func(chain []schNode, k string) (jcs.Value, *schPath, bool) {
		for _, x := range chain {
			if v, ok := x.get(k); ok {
				return v, x.path, true
			}
		}
		return jcs.Value{}, nil, false
	}
	for _, k := range keys {
		vo, po, ho := lookup(oc, k)
		vn, pn, hn := lookup(nc, k)
		if ho && hn && d.same(vo, vn) {
			continue
		}
		at, what := pn, " changed"
		switch {
		case !ho:
			what = " added"
		case !hn:
			at, what = po, " removed"
		}
		ptr := jcs.PointerJoin(at.str(), k)
		switch {
		case k == "$schema":
			d.dialect(ptr, vo, ho, vn, hn, pol)
		case k == "description" || k == "title":
			d.text(k, ptr, vo, ho, vn, hn, what, pol)
		case k == "default":
			d.emit(SchemaDefaultChanged, ptr, Neutral, pol, false, k+what, "")
		case schKeywords[k] == schKwAnnotation:
			d.emit(SchemaAnnotationChanged, ptr, Neutral, pol, false, k+what, "")
		default:
			d.emit(KeywordUnmodeled, ptr, Neutral, pol, false, schQuote(k)+what+" (keyword not modeled)", "")
		}
	}
}

// text records a changed description or title inside a schema: the
// planner reads it as it reads the tool's own description, so it is the
// description family's record (description_changed, title_changed) at
// the keyword's pointer, its detail a word diff of the two texts (as the
// tool's description gets), or what happened to it when the words say
// nothing (a text added empty, a value that is not a string changed to
// one that reads the same).
func (d *schDiffer) text(k, ptr string, vo jcs.Value, ho bool, vn jcs.Value, hn bool, what string, pol int8) {
	kind, max := DescriptionChanged, 360
	if k == "title" {
		kind, max = TitleChanged, 160
	}
	o, n := "", ""
	if ho {
		o = textOf(vo)
	}
	if hn {
		n = textOf(vn)
	}
	detail := WordDiff(o, n, max)
	if detail == "" {
		detail = k + what
	}
	d.emit(kind, ptr, Neutral, pol, false, detail, "")
}

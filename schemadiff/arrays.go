package schemadiff

import (
	"math"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// Arrays: items (a schema, or draft-07's array form with additionalItems),
// prefixItems, unevaluatedItems, contains, minContains/maxContains,
// minItems/maxItems, uniqueItems.

// schTuple splits a position's array keywords: the positional schemas and
// the schema for the rest.
func schTuple(x schNode) (tuple []schNode, rest schNode) {
	if p, ok := x.get("prefixItems"); ok && p.Kind() == jcs.Array {
		for i := 0; i < p.Len(); i++ {
			tuple = append(tuple, x.elem("prefixItems", i))
		}
		return tuple, x.child("items")
	}
	if it, ok := x.get("items"); ok && it.Kind() == jcs.Array {
		for i := 0; i < it.Len(); i++ {
			tuple = append(tuple, x.elem("items", i))
		}
		return tuple, x.child("additionalItems")
	}
	return nil, x.child("items")
}

func (d *schDiffer) arrays(o, n schNode, pol int8, rd int) {
	for _, x := range [...]schNode{o, n} {
		if p, ok := x.get("prefixItems"); ok && p.Kind() != jcs.Array {
			d.malformed(o, n, "prefixItems", pol)
			break
		}
	}
	to, ro := schTuple(o)
	tn, rn := schTuple(n)
	for i := 0; i < max(len(to), len(tn)); i++ {
		a, b := ro, rn
		if i < len(to) {
			a = to[i]
		}
		if i < len(tn) {
			b = tn[i]
		}
		d.diff(a, b, pol, rd)
	}
	d.diff(ro, rn, pol, rd)

	d.addl(o, n, "unevaluatedItems", ConstraintLoosened, ConstraintTightened, pol, rd)
	hco, hcn := o.has("contains"), n.has("contains")
	switch {
	case hco && hcn:
		d.diff(o.child("contains"), n.child("contains"), pol, rd)
	case hcn:
		d.emit(ConstraintTightened, n.path.str()+"/contains", Narrowing, pol, false, "contains added: the array must hold a matching item", "")
	case hco:
		d.emit(ConstraintLoosened, o.path.str()+"/contains", Widening, pol, false, "contains removed", "")
	}
	d.count(o, n, "minContains", false, 1, pol)
	d.count(o, n, "maxContains", true, math.Inf(1), pol)
	d.count(o, n, "minItems", false, 0, pol)
	d.count(o, n, "maxItems", true, math.Inf(1), pol)
	uo, huo := o.get("uniqueItems")
	un, hun := n.get("uniqueItems")
	if (huo && uo.Kind() != jcs.True && uo.Kind() != jcs.False) || (hun && un.Kind() != jcs.True && un.Kind() != jcs.False) {
		d.malformed(o, n, "uniqueItems", pol)
	} else if bo, bn := huo && uo.Bool(), hun && un.Bool(); bo != bn {
		if bn {
			d.emit(ConstraintTightened, schKwPtr(o, n, "uniqueItems"), Narrowing, pol, false, "uniqueItems now true", "")
		} else {
			d.emit(ConstraintLoosened, schKwPtr(o, n, "uniqueItems"), Widening, pol, false, "uniqueItems no longer true", "")
		}
	}
}

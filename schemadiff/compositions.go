package schemadiff

import (
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// Compositions: allOf, anyOf, oneOf, not, if/then/else. A position that is
// only a choice is compared with the other side as a set of alternatives
// (lift, split); the branches of two compositions are matched as sets in
// branches.go.

func (d *schDiffer) compositions(o, n schNode, pol int8, rd int) {
	d.branches(o, n, "allOf", pol, rd)
	d.branches(o, n, "anyOf", pol, rd)
	d.branches(o, n, "oneOf", pol, rd)

	ho, hn := o.has("not"), n.has("not")
	switch {
	case ho && hn:
		d.diff(o.child("not"), n.child("not"), -pol, rd)
	case hn:
		d.emit(CompositionNarrowed, n.path.str()+"/not", Narrowing, pol, false, "not added", "")
	case ho:
		d.emit(CompositionWidened, o.path.str()+"/not", Widening, pol, false, "not removed", "")
	}
	ho, hn = o.has("if"), n.has("if")
	switch {
	case ho && hn:
		d.diff(o.child("if"), n.child("if"), 0, rd)
	case hn:
		d.emit(CompositionNarrowed, n.path.str()+"/if", Narrowing, pol, false, "if added: a conditional constraint now applies", "")
	case ho:
		d.emit(CompositionWidened, o.path.str()+"/if", Widening, pol, false, "if removed: the conditional constraint no longer applies", "")
	}
	d.diff(o.child("then"), n.child("then"), pol, rd)
	d.diff(o.child("else"), n.child("else"), pol, rd)
}

// branches compares allOf, anyOf or oneOf arrays of two positions that
// both keep other validating keywords beside them (otherwise lift compares
// the positions as sets of alternatives): the branches are matched as sets
// (matchAlts). A keyword present on one side only adds or removes the
// whole composition.
func (d *schDiffer) branches(o, n schNode, kw string, pol int8, rd int) {
	ao, ho := o.get(kw)
	an, hn := n.get(kw)
	if !ho && !hn {
		return
	}
	if (ho && ao.Kind() != jcs.Array) || (hn && an.Kind() != jcs.Array) {
		d.malformed(o, n, kw, pol)
		return
	}
	all := kw == "allOf"
	if !all && ho != hn {
		if hn {
			d.emit(CompositionNarrowed, n.path.str()+"/"+kw, Narrowing, pol, false, kw+" added ("+strconv.Itoa(an.Len())+" branches)", "")
		} else {
			d.emit(CompositionWidened, o.path.str()+"/"+kw, Widening, pol, false, kw+" removed (had "+strconv.Itoa(ao.Len())+" branches)", "")
		}
		return
	}
	var bo, bn []schNode
	if ho {
		for i := 0; i < ao.Len(); i++ {
			bo = append(bo, o.elem(kw, i))
		}
	}
	if hn {
		for i := 0; i < an.Len(); i++ {
			bn = append(bn, n.elem(kw, i))
		}
	}
	d.matchAlts(bo, bn, nil, nil, kw, kw, pol, rd)
}

// alternatives returns the branches of a position that is nothing but a
// choice: anyOf or oneOf (not both) with only annotations, bookkeeping,
// unknown keywords and a type that admits every branch beside it. Such a
// position accepts exactly what its branches accept, so it is compared
// with the other side as a set of alternatives.
func (d *schDiffer) alternatives(s *schSide, x schNode, rd int) (string, []schNode) {
	if schClass(x.v) != schObj {
		return "", nil
	}
	kw := ""
	for _, k := range [...]string{"anyOf", "oneOf"} {
		if a, ok := x.v.Get(k); ok {
			if kw != "" || a.Kind() != jcs.Array || a.Len() == 0 {
				return "", nil
			}
			kw = k
		}
	}
	if kw == "" {
		return "", nil
	}
	for i := 0; i < x.v.Len(); i++ {
		k, _ := x.v.Member(i)
		ks := k.Str()
		if ks == kw || ks == "type" || schKeywords[ks] != schKwStructural {
			continue
		}
		return "", nil
	}
	a, _ := x.v.Get(kw)
	alts := make([]schNode, a.Len())
	var union uint8
	for i := range alts {
		alts[i] = x.elem(kw, i)
		union |= d.effMask(s, alts[i].v, rd)
	}
	if t, ok := x.v.Get("type"); ok {
		m, ok := schTypeMask(t, true)
		if !ok || m&union != union {
			return "", nil // the type restricts the branches: compare keyword by keyword
		}
	}
	return kw, alts
}

// schValidating reports whether a position has a keyword that validates
// (so a comparison of it with branches is meaningful).
func schValidating(v jcs.Value) bool {
	if schClass(v) != schObj {
		return false
	}
	for i := 0; i < v.Len(); i++ {
		k, _ := v.Member(i)
		if schKeywords[k.Str()] == schKwStructural {
			return true
		}
	}
	return false
}

// lift compares two positions as sets of alternatives when either is a
// choice (alternatives): anyOf [A, B] against A' (a schema moved into an
// anyOf, or an anyOf reduced to one branch), anyOf against oneOf, or two
// choices. The position that is not a choice is one alternative; the branch
// it is paired with has the choice as an outer layer, so the annotations
// of the choice and of the schema are compared where they apply. mo and mn
// are the annotation chains of the positions (see schLayers). false:
// neither side is a choice, compare keyword by keyword.
func (d *schDiffer) lift(o, n schNode, mo, mn []schNode, pol int8, rd int) bool {
	ko, ao := d.alternatives(d.old, o, rd)
	kn, an := d.alternatives(d.new, n, rd)
	switch {
	case ko == "" && kn == "":
		return false
	case ko == "":
		if !schValidating(o.v) {
			return false
		}
		o.outer = mo[:len(mo)-1]
		if d.split(o, an, mn, true, kn, pol, rd) {
			return true
		}
		if mo, _ := d.matchAlts([]schNode{o}, an, nil, mn, ko, kn, pol, rd); mo[0] == -1 {
			d.meta(schLayers(o, []schNode{o}), mn, pol)
		}
		return true
	case kn == "":
		if !schValidating(n.v) {
			return false
		}
		n.outer = mn[:len(mn)-1]
		if d.split(n, ao, mo, false, ko, pol, rd) {
			return true
		}
		if _, mn2 := d.matchAlts(ao, []schNode{n}, mo, nil, ko, kn, pol, rd); mn2[0] == -1 {
			d.meta(mo, schLayers(n, []schNode{n}), pol)
		}
		return true
	}
	d.meta(mo, mn, pol)
	d.matchAlts(ao, an, nil, nil, ko, kn, pol, rd)
	if ko != kn && len(ao) > 1 && len(an) > 1 {
		// anyOf ↔ oneOf over branches that may overlap: exclusivity.
		if kn == "oneOf" && !d.pairwiseDisjoint(d.new, an) {
			d.emit(CompositionNarrowed, n.path.str()+"/oneOf", Narrowing, pol, false,
				"anyOf became oneOf over branches that may overlap: an instance matching more than one is now rejected", "")
		}
		if ko == "oneOf" && !d.pairwiseDisjoint(d.old, ao) {
			d.emit(CompositionWidened, n.path.str()+"/anyOf", Widening, pol, false,
				"oneOf became anyOf over branches that may overlap: an instance matching more than one is now accepted", "")
		}
	}
	return true
}

// split compares a schema p of several types (a type keyword, no enum or
// const) with the branches of a choice that take its types apart
// (branches of pairwise disjoint types, as {"type":["string","null"]}
// against {"anyOf":[{"type":"string"},{"type":"null"}]}): each branch is
// compared with p restricted to the branch's types, a branch of types p
// did not take is added (or removed), and types of p no branch takes are
// lost (or gained). pIsOld says which side p is on; layers are the
// annotation chain of the choice. false: not such a case.
func (d *schDiffer) split(p schNode, br, layers []schNode, pIsOld bool, kw string, pol int8, rd int) bool {
	ps, bs := d.old, d.new
	if !pIsOld {
		ps, bs = d.new, d.old
	}
	if p.v.Kind() != jcs.Object || len(br) < 2 {
		return false
	}
	_, he := p.v.Get("enum")
	_, hc := p.v.Get("const")
	if he || hc {
		return d.splitValues(p, br, layers, pIsOld, kw, pol, rd)
	}
	t, ok := p.v.Get("type")
	if !ok {
		return false
	}
	pm := d.effMask(ps, p.v, rd)
	if tm, ok := schTypeMask(t, true); !ok || tm != pm || schTypeGroups(pm) < 2 {
		return false
	}
	masks := make([]uint8, len(br))
	var union uint8
	for i, b := range br {
		masks[i] = d.effMask(bs, b.v, rd)
		if masks[i] == 0 || union&masks[i] != 0 {
			return false
		}
		union |= masks[i]
	}
	if !d.charge(len(br)+1, func() string { return schNodePtr(p, br[0]) }) {
		return true
	}
	matched := make([]int, len(br))
	for i, b := range br {
		matched[i] = -1
		if masks[i]&pm == 0 {
			continue
		}
		matched[i] = 0
		q := p
		q.tmask = masks[i]
		b.outer = layers
		if pIsOld {
			d.diff(q, b, pol, rd)
		} else {
			d.diff(b, q, pol, rd)
		}
	}
	one := []int{0}
	if pIsOld {
		d.unmatched([]schNode{p}, br, one, matched, "", kw, pol, rd, "")
	} else {
		d.unmatched(br, []schNode{p}, matched, one, kw, "", pol, rd, "")
	}
	if lost := pm &^ union; lost != 0 {
		ptr := p.path.str() + "/type"
		if pIsOld {
			d.emit(TypeNarrowed, ptr, Narrowing, pol, false, "type "+schTypeString(pm)+" → "+schTypeString(pm&union)+": no branch of the new "+kw+" takes "+schTypeString(lost), "")
		} else {
			d.emit(TypeWidened, ptr, Widening, pol, false, "type "+schTypeString(pm&union)+" → "+schTypeString(pm)+": no branch of the old "+kw+" took "+schTypeString(lost), "")
		}
	}
	return true
}

// splitValues is split for a schema p limited to values (enum, const)
// against branches limited to pairwise disjoint values ({"enum":["off",
// "strict"]} against {"anyOf":[{"const":"off"},{"const":"strict"}]}):
// each branch is compared with p restricted to the branch's values (and
// types), a branch of values p did not take is added (or removed), and
// values of p no branch takes are lost (or gained).
func (d *schDiffer) splitValues(p schNode, br, layers []schNode, pIsOld bool, kw string, pol int8, rd int) bool {
	ps, bs := d.old, d.new
	if !pIsOld {
		ps, bs = d.new, d.old
	}
	pz := ps.nz.norm(p.v)
	if pz == nil || pz.set == nil {
		return false
	}
	sets := make([]map[string]bool, len(br))
	taken := map[string]bool{}
	for i, b := range br {
		z := bs.nz.norm(b.v)
		if z == nil || z.set == nil {
			return false
		}
		sets[i] = make(map[string]bool, len(z.set))
		for _, k := range z.set {
			if taken[k] {
				return false // not disjoint
			}
			taken[k] = true
			sets[i][k] = true
		}
	}
	if !d.charge(len(br)+1, func() string { return schNodePtr(p, br[0]) }) {
		return true
	}
	inP := make(map[string]bool, len(pz.set))
	for _, k := range pz.set {
		inP[k] = true
	}
	matched := make([]int, len(br))
	for i, b := range br {
		matched[i] = -1
		meets := false
		for k := range sets[i] {
			if inP[k] {
				meets = true
				break
			}
		}
		if !meets {
			continue
		}
		matched[i] = 0
		q := p
		q.vset = sets[i]
		q.tmask = d.effMask(bs, b.v, rd)
		b.outer = layers
		if pIsOld {
			d.diff(q, b, pol, rd)
		} else {
			d.diff(b, q, pol, rd)
		}
	}
	one := []int{0}
	if pIsOld {
		d.unmatched([]schNode{p}, br, one, matched, "", kw, pol, rd, "")
	} else {
		d.unmatched(br, []schNode{p}, matched, one, kw, "", pol, rd, "")
	}
	vals, _ := d.values(ps, p)
	var lost []string
	for _, k := range vals.keys {
		if inP[k] && !taken[k] {
			lost = append(lost, k)
		}
	}
	if len(lost) > 0 {
		ptr := p.path.str() + "/enum"
		if _, he := p.v.Get("enum"); !he {
			ptr = p.path.str() + "/const"
		}
		if pIsOld {
			d.emit(EnumNarrowed, ptr, Narrowing, pol, false, "enum values removed: "+schPreviewValues(vals, lost)+" (no branch of the new "+kw+" takes them)", "")
		} else {
			d.emit(EnumWidened, ptr, Widening, pol, false, "enum values added: "+schPreviewValues(vals, lost)+" (no branch of the old "+kw+" took them)", "")
		}
	}
	return true
}

// pairwiseDisjoint proves that no instance matches two of the branches
// (see nrmDisjoint).
func (d *schDiffer) pairwiseDisjoint(s *schSide, br []schNode) bool {
	xs := make([]*nrm, len(br))
	for i, b := range br {
		if xs[i] = s.nz.norm(b.v); xs[i] == nil {
			return false
		}
	}
	return nrmPairwiseDisjoint(xs)
}

// disjointFrom proves that no instance matches both br[i] and any other
// branch of br.
func (d *schDiffer) disjointFrom(s *schSide, br []schNode, i int) bool {
	if len(br) > 64 {
		return false
	}
	x := s.nz.norm(br[i].v)
	if x == nil {
		return false
	}
	for j, b := range br {
		if j == i {
			continue
		}
		y := s.nz.norm(b.v)
		if y == nil || !nrmDisjoint(x, y) {
			return false
		}
	}
	return true
}

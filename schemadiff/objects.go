package schemadiff

import (
	"math"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Objects and their properties: properties and required (param_added_*,
// param_removed, required_*), additionalProperties and
// unevaluatedProperties, patternProperties, propertyNames,
// minProperties/maxProperties, dependentRequired, dependentSchemas and
// draft-07 dependencies.

// schStringSet reads an array of strings (absent: empty).
func schStringSet(v jcs.Value, has bool) (map[string]bool, []string, bool) {
	if !has {
		return nil, nil, true
	}
	if v.Kind() != jcs.Array {
		return nil, nil, false
	}
	set := make(map[string]bool, v.Len())
	var list []string
	for i := 0; i < v.Len(); i++ {
		e := v.Index(i)
		if e.Kind() != jcs.String {
			return nil, nil, false
		}
		if !set[e.Str()] {
			set[e.Str()] = true
			list = append(list, e.Str())
		}
	}
	return set, list, true
}

// schClosed reports that properties not listed are rejected.
func schClosed(x schNode) bool {
	for _, kw := range [...]string{"additionalProperties", "unevaluatedProperties"} {
		if v, ok := x.get(kw); ok && v.Kind() == jcs.False {
			return true
		}
	}
	return false
}

// schAddlClass grades additionalProperties-like keywords: 0 false, 1 a
// schema, 2 anything (absent, true, {}), -1 not a schema.
func schAddlClass(v jcs.Value, has bool) int {
	if !has {
		return 2
	}
	switch schClass(v) {
	case schNone:
		return 0
	case schObj:
		return 1
	case schAny:
		return 2
	}
	return -1
}

var schAddlNames = [...]string{"false", "a schema", "absent or true"}

func (d *schDiffer) objects(o, n schNode, pol int8, rd int) {
	po, hpo := o.get("properties")
	pn, hpn := n.get("properties")
	if (hpo && po.Kind() != jcs.Object) || (hpn && pn.Kind() != jcs.Object) {
		d.malformed(o, n, "properties", pol)
		hpo, hpn = hpo && po.Kind() == jcs.Object, hpn && pn.Kind() == jcs.Object
	}
	ro, hro := o.get("required")
	rn, hrn := n.get("required")
	reqO, listO, okO := schStringSet(ro, hro)
	reqN, listN, okN := schStringSet(rn, hrn)
	if !okO || !okN {
		d.malformed(o, n, "required", pol)
		reqO, reqN, listO, listN = nil, nil, nil, nil
	}
	inProps := func(p jcs.Value, has bool, k string) bool {
		if !has {
			return false
		}
		_, ok := p.Get(k)
		return ok
	}
	if hpo {
		for i := 0; i < po.Len(); i++ {
			k, _ := po.Member(i)
			ks := k.Str()
			if inProps(pn, hpn, ks) {
				d.diff(o.member("properties", ks), n.member("properties", ks), pol, rd)
				ptr := jcs.PointerJoin(n.path.str(), "properties", ks)
				switch {
				case reqN[ks] && !reqO[ks]:
					d.emit(RequiredAdded, ptr, Narrowing, pol, false, ks+" is now required", "")
				case reqO[ks] && !reqN[ks]:
					d.emit(RequiredDropped, ptr, Widening, pol, false, ks+" is no longer required", "")
				}
				continue
			}
			m := o.member("properties", ks)
			what := ks + " (" + schTypeString(d.effMask(d.old, m.v, rd)) + ")"
			if schClosed(n) {
				why := "; callers still sending it are rejected"
				if d.opt.Output {
					why = "; the tool no longer returns it"
				}
				d.emit(ParamRemoved, m.path.str(), Narrowing, pol, true, what+why, "")
				continue
			}
			// Open: the key is still accepted, no longer described.
			why := "; no longer described: the key is still accepted, with any value"
			if d.opt.Output {
				why = "; no longer declared: the tool may omit it, or return it with any value"
			}
			hi := false
			if c := d.constrained(d.old, m.v, rd); c != "" {
				hi, why = true, why+"; the dropped declaration "+c
			}
			d.emit(ParamRemoved, m.path.str(), Widening, pol, hi, what+why, "")
		}
	}
	if hpn {
		for i := 0; i < pn.Len(); i++ {
			k, _ := pn.Member(i)
			ks := k.Str()
			if inProps(po, hpo, ks) {
				continue
			}
			m := n.member("properties", ks)
			detail := ks + " (" + schTypeString(d.effMask(d.new, m.v, rd)) + ")"
			if reqN[ks] {
				d.emit(ParamAddedRequired, m.path.str(), Narrowing, pol, false, detail, "")
			} else {
				d.emit(ParamAddedOptional, m.path.str(), Widening, pol, schCapabilityName(ks) || schPermissive(m.v), detail, "")
			}
		}
	}
	// Required names listed in neither side's properties.
	for _, ks := range listN {
		if !reqO[ks] && !inProps(po, hpo, ks) && !inProps(pn, hpn, ks) {
			d.emit(RequiredAdded, n.path.str()+"/required", Narrowing, pol, false, ks+" is now required", "")
		}
	}
	for _, ks := range listO {
		if !reqN[ks] && !inProps(po, hpo, ks) && !inProps(pn, hpn, ks) {
			d.emit(RequiredDropped, schKwPtr(o, n, "required"), Widening, pol, false, ks+" is no longer required", "")
		}
	}

	d.addl(o, n, "additionalProperties", AdditionalPropertiesLoosened, AdditionalPropertiesTightened, pol, rd)
	d.addl(o, n, "unevaluatedProperties", AdditionalPropertiesLoosened, AdditionalPropertiesTightened, pol, rd)
	d.patternProps(o, n, pol, rd)
	d.diff(o.child("propertyNames"), n.child("propertyNames"), pol, rd)
	d.count(o, n, "minProperties", false, 0, pol)
	d.count(o, n, "maxProperties", true, math.Inf(1), pol)
	d.depRequired(o, n, "dependentRequired", pol)
	d.depSchemas(o, n, "dependentSchemas", pol, rd)
	d.dependencies(o, n, pol, rd)
}

// constrained says how a property's schema constrained its value in a way
// whose loss matters ("" when it did not): it forbade the key (false), or
// had an enum, a const or a pattern (also in one of its anyOf/oneOf
// branches), following pure references.
func (d *schDiffer) constrained(s *schSide, v jcs.Value, rd int) string {
	for range 8 {
		ref, _, ok := s.pureRef(v)
		if !ok || rd >= d.opt.MaxRefDepth {
			break
		}
		t, _, problem := s.resolveAt(ref, v)
		if problem != "" {
			break
		}
		v, rd = t, rd+1
	}
	if schClass(v) == schNone {
		return "forbade the key"
	}
	if schClass(v) != schObj {
		return ""
	}
	for _, kw := range [...]string{"const", "enum", "pattern"} {
		if _, ok := v.Get(kw); ok {
			return "had " + map[string]string{"const": "a const", "enum": "an enum", "pattern": "a pattern"}[kw]
		}
	}
	for _, kw := range [...]string{"anyOf", "oneOf"} {
		if a, ok := v.Get(kw); ok && a.Kind() == jcs.Array {
			for i := 0; i < a.Len(); i++ {
				b := a.Index(i)
				if b.Kind() != jcs.Object {
					continue
				}
				for _, k := range [...]string{"const", "enum", "pattern"} {
					if _, ok := b.Get(k); ok {
						return "had a branch with " + map[string]string{"const": "a const", "enum": "an enum", "pattern": "a pattern"}[k]
					}
				}
			}
		}
	}
	return ""
}

// addl compares additionalProperties-like keywords: false < a schema <
// anything; two schemas are compared structurally.
func (d *schDiffer) addl(o, n schNode, kw, loosened, tightened string, pol int8, rd int) {
	vo, ho := o.get(kw)
	vn, hn := n.get(kw)
	if !ho && !hn {
		return
	}
	co, cn := schAddlClass(vo, ho), schAddlClass(vn, hn)
	switch {
	case co < 0 || cn < 0:
		d.malformed(o, n, kw, pol)
	case co == 1 && cn == 1:
		d.diff(o.child(kw), n.child(kw), pol, rd)
	case cn > co:
		d.emit(loosened, schKwPtr(o, n, kw), Widening, pol, false, kw+" "+schAddlNames[co]+" → "+schAddlNames[cn], "")
	case cn < co:
		d.emit(tightened, schKwPtr(o, n, kw), Narrowing, pol, false, kw+" "+schAddlNames[co]+" → "+schAddlNames[cn], "")
	}
}

// schUnionKeys lists the member names of two objects (either may be
// absent): a's in canonical order, then b's that a lacks.
func schUnionKeys(a, b jcs.Value, ha, hb bool) []string {
	var out []string
	if ha {
		out = a.Keys()
	}
	if hb {
		for i := 0; i < b.Len(); i++ {
			k, _ := b.Member(i)
			ks := k.Str()
			if ha {
				if _, ok := a.Get(ks); ok {
					continue
				}
			}
			out = append(out, ks)
		}
	}
	return out
}

// patternProps: a pattern added lets new names in when the object is
// closed (loosened), else constrains the values of matching names
// (tightened); removal mirrors that.
func (d *schDiffer) patternProps(o, n schNode, pol int8, rd int) {
	const kw = "patternProperties"
	keys, ok := d.objectKeyword(o, n, kw, pol)
	if !ok {
		return
	}
	for _, k := range keys {
		mo, mn := o.member(kw, k), n.member(kw, k)
		switch {
		case mo.v.Valid() && mn.v.Valid():
			d.diff(mo, mn, pol, rd)
		case mn.v.Valid():
			if schClosed(n) {
				d.emit(AdditionalPropertiesLoosened, mn.path.str(), Widening, pol, false, "pattern property added: names matching "+schQuote(k)+" are now accepted", "")
			} else {
				d.emit(AdditionalPropertiesTightened, mn.path.str(), Narrowing, pol, false, "pattern property added: values of names matching "+schQuote(k)+" are now constrained", "")
			}
		default:
			if schClosed(o) {
				d.emit(AdditionalPropertiesTightened, mo.path.str(), Narrowing, pol, false, "pattern property removed: names matching "+schQuote(k)+" are no longer accepted", "")
			} else {
				d.emit(AdditionalPropertiesLoosened, mo.path.str(), Widening, pol, false, "pattern property removed: values of names matching "+schQuote(k)+" are no longer constrained", "")
			}
		}
	}
}

// objectKeyword returns the member names of keyword kw on either side, for
// keywords whose value is an object (patternProperties, dependentRequired,
// dependentSchemas, dependencies). ok is false when neither side has kw, or
// when a side's value is not an object (reported as malformed).
func (d *schDiffer) objectKeyword(o, n schNode, kw string, pol int8) (keys []string, ok bool) {
	vo, ho := o.get(kw)
	vn, hn := n.get(kw)
	if !ho && !hn {
		return nil, false
	}
	if (ho && vo.Kind() != jcs.Object) || (hn && vn.Kind() != jcs.Object) {
		d.malformed(o, n, kw, pol)
		return nil, false
	}
	return schUnionKeys(vo, vn, ho, hn), true
}

// depRequired compares a dependentRequired-like object of string arrays.
func (d *schDiffer) depRequired(o, n schNode, kw string, pol int8) {
	keys, ok := d.objectKeyword(o, n, kw, pol)
	if !ok {
		return
	}
	for _, k := range keys {
		d.depList(o.member(kw, k), n.member(kw, k), k, pol)
	}
}

func (d *schDiffer) depList(mo, mn schNode, k string, pol int8) {
	so, lo, okO := schStringSet(mo.v, mo.v.Valid())
	sn, ln, okN := schStringSet(mn.v, mn.v.Valid())
	ptr := schNodePtr(mo, mn)
	if !okO || !okN {
		if !d.same(mo.v, mn.v) {
			d.emit(KeywordUnmodeled, ptr, Neutral, pol, false, "dependency of "+schQuote(k)+" has a value this keyword does not take", "")
		}
		return
	}
	var added, removed []string
	for _, s := range ln {
		if !so[s] {
			added = append(added, s)
		}
	}
	for _, s := range lo {
		if !sn[s] {
			removed = append(removed, s)
		}
	}
	if len(added) > 0 {
		d.emit(ConstraintTightened, ptr, Narrowing, pol, false, "when "+k+" is present, now also required: "+safetext.Clip(strings.Join(added, ", "), 120), "")
	}
	if len(removed) > 0 {
		d.emit(ConstraintLoosened, ptr, Widening, pol, false, "when "+k+" is present, no longer required: "+safetext.Clip(strings.Join(removed, ", "), 120), "")
	}
}

func (d *schDiffer) depSchemas(o, n schNode, kw string, pol int8, rd int) {
	keys, ok := d.objectKeyword(o, n, kw, pol)
	if !ok {
		return
	}
	for _, k := range keys {
		d.diff(o.member(kw, k), n.member(kw, k), pol, rd)
	}
}

// dependencies is draft-07's union of dependentRequired (arrays) and
// dependentSchemas (schemas).
func (d *schDiffer) dependencies(o, n schNode, pol int8, rd int) {
	const kw = "dependencies"
	keys, ok := d.objectKeyword(o, n, kw, pol)
	if !ok {
		return
	}
	for _, k := range keys {
		mo, mn := o.member(kw, k), n.member(kw, k)
		arrO := mo.v.Valid() && mo.v.Kind() == jcs.Array
		arrN := mn.v.Valid() && mn.v.Kind() == jcs.Array
		switch {
		case arrO && arrN, arrO && !mn.v.Valid(), arrN && !mo.v.Valid():
			d.depList(mo, mn, k, pol)
		case arrO || arrN:
			d.emit(ConstraintLoosened, schNodePtr(mo, mn), Neutral, pol, false,
				"dependency of "+schQuote(k)+" changed between a list of names and a schema", "")
		default:
			d.diff(mo, mn, pol, rd)
		}
	}
}

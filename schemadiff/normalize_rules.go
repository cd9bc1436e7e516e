package schemadiff

import (
	"bytes"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// The rules of the normal form (see nrm) that read several keywords of a
// schema together: type and enum as one set, defaults written out,
// allOf/anyOf/oneOf flattened and merged; and the proofs that two
// branches accept no instance in common.

// nrmGroups are keywords that read each other: a member of allOf is not
// merged into its parent when both have keywords of one group.
var nrmGroups = map[string]uint8{
	"properties": 1, "patternProperties": 1, "additionalProperties": 1,
	"items": 2, "prefixItems": 2, "additionalItems": 2,
	"contains": 3, "minContains": 3, "maxContains": 3,
	"if": 4, "then": 4, "else": 4,
	"minimum": 5, "exclusiveMinimum": 5,
	"maximum": 6, "exclusiveMaximum": 6,
}

// nrmNoMerge are keywords whose schema is not merged with another.
var nrmNoMerge = map[string]bool{"$id": true, "$schema": true, "unevaluatedProperties": true, "unevaluatedItems": true}

func nrmSortDedup(xs []*nrm, dedup bool) []*nrm {
	xs = slices.Clone(xs)
	slices.SortFunc(xs, func(a, b *nrm) int { return bytes.Compare(a.sum[:], b.sum[:]) })
	if dedup {
		xs = slices.CompactFunc(xs, func(a, b *nrm) bool { return a.sum == b.sum })
	}
	return xs
}

// finish applies the rules that read several keywords and builds the node.
func (z *nrmSide) finish(kw map[string]*nrm, allOf []*nrm, typeV jcs.Value, hasType bool, enumV jcs.Value, hasEnum bool, constV jcs.Value, hasConst bool) *nrm {
	mask, set, hasSet, isFalse := z.typeAndValues(kw, typeV, hasType, enumV, hasEnum, constV, hasConst)
	z.dropDefaults(kw)
	if n, ok := kw["not"]; ok && n.isTrue() {
		isFalse = true
	}
	allOf, none := z.choices(kw, allOf)
	isFalse = isFalse || none
	members, flat, none := nrmFlatten(allOf)
	mask &= flat
	isFalse = isFalse || none
	members = nrmSortDedup(members, true)
	var rest []*nrm
	for _, m := range members {
		if z.mergeable(kw, m) {
			for i, k := range m.keys {
				kw[k] = m.vals[i]
			}
			mask &= m.mask
			if m.set != nil {
				set, hasSet = nrmIntersect(set, hasSet, m.set), true
			}
			continue
		}
		rest = append(rest, m)
	}
	if len(rest) > 0 {
		kw["allOf"] = nrmList(rest)
		for _, m := range rest {
			mask &= m.mask
		}
	}
	if isFalse {
		// Keep only the annotations: the schema accepts nothing.
		m := map[string]*nrm{"not": nrmTrue}
		for k, v := range kw {
			if schKeywords[k] == schKwAnnotation {
				m[k] = v
			}
		}
		x := nrmFromMap(m)
		x.mask, x.set = 0, []string{}
		return x
	}
	if a, ok := kw["anyOf"]; ok && a.arr {
		var u uint8
		for _, b := range a.vals {
			u |= b.mask
		}
		mask &= u
	}
	if a, ok := kw["oneOf"]; ok && a.arr {
		var u uint8
		for _, b := range a.vals {
			u |= b.mask
		}
		mask &= u
	}
	x := nrmFromMap(kw)
	x.mask = mask
	if hasSet {
		if set == nil {
			set = []string{}
		}
		x.set = set
	}
	if merged := len(members) - len(rest); merged > 0 && (x.get("type") != nil || x.get("enum") != nil) {
		// A merged member may have brought a type or an enum beside the
		// other: normalize the result once more so the rules that read
		// both apply (the result is a fixpoint of these rules).
		return z.refinish(x)
	}
	return x
}

// typeAndValues writes type, enum and const into kw: type as a set, enum
// and const as one set of values (a type beside them filters them and is
// dropped). It returns the types the schema may accept, the keys of its
// values (hasSet: it is limited to values), and whether it accepts
// nothing.
func (z *nrmSide) typeAndValues(kw map[string]*nrm, typeV jcs.Value, hasType bool, enumV jcs.Value, hasEnum bool, constV jcs.Value, hasConst bool) (mask uint8, set []string, hasSet, isFalse bool) {
	mask = schTAll
	// type
	if hasType {
		m, ok := schTypeMask(typeV, true)
		switch {
		case !ok:
			kw["type"] = z.leaf(typeV)
			hasType = false
		case m == schTAll:
			hasType = false
		default:
			mask = m
		}
	}
	// enum and const: one set.
	if hasEnum && enumV.Kind() != jcs.Array {
		kw["enum"] = z.leaf(enumV)
		hasEnum = false
		if hasConst {
			kw["const"] = z.leaf(constV)
			hasConst = false
		}
	}
	if hasEnum || hasConst {
		vals := map[string]jcs.Value{}
		if hasEnum {
			for i := 0; i < enumV.Len(); i++ {
				e := enumV.Index(i)
				vals[z.s.key(e)] = e
			}
		}
		if hasConst {
			k := z.s.key(constV)
			if hasEnum {
				if e, ok := vals[k]; ok {
					vals = map[string]jcs.Value{k: e}
				} else {
					vals = map[string]jcs.Value{}
				}
			} else {
				vals[k] = constV
			}
		}
		type kv struct {
			k string
			v jcs.Value
		}
		var list []kv
		for k, e := range vals {
			if hasType && mask&schValueType(e) == 0 {
				continue
			}
			list = append(list, kv{k, e})
		}
		slices.SortFunc(list, func(a, b kv) int { return strings.Compare(a.k, b.k) })
		leaves := make([]*nrm, len(list))
		var u uint8
		for i, e := range list {
			leaves[i] = z.leaf(e.v)
			set = append(set, e.k)
			u |= schValueType(e.v)
		}
		if len(list) == 0 {
			isFalse = true
		}
		kw["enum"] = nrmList(leaves)
		hasSet = true
		mask = u
		hasType = false
	}
	if hasType {
		var names []*nrm
		for _, t := range schTypeNames {
			if mask&t.bit != 0 && !(t.bit == schTInteger && mask&schTNumber != 0) {
				names = append(names, nrmLeaf(jcs.AppendString(nil, t.name)))
			}
		}
		kw["type"] = nrmList(names)
	}
	return mask, set, hasSet, isFalse
}

// dropDefaults drops from kw the keywords written out with the value they
// have when absent, and those that apply only beside a keyword kw lacks.
func (z *nrmSide) dropDefaults(kw map[string]*nrm) {
	zero := func(k, val string) {
		if x, ok := kw[k]; ok && x.raw != nil && string(x.raw) == val {
			delete(kw, k)
		}
	}
	zero("minItems", "0")
	zero("minLength", "0")
	zero("minProperties", "0")
	zero("uniqueItems", "false")
	zero("exclusiveMinimum", "false")
	zero("exclusiveMaximum", "false")
	if _, ok := kw["contains"]; ok {
		zero("minContains", "1")
	} else {
		delete(kw, "minContains")
		delete(kw, "maxContains")
	}
	if it, ok := kw["items"]; !ok || !it.arr {
		delete(kw, "additionalItems")
	}
	dropTrue := func(k string) {
		if x, ok := kw[k]; ok && x.isTrue() {
			delete(kw, k)
		}
	}
	dropTrue("propertyNames")
	if !z.uneval {
		dropTrue("additionalProperties")
		dropTrue("additionalItems")
		if it, ok := kw["items"]; ok && !it.arr {
			dropTrue("items")
		}
	}
	if _, ok := kw["if"]; ok {
		dropTrue("then")
		dropTrue("else")
		_, t := kw["then"]
		_, e := kw["else"]
		if !t && !e && !z.uneval {
			delete(kw, "if")
		}
	} else {
		delete(kw, "then")
		delete(kw, "else")
	}
}

// choices takes oneOf, anyOf and allOf out of kw and adds what they come
// to, as allOf members, to allOf: a oneOf of one branch, or of pairwise
// disjoint branches, is an anyOf; an anyOf is one member (see anyOf); an
// allOf's members are the parent's. A oneOf that stays is written back
// into kw, its branches sorted. none: a oneOf without a branch that
// accepts anything.
func (z *nrmSide) choices(kw map[string]*nrm, allOf []*nrm) ([]*nrm, bool) {
	none := false
	if x, ok := kw["oneOf"]; ok && x.arr {
		delete(kw, "oneOf")
		var br []*nrm
		for _, b := range x.vals {
			if !b.isFalse() {
				br = append(br, b)
			}
		}
		switch {
		case len(br) == 0:
			none = true
		case len(br) == 1:
			allOf = append(allOf, br[0])
		case nrmPairwiseDisjoint(br):
			allOf = append(allOf, z.anyOf(br))
		default:
			kw["oneOf"] = nrmList(nrmSortDedup(br, false))
		}
	}
	if x, ok := kw["anyOf"]; ok && x.arr {
		delete(kw, "anyOf")
		allOf = append(allOf, z.anyOf(x.vals))
	}
	if x, ok := kw["allOf"]; ok && x.arr {
		delete(kw, "allOf")
		allOf = append(allOf, x.vals...)
	}
	return allOf, none
}

// nrmFlatten reads allOf as associative: the allOf of a member is the
// parent's. It returns the members that remain (neither true nor false,
// without an allOf of their own), the types the flattened members' allOf
// holders allow, and whether a member accepts nothing.
func nrmFlatten(allOf []*nrm) (members []*nrm, mask uint8, none bool) {
	mask = schTAll
	for len(allOf) > 0 {
		m := allOf[0]
		allOf = allOf[1:]
		switch {
		case m.isFalse():
			none = true
		case m.isTrue():
		default:
			if a := m.get("allOf"); a != nil && a.arr {
				mask &= m.mask
				allOf = append(allOf, a.vals...)
				rest := make(map[string]*nrm, len(m.keys))
				for i, k := range m.keys {
					if k != "allOf" {
						rest[k] = m.vals[i]
					}
				}
				if len(rest) > 0 {
					r := nrmFromMap(rest)
					r.set = m.set
					allOf = append(allOf, r)
				}
				continue
			}
			members = append(members, m)
		}
	}
	return members, mask, none
}

// refinish re-applies finish to a node whose type and enum may meet.
func (z *nrmSide) refinish(x *nrm) *nrm {
	t, e := x.get("type"), x.get("enum")
	if t == nil || e == nil || !t.arr || !e.arr {
		return x
	}
	var tm uint8
	for _, n := range t.vals {
		s := string(n.raw)
		tm |= schTypeBit(s[1 : len(s)-1])
	}
	m := map[string]*nrm{}
	for i, k := range x.keys {
		if k != "type" && k != "enum" {
			m[k] = x.vals[i]
		}
	}
	var keep []*nrm
	var set []string
	var u uint8
	for i, v := range e.vals {
		vt := nrmLeafType(v.raw)
		if tm&vt == 0 {
			continue
		}
		keep = append(keep, v)
		set = append(set, x.set[i])
		u |= vt
	}
	if len(keep) == 0 {
		m["not"] = nrmTrue
	}
	m["enum"] = nrmList(keep)
	out := nrmFromMap(m)
	out.mask = x.mask & u
	out.set = set
	if set == nil {
		out.set = []string{}
	}
	return out
}

// nrmLeafType is the JSON type of canonical bytes.
func nrmLeafType(raw []byte) uint8 {
	d, err := jcs.Parse(raw)
	if err != nil {
		return schTAll
	}
	return schValueType(d.Root())
}

func nrmIntersect(a []string, hasA bool, b []string) []string {
	if !hasA {
		return b
	}
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func (z *nrmSide) anyOf(branches []*nrm) *nrm {
	var br []*nrm
	for _, b := range branches {
		switch {
		case b.isTrue():
			return nrmTrue
		case b.isFalse():
		default:
			br = append(br, b)
		}
	}
	switch len(br) {
	case 0:
		return nrmFalse
	case 1:
		return br[0]
	}
	br = nrmSortDedup(br, true)
	if len(br) == 1 {
		return br[0]
	}
	if x := nrmTypedUnion(br); x != nil {
		return x
	}
	if x := nrmEnumUnion(br); x != nil {
		return x
	}
	x := nrmSchema([]string{"anyOf"}, []*nrm{nrmList(br)})
	var u uint8
	for _, b := range br {
		u |= b.mask
	}
	x.mask = u
	return x
}

// schKeywordTypes are the keywords that apply to instances of some types
// only (any other instance passes them), and those types.
var schKeywordTypes = map[string]uint8{
	"minLength": schTString, "maxLength": schTString, "pattern": schTString, "format": schTString,
	"minimum": schTNumber | schTInteger, "maximum": schTNumber | schTInteger, "exclusiveMinimum": schTNumber | schTInteger,
	"exclusiveMaximum": schTNumber | schTInteger, "multipleOf": schTNumber | schTInteger,
	"properties": schTObject, "required": schTObject, "additionalProperties": schTObject, "patternProperties": schTObject,
	"propertyNames": schTObject, "minProperties": schTObject, "maxProperties": schTObject, "dependentRequired": schTObject,
	"dependentSchemas": schTObject, "dependencies": schTObject, "unevaluatedProperties": schTObject,
	"items": schTArray, "prefixItems": schTArray, "additionalItems": schTArray, "contains": schTArray,
	"minContains": schTArray, "maxContains": schTArray, "minItems": schTArray, "maxItems": schTArray,
	"uniqueItems": schTArray, "unevaluatedItems": schTArray,
}

// nrmTypedUnion writes anyOf branches of pairwise disjoint types, each
// with nothing beside its type but keywords that apply to its own types
// only, as one schema: {"anyOf":[{"type":"string","maxLength":5},
// {"type":"null"}]} is {"type":["null","string"],"maxLength":5} (what
// "maxLength" says of a null is nothing). nil when the branches are not
// such.
func nrmTypedUnion(br []*nrm) *nrm {
	m := map[string]*nrm{}
	var union uint8
	for _, b := range br {
		if b.get("type") == nil || b.mask == 0 || union&b.mask != 0 {
			return nil
		}
		union |= b.mask
	}
	for _, b := range br {
		for i, k := range b.keys {
			if k == "type" {
				continue
			}
			kt := schKeywordTypes[k]
			if kt == 0 || kt&(union&^b.mask) != 0 {
				return nil // applies to all types, or to another branch's too
			}
			if _, dup := m[k]; dup {
				return nil
			}
			m[k] = b.vals[i]
		}
	}
	var names []*nrm
	for _, t := range schTypeNames {
		if union&t.bit != 0 && !(t.bit == schTInteger && union&schTNumber != 0) {
			names = append(names, nrmLeaf(jcs.AppendString(nil, t.name)))
		}
	}
	m["type"] = nrmList(names)
	x := nrmFromMap(m)
	x.mask = union
	return x
}

// nrmEnumUnion writes anyOf branches that are nothing but an enum (a const,
// or a type beside them, was written as one) as one enum of all their
// values. nil when the branches are not such.
func nrmEnumUnion(br []*nrm) *nrm {
	vals := map[string]*nrm{}
	var mask uint8
	for _, b := range br {
		e := b.get("enum")
		if len(b.keys) != 1 || e == nil || !e.arr || len(e.vals) != len(b.set) {
			return nil
		}
		for i, k := range b.set {
			vals[k] = e.vals[i]
		}
		mask |= b.mask
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	leaves := make([]*nrm, len(keys))
	for i, k := range keys {
		leaves[i] = vals[k]
	}
	x := nrmSchema([]string{"enum"}, []*nrm{nrmList(leaves)})
	x.mask, x.set = mask, keys
	return x
}

// mergeable reports whether allOf member m can be merged into the keywords
// kw of its parent without changing what either validates.
func (z *nrmSide) mergeable(kw map[string]*nrm, m *nrm) bool {
	if z.uneval {
		return false
	}
	if _, ok := kw["$id"]; ok {
		return false
	}
	var groups uint8
	for k := range kw {
		if nrmNoMerge[k] {
			return false
		}
		if g := nrmGroups[k]; g != 0 {
			groups |= 1 << g
		}
	}
	for _, k := range m.keys {
		if nrmNoMerge[k] {
			return false
		}
		if _, clash := kw[k]; clash {
			return false
		}
		if g := nrmGroups[k]; g != 0 && groups&(1<<g) != 0 {
			return false
		}
	}
	return true
}

// nrmPairwiseDisjoint reports whether no instance can match two of the
// branches (proved by schDisjointN; at most 32 branches are tried).
func nrmPairwiseDisjoint(br []*nrm) bool {
	if len(br) > 32 {
		return false
	}
	for i := range br {
		for j := i + 1; j < len(br); j++ {
			if !nrmDisjoint(br[i], br[j]) {
				return false
			}
		}
	}
	return true
}

// nrmDisjoint proves that no instance matches both a and b: their types
// cannot meet, their enums share no value, or both are objects that
// require a property whose values cannot meet (a discriminator).
func nrmDisjoint(a, b *nrm) bool {
	if a.mask&b.mask == 0 {
		return true
	}
	if a.set != nil && b.set != nil {
		for _, s := range a.set {
			if slices.Contains(b.set, s) {
				return false
			}
		}
		return true
	}
	if (a.mask|b.mask)&^schTObject != 0 {
		return false
	}
	ra, rb := a.get("required"), b.get("required")
	pa, pb := a.get("properties"), b.get("properties")
	if ra == nil || rb == nil || pa == nil || pb == nil || !ra.arr || !rb.arr || pa.keys == nil || pb.keys == nil {
		return false
	}
	for _, n := range ra.vals {
		if !slices.ContainsFunc(rb.vals, func(m *nrm) bool { return m.sum == n.sum }) {
			continue
		}
		var name string
		if d, err := jcs.Parse(n.raw); err == nil {
			name = d.Root().Str()
		}
		sa, sb := pa.get(name), pb.get(name)
		if sa != nil && sb != nil && sa.keys != nil && sb.keys != nil && nrmDisjoint(sa, sb) {
			return true
		}
	}
	return false
}

package schemadiff

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// The normal form of a schema: a canonical spelling such that two schemas
// with the same normal form accept the same instances and carry the same
// annotations. It is a proof of equivalence, never a guess: every rule
// below keeps the set of accepted instances exactly, so equal normal forms
// mean a notation change; different normal forms mean nothing (the walk
// then decides). The rules:
//
//   - true, {} and an absent schema are one schema; false is {"not":{}}.
//   - type is a set: a string or a one-element array, any order, duplicates;
//     integer is dropped beside number; every type is no type.
//   - enum is a set of canonical values (order, duplicates and 1 vs 1.0 do
//     not matter); const c is enum [c]; enum and const together are their
//     intersection; a type beside an enum filters the enum and is dropped.
//   - required is a set; empty required, properties, patternProperties,
//     dependentRequired and dependentSchemas are dropped.
//   - default values written out are dropped: minItems, minLength and
//     minProperties 0, uniqueItems false, minContains 1, boolean
//     exclusiveMinimum/exclusiveMaximum false, additionalProperties, items,
//     additionalItems, propertyNames, then and else that accept everything;
//     additionalItems without an items array, then/else without if,
//     minContains/maxContains without contains. (additionalProperties,
//     items, additionalItems and if also produce annotations that
//     unevaluatedProperties/unevaluatedItems read: in a document that uses
//     those, they are kept, and allOf is not flattened.)
//   - allOf is a set; members that accept everything are dropped, a member
//     that accepts nothing makes the schema false; a member whose keywords
//     do not meet the parent's (disjoint keywords, and no two keywords that
//     read each other — properties, patternProperties and
//     additionalProperties; items, prefixItems and additionalItems;
//     contains, minContains and maxContains; if, then and else; a bound and
//     its boolean exclusive form) is merged into the parent.
//   - anyOf is a set; false branches are dropped; a branch that accepts
//     everything makes it true; a single branch is an allOf member;
//     branches of pairwise disjoint types with nothing beside their type but
//     keywords of their own types are one schema of the union type
//     (nrmTypedUnion: {"anyOf":[{"type":"string"},{"type":"null"}]} is
//     {"type":["null","string"]}), and branches that are nothing but an
//     enum are one enum of all their values. oneOf
//     is a list in canonical order (duplicates matter); false branches are
//     dropped; a single branch is an allOf member; oneOf whose branches are
//     pairwise disjoint (schDisjoint) is anyOf.
//   - an internal $ref is replaced by its target (annotations beside a
//     pure reference override the target's); a reference beside validating
//     keywords is an allOf member. A reference back into a definition being
//     expanded is written as its distance on the expansion stack, so two
//     recursive schemas compare by structure, whatever their definitions
//     are called. $defs, definitions and $anchor are dropped (references
//     were replaced); so is $id, and an external reference is written as
//     what it names (resolved against the $ids around it, as written when
//     there is none); $schema and unknown keywords are kept verbatim.
//
// A document with $dynamicRef or $dynamicAnchor has no normal form here
// (dynamic scope is not modeled), nor has a $ref beside validating
// keywords in a document that declares draft-04, -06 or -07 (which ignore
// them, where 2020-12 applies them), nor has one whose normalization needs
// more than the work budget, or an internal reference that cannot be
// resolved.
type nrm struct {
	keys []string // a schema: its keywords, sorted; nil for a leaf
	vals []*nrm
	raw  []byte // a leaf: the canonical bytes of a value (data, a number, a string)
	arr  bool   // a list of schemas or of leaves (vals)
	sum  [32]byte
	vsum [32]byte // a schema: the digest without its own annotation keywords
	esc  int      // the lowest expansion-stack frame a back-reference inside refers to
	mask uint8    // a schema: the JSON types it may accept (a superset)
	// synthetic: holds an external reference named relative to an unknown
	// base (relative $ids without a root $id): no written normal form.
	synthetic bool
	set       []string // a schema with enum: its values' keys (what it may accept, a superset)
}

var (
	nrmTrue  = nrmSchema(nil, nil)
	nrmFalse = nrmSchema([]string{"not"}, []*nrm{nrmTrue})
)

func (x *nrm) isTrue() bool  { return x.keys != nil && len(x.keys) == 0 && !x.arr && x.raw == nil }
func (x *nrm) isFalse() bool { return x.sum == nrmFalse.sum }

func (x *nrm) get(k string) *nrm {
	if i, ok := slices.BinarySearch(x.keys, k); ok {
		return x.vals[i]
	}
	return nil
}

func nrmLeaf(raw []byte) *nrm {
	x := &nrm{raw: raw, esc: math.MaxInt}
	h := sha256.New()
	h.Write([]byte{'r'})
	h.Write(raw)
	h.Sum(x.sum[:0])
	return x
}

func nrmList(vals []*nrm) *nrm {
	x := &nrm{arr: true, vals: vals, esc: math.MaxInt}
	h := sha256.New()
	h.Write([]byte{'a'})
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(vals)))])
	for _, v := range vals {
		h.Write(v.sum[:])
		x.esc = min(x.esc, v.esc)
		x.synthetic = x.synthetic || v.synthetic
	}
	h.Sum(x.sum[:0])
	return x
}

// nrmSchema builds a schema node from sorted keys (keys must not be
// modified afterwards). The mask and set are filled in by the caller.
func nrmSchema(keys []string, vals []*nrm) *nrm {
	if keys == nil {
		keys = []string{}
	}
	x := &nrm{keys: keys, vals: vals, esc: math.MaxInt, mask: schTAll}
	h, hv := sha256.New(), sha256.New()
	h.Write([]byte{'o'})
	hv.Write([]byte{'o'})
	var n [4]byte
	for i, k := range keys {
		x.esc = min(x.esc, vals[i].esc)
		x.synthetic = x.synthetic || vals[i].synthetic
		binary.BigEndian.PutUint32(n[:], uint32(len(k)))
		h.Write(n[:])
		h.Write([]byte(k))
		h.Write(vals[i].sum[:])
		if schKeywords[k] != schKwAnnotation {
			hv.Write(n[:])
			hv.Write([]byte(k))
			hv.Write(vals[i].sum[:])
		}
	}
	h.Sum(x.sum[:0])
	hv.Sum(x.vsum[:0])
	return x
}

// nrmBack is a reference to the definition being expanded at stack frame
// frame, written as its distance from the top of the stack (depth).
func nrmBack(frame, depth int) *nrm {
	x := nrmSchema([]string{"$rec"}, []*nrm{nrmLeaf([]byte(strconv.Itoa(depth - frame)))})
	x.esc = frame
	return x
}

// nrmSide normalizes the schemas of one document, memoised.
type nrmSide struct {
	s       *schSide
	budget  int
	failed  bool // the document has no normal form (dynamic references)
	scanned bool
	uneval  bool // the document uses unevaluatedProperties/unevaluatedItems
	// legacy: the document declares draft-04, -06 or -07, where keywords
	// beside a $ref are ignored: a reference with validating siblings has
	// no normal form (the walk reads them the 2020-12 way).
	legacy  bool
	memo    map[int]nrmMemo
	expMemo map[int]nrmMemo
	stack   []int // offsets of the reference targets being expanded
}

type nrmMemo struct {
	x  *nrm
	ok bool
}

func (z *nrmSide) scan() {
	if z.scanned {
		return
	}
	z.scanned = true
	z.memo = make(map[int]nrmMemo)
	z.expMemo = make(map[int]nrmMemo)
	var walk func(v jcs.Value)
	walk = func(v jcs.Value) {
		switch v.Kind() {
		case jcs.Object:
			for i := 0; i < v.Len(); i++ {
				k, c := v.Member(i)
				switch k.Str() {
				case "$dynamicRef", "$dynamicAnchor":
					z.failed = true
				case "unevaluatedProperties", "unevaluatedItems":
					z.uneval = true
				}
				if c.Kind() == jcs.Object || c.Kind() == jcs.Array {
					walk(c)
				}
			}
		case jcs.Array:
			for i := 0; i < v.Len(); i++ {
				if c := v.Index(i); c.Kind() == jcs.Object || c.Kind() == jcs.Array {
					walk(c)
				}
			}
		}
	}
	if z.s.root.Valid() {
		walk(z.s.root)
		if sc, ok := z.s.root.Get("$schema"); ok && sc.Kind() == jcs.String {
			for _, d := range [...]string{"draft-04", "draft-06", "draft-07"} {
				if strings.Contains(sc.Str(), d) {
					z.legacy = true
				}
			}
		}
	}
}

// norm returns the normal form of schema v (nil: none).
func (z *nrmSide) norm(v jcs.Value) *nrm {
	z.scan()
	if z.failed {
		return nil
	}
	return z.schema(v)
}

func (z *nrmSide) spend() bool {
	if z.budget <= 0 {
		return false
	}
	z.budget--
	return true
}

func (z *nrmSide) leaf(v jcs.Value) *nrm {
	return nrmLeaf(v.AppendCanonical(nil))
}

func (z *nrmSide) schema(v jcs.Value) *nrm {
	switch schClass(v) {
	case schAny:
		return nrmTrue
	case schNone:
		return nrmFalse
	case schBad:
		x := z.leaf(v)
		return x
	}
	off := v.Offset()
	if m, ok := z.memo[off]; ok {
		if m.ok {
			return m.x
		}
		return nil
	}
	if !z.spend() {
		return nil
	}
	l0 := len(z.stack)
	x := z.object(v)
	if x == nil || x.esc >= l0 {
		z.memo[off] = nrmMemo{x, x != nil}
	}
	return x
}

// expand is the normal form of a reference target: a back-reference when
// the target is being expanded already.
func (z *nrmSide) expand(t jcs.Value) *nrm {
	if schClass(t) != schObj {
		return z.schema(t)
	}
	off := t.Offset()
	for i, o := range z.stack {
		if o == off {
			return nrmBack(i, len(z.stack))
		}
	}
	if m, ok := z.expMemo[off]; ok {
		if m.ok {
			return m.x
		}
		return nil
	}
	if len(z.stack) >= schDefaultMaxRefDepth {
		return nil
	}
	l0 := len(z.stack)
	z.stack = append(z.stack, off)
	x := z.schema(t)
	z.stack = z.stack[:l0]
	if x == nil || x.esc >= l0 {
		z.expMemo[off] = nrmMemo{x, x != nil}
	}
	return x
}

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

func (z *nrmSide) object(v jcs.Value) *nrm {
	kw := make(map[string]*nrm, v.Len())
	var allOf []*nrm
	var enumV, constV jcs.Value
	hasEnum, hasConst := false, false
	var typeV jcs.Value
	hasType := false
	pure := true
	var refTarget *nrm
	for i := 0; i < v.Len(); i++ {
		k, c := v.Member(i)
		ks := k.Str()
		if !schPureRefSiblings[ks] && ks != "$ref" {
			pure = false
		}
		switch ks {
		case "$defs", "definitions", "$anchor":
			continue
		case "$ref":
			if c.Kind() == jcs.String && z.s.internalRef(c.Str(), v) {
				t, _, problem := z.s.resolveAt(c.Str(), v)
				if problem != "" {
					return nil
				}
				refTarget = z.expand(t)
				if refTarget == nil {
					return nil
				}
				continue
			}
			if c.Kind() == jcs.String {
				id, synthetic := z.s.extIdentity(c.Str(), v)
				x := nrmLeaf(jcs.AppendString(nil, id))
				x.synthetic = synthetic
				kw[ks] = x
				continue
			}
			kw[ks] = z.leaf(c)
		case "$id":
			// References were replaced, external ones by what they name.
			continue
		case "enum":
			enumV, hasEnum = c, true
		case "const":
			constV, hasConst = c, true
		case "type":
			typeV, hasType = c, true
		case "required":
			set, list, ok := schStringSet(c, true)
			if !ok {
				kw[ks] = z.leaf(c)
				continue
			}
			_ = set
			if len(list) == 0 {
				continue
			}
			slices.Sort(list)
			vals := make([]*nrm, len(list))
			for j, s := range list {
				vals[j] = nrmLeaf(jcs.AppendString(nil, s))
			}
			kw[ks] = nrmList(vals)
		case "properties", "patternProperties", "dependentSchemas":
			m := z.schemaMap(c, ks == "dependentSchemas")
			if m == nil {
				return nil
			}
			if m.keys != nil && len(m.keys) == 0 {
				continue
			}
			kw[ks] = m
		case "dependentRequired", "dependencies":
			m := z.depMap(c)
			if m == nil {
				return nil
			}
			if m.keys != nil && len(m.keys) == 0 {
				continue
			}
			kw[ks] = m
		case "additionalProperties", "unevaluatedProperties", "propertyNames", "additionalItems",
			"unevaluatedItems", "contains", "not", "if", "then", "else":
			x := z.schema(c)
			if x == nil {
				return nil
			}
			kw[ks] = x
		case "items":
			if c.Kind() == jcs.Array {
				x := z.schemaList(c)
				if x == nil {
					return nil
				}
				kw[ks] = x
				continue
			}
			x := z.schema(c)
			if x == nil {
				return nil
			}
			kw[ks] = x
		case "prefixItems", "allOf", "anyOf", "oneOf":
			if c.Kind() != jcs.Array {
				kw[ks] = z.leaf(c)
				continue
			}
			x := z.schemaList(c)
			if x == nil {
				return nil
			}
			kw[ks] = x
		default:
			kw[ks] = z.leaf(c)
		}
	}
	if z.legacy && !pure {
		if _, ok := v.Get("$ref"); ok {
			return nil
		}
	}
	if refTarget != nil {
		if pure {
			// The target, with the annotations beside the reference on top.
			return z.overlay(refTarget, kw)
		}
		allOf = append(allOf, refTarget)
	}
	return z.finish(kw, allOf, typeV, hasType, enumV, hasEnum, constV, hasConst)
}

// overlay puts annotations (kw holds only annotations and kept bookkeeping)
// over a schema.
func (z *nrmSide) overlay(x *nrm, kw map[string]*nrm) *nrm {
	if len(kw) == 0 {
		return x
	}
	m := make(map[string]*nrm, len(x.keys)+len(kw))
	for i, k := range x.keys {
		m[k] = x.vals[i]
	}
	for k, v := range kw {
		m[k] = v
	}
	out := nrmFromMap(m)
	out.mask, out.set = x.mask, x.set
	return out
}

func nrmFromMap(m map[string]*nrm) *nrm {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]*nrm, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return nrmSchema(keys, vals)
}

// schemaMap normalizes an object of schemas (properties and the like);
// dropTrue drops members that accept everything (dependentSchemas).
func (z *nrmSide) schemaMap(c jcs.Value, dropTrue bool) *nrm {
	if c.Kind() != jcs.Object {
		return z.leaf(c)
	}
	var keys []string
	var vals []*nrm
	for i := 0; i < c.Len(); i++ {
		k, s := c.Member(i)
		x := z.schema(s)
		if x == nil {
			return nil
		}
		if dropTrue && x.isTrue() {
			continue
		}
		keys = append(keys, k.Str())
		vals = append(vals, x)
	}
	return nrmSorted(keys, vals)
}

func nrmSorted(keys []string, vals []*nrm) *nrm {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	k2 := make([]string, len(keys))
	v2 := make([]*nrm, len(keys))
	for i, j := range idx {
		k2[i], v2[i] = keys[j], vals[j]
	}
	return nrmSchema(k2, v2)
}

// depMap normalizes dependentRequired (arrays of names) and draft-07
// dependencies (arrays or schemas).
func (z *nrmSide) depMap(c jcs.Value) *nrm {
	if c.Kind() != jcs.Object {
		return z.leaf(c)
	}
	var keys []string
	var vals []*nrm
	for i := 0; i < c.Len(); i++ {
		k, s := c.Member(i)
		var x *nrm
		if s.Kind() == jcs.Array {
			_, list, ok := schStringSet(s, true)
			if !ok {
				x = z.leaf(s)
			} else {
				if len(list) == 0 {
					continue
				}
				slices.Sort(list)
				ls := make([]*nrm, len(list))
				for j, n := range list {
					ls[j] = nrmLeaf(jcs.AppendString(nil, n))
				}
				x = nrmList(ls)
			}
		} else {
			x = z.schema(s)
			if x == nil {
				return nil
			}
			if x.isTrue() {
				continue
			}
		}
		keys = append(keys, k.Str())
		vals = append(vals, x)
	}
	return nrmSorted(keys, vals)
}

func (z *nrmSide) schemaList(c jcs.Value) *nrm {
	vals := make([]*nrm, c.Len())
	for i := range vals {
		x := z.schema(c.Index(i))
		if x == nil {
			return nil
		}
		vals[i] = x
	}
	return nrmList(vals)
}

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
	isFalse := false
	mask := uint8(schTAll)
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
	var set []string
	hasSet := false
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
	// Defaults written out.
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
	if n, ok := kw["not"]; ok && n.isTrue() {
		isFalse = true
	}
	// oneOf, anyOf, allOf.
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
			isFalse = true
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
	// allOf is associative: the allOf of a member is the parent's.
	var members []*nrm
	for len(allOf) > 0 {
		m := allOf[0]
		allOf = allOf[1:]
		switch {
		case m.isFalse():
			isFalse = true
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

// append writes the normal form as JSON; false when it holds a reference
// back into a definition being expanded (a recursive schema has no finite
// normal form without definitions) or is larger than limit bytes.
func (x *nrm) append(b []byte, limit int) ([]byte, bool) {
	if len(b) > limit {
		return b, false
	}
	switch {
	case x.raw != nil:
		return append(b, x.raw...), true
	case x.arr:
		b = append(b, '[')
		for i, v := range x.vals {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = v.append(b, limit); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	b = append(b, '{')
	for i, k := range x.keys {
		if k == "$rec" {
			return b, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = jcs.AppendString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = x.vals[i].append(b, limit); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// Normalize returns the normal form of a JSON Schema (see nrm for the
// rules) as JSON text: a schema that accepts exactly the instances schema
// accepts, with the same annotations, spelled canonically, so that two
// schemas with the same normal form differ in notation only. Internal
// references are replaced by their targets and definitions dropped. ok is
// false when the schema has no normal form here: a recursive reference, a
// $dynamicRef or $dynamicAnchor, an internal reference that cannot be
// resolved, or a normal form over 16 MiB or beyond the work budget (200000
// schema nodes).
func Normalize(schema jcs.Value) ([]byte, bool) {
	z := &nrmSide{s: newSchSide(schema), budget: schDefaultMaxNodes}
	x := z.norm(schema)
	if x == nil || x.synthetic {
		return nil, false
	}
	return x.append(nil, 16<<20)
}

// Equivalent reports whether two schemas are proved to accept the same
// instances and carry the same annotations (equal normal forms). false
// means not proved, not different.
func Equivalent(a, b jcs.Value) bool {
	za := &nrmSide{s: newSchSide(a), budget: schDefaultMaxNodes}
	zb := &nrmSide{s: newSchSide(b), budget: schDefaultMaxNodes}
	x, y := za.norm(a), zb.norm(b)
	return x != nil && y != nil && x.sum == y.sum
}

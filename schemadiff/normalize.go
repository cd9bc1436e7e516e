package schemadiff

import (
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

func (x *nrm) isTrue() bool { return x.keys != nil && len(x.keys) == 0 && !x.arr && x.raw == nil }

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
		default:
			if !z.keyword(kw, ks, c) {
				return nil
			}
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

// keyword writes the normal form of keyword ks, of value c, into kw (the
// keywords object reads itself aside); false when it has none.
func (z *nrmSide) keyword(kw map[string]*nrm, ks string, c jcs.Value) bool {
	switch ks {
	case "required":
		set, list, ok := schStringSet(c, true)
		if !ok {
			kw[ks] = z.leaf(c)
			return true
		}
		_ = set
		if len(list) == 0 {
			return true
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
			return false
		}
		if m.keys != nil && len(m.keys) == 0 {
			return true
		}
		kw[ks] = m
	case "dependentRequired", "dependencies":
		m := z.depMap(c)
		if m == nil {
			return false
		}
		if m.keys != nil && len(m.keys) == 0 {
			return true
		}
		kw[ks] = m
	case "additionalProperties", "unevaluatedProperties", "propertyNames", "additionalItems",
		"unevaluatedItems", "contains", "not", "if", "then", "else":
		x := z.schema(c)
		if x == nil {
			return false
		}
		kw[ks] = x
	case "items":
		if c.Kind() == jcs.Array {
			x := z.schemaList(c)
			if x == nil {
				return false
			}
			kw[ks] = x
			return true
		}
		x := z.schema(c)
		if x == nil {
			return false
		}
		kw[ks] = x
	case "prefixItems", "allOf", "anyOf", "oneOf":
		if c.Kind() != jcs.Array {
			kw[ks] = z.leaf(c)
			return true
		}
		x := z.schemaList(c)
		if x == nil {
			return false
		}
		kw[ks] = x
	default:
		kw[ks] = z.leaf(c)
	}
	return true
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

package decide

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// The arguments of a call, read against the pinned inputSchema as a
// server reads them: one walk pairs each object and array of the
// arguments with the schemas that apply to it, and answers both questions
// the gateway asks beyond validation. A member named like a property that
// applies there in another case (a case-insensitive decoder reads it as
// that property, which validation did not see under that name) is
// refused always; a member no schema there declares, under strict
// arguments.
//
// The schemas that apply to a value are those its parent's apply give it
// (properties; patternProperties whose pattern matches; additionalProperties
// and unevaluatedProperties for a member neither names; prefixItems,
// items, draft-07 tuple items and additionalItems, contains and
// unevaluatedItems for an element), and everything those apply in place:
// allOf, anyOf and oneOf branches, not, if, then and else, the
// dependentSchemas (draft-07 dependencies) of members present, and the
// targets of internal "#/..." $refs (a draft-07 $ref's siblings too).
// Every branch counts, whichever one the value matches: what applies is
// over-approximated, never missed.
//
// A place is unknown when what applies there cannot all be read: a $ref
// that is not an internal pointer (an anchor, $id-relative or external;
// a pointer is read in the resource it stands in, see schemaFacts), a
// $dynamicRef or
// $recursiveRef, a pattern RE2 cannot read, more than maxApplying
// schemas at one place, and everything below maxStrictDepth levels of
// the arguments; and so is everything below an unknown place. There, a
// member is refused when its safetext.MemberKey is that of a property the
// schema declares anywhere under another name, unless the member is
// exactly a property that applies there: the conservative reading, since
// what the server decodes there is not known. Strict arguments refuse a
// member there that nothing known declares.

// maxStrictDepth bounds the levels of the arguments read against the
// schema: below it, every place is unknown.
const maxStrictDepth = 64

// maxApplying bounds the schemas that apply at one place ($refs that
// recur are followed once each): beyond it the place is unknown.
const maxApplying = 256

// argProblem is a member the walk refuses: its pointer, and for a case
// variant the property it would be read as.
type argProblem struct {
	ptr, want string
	deep      bool // undeclared: below maxStrictDepth
}

// pathSeg is one step from the arguments' root: a member name, or an
// array index when name is invalid.
type pathSeg struct {
	name jcs.Value
	idx  int
}

// applied is a schema that applies at a place, and what it says of the
// value's members (objects: properties, patternProperties,
// additionalProperties, unevaluatedProperties) or elements (arrays:
// prefixItems, items, additionalItems, contains, unevaluatedItems), in
// that order: its keywords read once for all of them.
type applied struct {
	s  jcs.Value
	kw [5]jcs.Value
}

const (
	kwProperties = iota
	kwPatternProperties
	kwAdditionalProperties
	kwUnevaluatedProperties
)

const (
	kwPrefixItems = iota
	kwItems
	kwAdditionalItems
	kwContains
	kwUnevaluatedItems
)

// kwIndex is where a keyword's value goes in applied.kw for a value of
// kind k (-1: elsewhere).
func kwIndex(name []byte, k jcs.Kind) int {
	if k == jcs.Object {
		switch string(name) {
		case "properties":
			return kwProperties
		case "patternProperties":
			return kwPatternProperties
		case "additionalProperties":
			return kwAdditionalProperties
		case "unevaluatedProperties":
			return kwUnevaluatedProperties
		}
		return -1
	}
	switch string(name) {
	case "prefixItems":
		return kwPrefixItems
	case "items":
		return kwItems
	case "additionalItems":
		return kwAdditionalItems
	case "contains":
		return kwContains
	case "unevaluatedItems":
		return kwUnevaluatedItems
	}
	return -1
}

// argWalk is the walk of one call's arguments. sets holds, for each
// level being read, the schemas that apply there (one segment per level,
// the deepest last); path, the steps to the level.
type argWalk struct {
	cs         *compiledSchema
	strict     bool
	sets       []applied
	path       []pathSeg
	key        []byte
	variant    argProblem
	undeclared argProblem
	// used and deepest are the most of sets and path the walk used.
	used, deepest int
}

// checkArgs walks args: the first case variant, and under strict the
// first undeclared member ("" pointers when none).
func (cs *compiledSchema) checkArgs(args jcs.Value, strict bool) (variant, undeclared argProblem) {
	if !args.Valid() {
		return
	}
	w := walks.Get().(*argWalk)
	w.cs, w.strict = cs, strict
	w.add(cs.schema)
	w.visit(args, 0, false, 0)
	variant, undeclared = w.variant, w.undeclared
	if cap(w.sets) > maxKept || cap(w.path) > maxKept {
		return variant, undeclared // a rare walk's large buffers are not kept
	}
	clear(w.sets[:w.used]) // hold neither the schema nor the arguments
	clear(w.path[:w.deepest])
	*w = argWalk{sets: w.sets[:0], path: w.path[:0], key: w.key[:0]}
	walks.Put(w)
	return variant, undeclared
}

// maxKept bounds the buffers a walk gives back to walks.
const maxKept = 1024

// walks are argWalks to reuse: a walk's buffers, kept from call to call
// (a walker on the stack would not stay there: what it appends leaks).
var walks = sync.Pool{New: func() any {
	return &argWalk{sets: make([]applied, 0, 32), path: make([]pathSeg, 0, 16), key: make([]byte, 0, 64)}
}}

// add appends s to the current level's schemas if it is one that can
// declare anything (an object, or true).
func (w *argWalk) add(s jcs.Value) {
	if s.Valid() && (s.Kind() == jcs.Object || s.Kind() == jcs.True) {
		w.push(s)
	}
}

// push appends s to the current level's schemas.
func (w *argWalk) push(s jcs.Value) {
	w.sets = append(w.sets, applied{s: s})
	w.used = max(w.used, len(w.sets))
}

// anything reports whether s is true or {}: a schema that takes any
// value, whatever it holds at any depth.
func anything(s jcs.Value) bool {
	return s.Kind() == jcs.True || s.Kind() == jcs.Object && s.Len() == 0
}

// visit reads v, an object or array whose schemas are w.sets[lo:] (not
// yet expanded). It reports whether the walk is over (a case variant
// found).
func (w *argWalk) visit(v jcs.Value, lo int, unknown bool, depth int) bool {
	k := v.Kind()
	if k != jcs.Object && k != jcs.Array {
		return false
	}
	if depth >= maxStrictDepth {
		w.sets, unknown = w.sets[:lo], true
	} else if w.expand(v, lo) {
		unknown = true
	}
	if k == jcs.Object {
		return w.members(v, lo, len(w.sets), unknown, depth)
	}
	return w.elements(v, lo, len(w.sets), unknown, depth)
}

// expand adds to w.sets[lo:] every schema its schemas apply in place to
// the value v, reads what each says of v's members or elements, and
// reports whether any of them cannot be read.
func (w *argWalk) expand(v jcs.Value, lo int) (unknown bool) {
	for j := lo; j < len(w.sets); j++ {
		if len(w.sets)-lo > maxApplying {
			w.sets = w.sets[:lo+maxApplying]
			return true
		}
		s := w.sets[j].s
		if s.Kind() != jcs.Object {
			continue
		}
		for m := range s.Len() {
			kw, x := s.Member(m)
			if i := kwIndex(kw.StrBytes(), v.Kind()); i >= 0 {
				w.sets[j].kw[i] = x
				continue
			}
			switch string(kw.StrBytes()) {
			case "$ref":
				if x.Kind() != jcs.String {
					continue
				}
				switch t, ok := w.cs.refs[x]; {
				case !ok || t.Kind() != jcs.Object && t.Kind() != jcs.True && t.Kind() != jcs.False:
					unknown = true // not read, or not a schema
				case !w.holds(lo, t):
					w.add(t)
				}
			case "$dynamicRef", "$recursiveRef":
				unknown = true
			case "allOf", "anyOf", "oneOf":
				if x.Kind() == jcs.Array {
					for b := range x.Len() {
						w.add(x.Index(b))
					}
				}
			case "not", "if", "then", "else":
				w.add(x)
			case "dependentSchemas", "dependencies":
				if x.Kind() != jcs.Object || v.Kind() != jcs.Object {
					continue
				}
				for d := range x.Len() {
					dn, ds := x.Member(d)
					if _, present := v.Get(string(dn.StrBytes())); present {
						w.add(ds)
					}
				}
			}
		}
	}
	return unknown
}

// holds reports whether schema t is one of w.sets[lo:].
func (w *argWalk) holds(lo int, t jcs.Value) bool {
	for _, a := range w.sets[lo:] {
		if a.s == t {
			return true
		}
	}
	return false
}

// members reads the members of object v, whose schemas are
// w.sets[lo:hi], and walks on into each member's value.
func (w *argWalk) members(v jcs.Value, lo, hi int, unknown bool, depth int) bool {
	for i := range v.Len() {
		name, x := v.Member(i)
		nb := name.StrBytes()
		container := x.Kind() == jcs.Object || x.Kind() == jcs.Array
		exact, declared, below := false, false, unknown
		for j := lo; j < hi; j++ {
			if anything(w.sets[j].s) {
				declared = true
				if container {
					w.push(w.sets[j].s)
				}
				continue
			}
			named, matched, unread := w.memberSchemas(w.sets[j].kw, nb, container)
			exact = exact || named
			declared = declared || named || matched || unread
			below = below || unread
		}
		if !exact {
			if want := w.variantOf(nb, lo, hi, unknown); want != "" {
				w.variant = argProblem{ptr: w.pointer(name), want: want}
				return true
			}
		}
		if w.strict && !declared && w.undeclared.ptr == "" {
			w.undeclared = argProblem{ptr: w.pointer(name), deep: depth >= maxStrictDepth}
		}
		if container {
			w.path = append(w.path, pathSeg{name: name})
			w.deepest = max(w.deepest, len(w.path))
			over := w.visit(x, hi, below, depth+1)
			w.path = w.path[:len(w.path)-1]
			w.sets = w.sets[:hi]
			if over {
				return true
			}
		}
	}
	return false
}

// memberSchemas reads what a schema (its keywords kw, see applied) says
// of a member named nb: whether its properties name it, whether a
// pattern matches it (or an additionalProperties or unevaluatedProperties
// schema takes it), and whether a pattern cannot be read. With container,
// it adds the schemas it applies to the member's value.
func (w *argWalk) memberSchemas(kw [5]jcs.Value, nb []byte, container bool) (named, matched, unread bool) {
	props, pp := kw[kwProperties], kw[kwPatternProperties]
	if props.Valid() && props.Kind() == jcs.Object {
		if sub, ok := props.Get(string(nb)); ok {
			named = true
			if container {
				w.add(sub)
			}
		}
	}
	if pp.Valid() && pp.Kind() == jcs.Object {
		for p := range pp.Len() {
			pk, ps := pp.Member(p)
			re := w.cs.patterns[string(pk.StrBytes())]
			switch {
			case re == nil:
				unread = true
			case re.Match(nb):
				matched = true
				if container {
					w.add(ps)
				}
			}
		}
	}
	if named || matched {
		return named, matched, unread
	}
	for _, a := range [...]jcs.Value{kw[kwAdditionalProperties], kw[kwUnevaluatedProperties]} {
		if a.Valid() && (a.Kind() == jcs.True || a.Kind() == jcs.Object) {
			matched = true
			if container {
				w.add(a)
			}
		}
	}
	return named, matched, unread
}

// variantOf returns the property a member named nb (no property that
// applies here has that exact name) would be read as by a decoder that
// ignores case: another name with its safetext.MemberKey that a schema
// here declares, or, at an unknown place, that the schema declares
// anywhere; "" when none.
func (w *argWalk) variantOf(nb []byte, lo, hi int, unknown bool) string {
	w.key = safetext.AppendMemberKey(w.key[:0], nb)
	for _, d := range w.cs.variants[string(w.key)] {
		if d != string(nb) && (unknown || w.declares(lo, hi, d)) {
			return d
		}
	}
	return ""
}

// declares reports whether a schema of w.sets[lo:hi] has a property
// named name.
func (w *argWalk) declares(lo, hi int, name string) bool {
	for _, a := range w.sets[lo:hi] {
		if props := a.kw[kwProperties]; props.Valid() && props.Kind() == jcs.Object {
			if _, ok := props.Get(name); ok {
				return true
			}
		}
	}
	return false
}

// elements walks on into each element of array v, whose schemas are
// w.sets[lo:hi].
func (w *argWalk) elements(v jcs.Value, lo, hi int, unknown bool, depth int) bool {
	for i := range v.Len() {
		x := v.Index(i)
		if k := x.Kind(); k != jcs.Object && k != jcs.Array {
			continue
		}
		for j := lo; j < hi; j++ {
			w.itemSchemas(j, i)
		}
		w.path = append(w.path, pathSeg{idx: i})
		w.deepest = max(w.deepest, len(w.path))
		over := w.visit(x, hi, unknown, depth+1)
		w.path = w.path[:len(w.path)-1]
		w.sets = w.sets[:hi]
		if over {
			return true
		}
	}
	return false
}

// itemSchemas adds the schemas w.sets[j] applies to element i of an
// array. items
// is taken at every index (a draft-07 schema ignores prefixItems), an
// items array as a draft-07 tuple (additionalItems past its end).
func (w *argWalk) itemSchemas(j, i int) {
	a := w.sets[j]
	if anything(a.s) {
		w.push(a.s)
		return
	}
	if p := a.kw[kwPrefixItems]; p.Valid() && p.Kind() == jcs.Array && i < p.Len() {
		w.add(p.Index(i))
	}
	switch it := a.kw[kwItems]; {
	case !it.Valid():
	case it.Kind() != jcs.Array:
		w.add(it)
	case i < it.Len():
		w.add(it.Index(i))
	default:
		w.add(a.kw[kwAdditionalItems])
	}
	w.add(a.kw[kwContains])
	w.add(a.kw[kwUnevaluatedItems])
}

// pointer is the JSON pointer of the member named name of the value at
// w.path.
func (w *argWalk) pointer(name jcs.Value) string {
	var b strings.Builder
	for _, s := range w.path {
		b.WriteByte('/')
		if s.name.Valid() {
			b.WriteString(jcs.PointerToken(s.name.Str()))
		} else {
			b.WriteString(strconv.Itoa(s.idx))
		}
	}
	b.WriteByte('/')
	b.WriteString(jcs.PointerToken(name.Str()))
	return b.String()
}

// schemaFacts is what the walk needs of a schema, read once when it is
// compiled: the names it declares (under "properties" anywhere; a name
// that is not a property read as one can only refuse more) by
// safetext.MemberKey, sorted; each patternProperties key compiled (nil:
// RE2 cannot read it); and the target of each internal $ref, by the $ref's
// own string value. A "#..." pointer is relative to the resource it
// stands in: the root, or the nearest schema below it with an $id (draft-04:
// id) that is not a bare fragment. A $ref beside such an $id is not
// resolved (draft-07 ignores the $id there, 2019-09 does not), nor is any
// other.
func schemaFacts(root jcs.Value) (variants map[string][]string, patterns map[string]*regexp.Regexp, refs map[jcs.Value]jcs.Value) {
	f := facts{variants: map[string][]string{}, patterns: map[string]*regexp.Regexp{}, refs: map[jcs.Value]jcs.Value{}, idKey: "$id"}
	if sch, ok := root.Get("$schema"); ok && strings.Contains(sch.Str(), "draft-04") {
		f.idKey = "id" // draft-04 names it so
	}
	f.scan(root, root, true)
	for _, names := range f.variants {
		slices.Sort(names)
	}
	return f.variants, f.patterns, f.refs
}

type facts struct {
	variants map[string][]string
	patterns map[string]*regexp.Regexp
	refs     map[jcs.Value]jcs.Value
	idKey    string
}

// scan reads s, whose "#..." pointers are relative to base.
func (f *facts) scan(s, base jcs.Value, top bool) {
	switch s.Kind() {
	case jcs.Array:
		for i := range s.Len() {
			f.scan(s.Index(i), base, false)
		}
		return
	case jcs.Object:
	default:
		return
	}
	scoped := false
	if id, ok := s.Get(f.idKey); ok && id.Kind() == jcs.String && !top && !strings.HasPrefix(id.Str(), "#") {
		base, scoped = s, true
	}
	for i := range s.Len() {
		k, x := s.Member(i)
		switch {
		case k.StrEqual("properties") && x.Kind() == jcs.Object:
			for j := range x.Len() {
				n, _ := x.Member(j)
				key := safetext.MemberKey(n.Str())
				if !slices.Contains(f.variants[key], n.Str()) {
					f.variants[key] = append(f.variants[key], n.Str())
				}
			}
		case k.StrEqual("patternProperties") && x.Kind() == jcs.Object:
			for j := range x.Len() {
				p, _ := x.Member(j)
				re, err := regexp.Compile(p.Str()) // ECMA-262 as RE2 reads it, as the validator does
				if err != nil {
					re = nil
				}
				f.patterns[p.Str()] = re
			}
		case k.StrEqual("$ref") && x.Kind() == jcs.String && !scoped:
			if t, ok := base.ResolveFragment(x.Str()); ok {
				f.refs[x] = t
			}
		}
		f.scan(x, base, false)
	}
}

package schemadiff

import (
	"bytes"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpdrift/mcpdrift/jcs"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Options bound the work of DiffSchema. Zero values mean defaults.
//
// Output says the schemas are outputSchemas, graded for the agent that
// reads the result: widening means the tool may now return something it
// could not before (more values, new fields, fewer guarantees: what the
// agent may now receive unannounced); narrowing means it returns less,
// which is harmless: always low. A new field is widening either way.
// Severities are otherwise one step lower for outputs, except for external
// references; no output change is raised by the capability signal.
// Per kind, for inputs (the default) and outputs:
//
//	kind                            input direction           input severity           output direction   output severity
//	param_added_optional            widening                  medium; high (1)         widening           low; medium (1)
//	param_added_required            narrowing                 medium                   widening           low
//	param_removed                   narrowing if closed (2),  closed: medium; open:    as input           low
//	                                else widening             low, medium (6)
//	required_dropped                widening                  medium                   widening           low
//	required_added                  narrowing                 medium                   narrowing          low
//	type_widened, type_narrowed     widening, narrowing       high, low                as input           medium, low
//	type_changed                    neutral                   high                     neutral            medium
//	enum_widened, enum_narrowed     widening, narrowing       medium, low              as input           low
//	const_changed                   removed: widening,        medium; added: low       as input           low
//	                                added: narrowing, changed: neutral
//	additional_properties_loosened  widening                  high                     widening           medium
//	additional_properties_tightened narrowing                 low                      narrowing          low
//	constraint_loosened             widening; neutral (3)     medium; high (4)         as input           low; medium (4)
//	constraint_tightened            narrowing                 low                      narrowing          low
//	composition_widened, _narrowed  widening, narrowing       medium, low              as input           low
//	external_ref_introduced         widening                  high                     widening           high
//	external_ref_present            neutral                   medium                   neutral            medium
//	keyword_unmodeled               neutral                   medium                   neutral            low
//	schema_unresolved               neutral                   medium                   neutral            low
//	description_changed (5)         neutral                   medium                   neutral            low
//	title_changed (5)               neutral                   low                      neutral            low
//	schema_default_changed (5)      neutral                   medium                   neutral            low
//	schema_annotation_changed (5)   neutral                   low                      neutral            low
//	schema_dialect_changed (5)      neutral                   low                      neutral            low
//	schema_notation_changed (7)     neutral                   low                      neutral            low
//
// (1) high when a word of the parameter's name suggests a new capability:
// url, uri, callback, webhook, endpoint, host, hostname, env, environment,
// command, cmd, script, shell, exec, execute, executable, path, filepath,
// dir, directory, cwd, workdir, file, filename, header(s), token, proxy,
// plurals included ("working_directory", "callbackUrl", "extraHeaders").
// (2) closed: additionalProperties or unevaluatedProperties is false on the
// new side, so a caller still sending the parameter now fails; otherwise
// the parameter's value is now unconstrained. (3) A constraint replaced by
// one that cannot be ordered against it (a different pattern or format, a
// multipleOf that neither divides nor is divided by the old one) is
// reported as constraint_loosened with direction neutral: it may accept
// values rejected before. (4) high when a pattern or a format is removed.
// (5) The keywords validation never reads, anywhere in the schema (see
// annotations.go): a description or title is planner-facing text; default
// may be applied by an executor when the argument is omitted; $comment,
// examples, deprecated, readOnly, writeOnly are neutral; $schema is the
// dialect (dialect.go). (6) A
// declaration dropped from an open object: the key is still accepted, no
// longer described; medium when the dropped schema constrained the value
// in a way that mattered (it had an enum, a const, a pattern, or forbade
// the key), else low. (7) The schema at the pointer is spelled differently
// but has the same normal form (see Normalize): it accepts exactly the same
// instances and carries the same annotations. One record at the highest
// place that is the same schema; nothing below it is compared.
//
// Inside "not" every direction is mirrored and the kind describes the
// change to the subschema (a type widened under "not" is type_widened with
// direction narrowing); inside "if" every direction is neutral. Severity
// follows the effective direction for the kinds graded by direction (a
// mirrored type_narrowed is high).
//
// MaxNodes bounds the schema nodes visited across both sides (default
// 200000); when it is exhausted one schema_unresolved change says so and
// nothing further is compared. MaxRefDepth bounds the nested $ref
// expansions on one path (default 64).
type Options struct {
	Output      bool
	MaxNodes    int
	MaxRefDepth int
	// Refs is the trust record external references are judged against
	// (see RefPins); nil: none, the records are external_ref_introduced
	// and external_ref_present as always.
	Refs *RefPins
}

const (
	schDefaultMaxNodes    = 200000
	schDefaultMaxRefDepth = 64
	// schMaxFrames bounds the recursion of the walk. Without refs the depth
	// is bounded by jcs.MaxDepth; refs can chain documents' worth of
	// nesting, MaxRefDepth times.
	schMaxFrames = 20000
)

// DiffSchema compares two JSON Schemas (draft-07 and 2020-12 keywords).
// Either may be the zero jcs.Value: an absent schema, which accepts
// everything (as true does). name is put in every Change; base is the JSON
// pointer of the schema within the tool object ("/inputSchema" or
// "/outputSchema"). A change's pointer is base plus the path inside the new
// schema where the changed thing exists there, else inside the old schema;
// for a definition reached through an internal $ref that is the
// definition's own place (…/$defs/Address/properties/zip), so a change to a
// shared definition is reported once.
//
// The walk follows properties, patternProperties, additionalProperties,
// unevaluatedProperties, propertyNames, dependentSchemas,
// dependentRequired, dependencies, items (schema or draft-07 array form),
// prefixItems, additionalItems, unevaluatedItems, contains, allOf, anyOf,
// oneOf, not, if/then/else and internal references ("#", "#/json/pointer"
// with ~0, ~1 and %-escapes, "#anchor" for $anchor, $dynamicAnchor and
// draft-07 "$id": "#name"; $dynamicRef is resolved like $ref). A $ref with
// sibling keywords is an implicit allOf member (the 2020-12 reading, also
// applied to draft-07, which ignores the siblings). Definitions are compared
// where a reference reaches them; unreachable definitions are not.
// Internal references resolve in the resource they are in: "$id" starts a
// resolution scope (a base URI for the references inside, its own
// anchors), and a reference to the URI of an embedded resource is internal.
//
// Before anything else, two positions with the same normal form (see
// Normalize) are one schema spelled differently: one
// schema_notation_changed record, nothing below compared.
//
// Compositions are compared as sets of branches. A position that is only a
// choice (anyOf or oneOf, with nothing beside it that validates but a type
// admitting every branch) is compared with the other side as a set of
// alternatives; a position that is not a choice is one alternative, so a
// schema moved into one branch of a new anyOf is compared with that branch
// (its properties are not lost), and the other branches are added. allOf,
// and anyOf/oneOf beside other validating keywords, are compared branch
// set against branch set. Branches are matched by equal normal forms
// (validation only), then by the best match among the branches whose
// types meet (allOf members: any), bounded (see matchAlts); matched pairs
// are diffed, an unmatched new branch is added (widening:
// composition_widened, or type_widened when it takes a type no old
// alternative took) and an unmatched old one removed (narrowing, the
// mirror kinds). A schema of several types (a type keyword, no enum)
// against branches of disjoint types is compared branch by branch with the
// part of itself of that branch's types (keywords of other types say
// nothing about it), and a type no branch takes is lost; a schema limited
// to values (enum, const) against branches of disjoint values likewise,
// value by value. Alternatives limited to values compare as sets of
// values: branches that share values are diffed restricted to them, a
// value only the new side takes is enum_widened, one only the old side
// took enum_narrowed (four const branches merged into one enum branch
// change nothing). oneOf: where its
// branches are provably disjoint (by type, enum/const values, or a required
// property whose values cannot meet: a discriminator) it is anyOf; where
// they may overlap, an added or removed oneOf branch is neutral (it can
// accept and reject: instances matching two branches fail), and anyOf
// becoming oneOf is composition_narrowed ("now exclusive"), the reverse
// composition_widened.
//
// enum and const are one set of values (a const is a one-element enum):
// values added are enum_widened, removed enum_narrowed; two constants
// without enum are const_changed, a const added or removed alone too.
//
// Types are compared where either side has a type keyword, as the set of
// JSON types the position can accept: the type keyword narrowed by enum and
// const values, references and allOf/anyOf/oneOf branches (so a type added
// beside an enum of strings is no change); a missing type is every type,
// false is none, integer ⊂ number. Annotation keywords beside a pure
// reference override the referenced definition's; the annotations of a
// choice lie over those of the branch a schema is compared with.
//
// External references are never fetched. Every "$ref"/"$dynamicRef" that
// leaves the document in the new schema (anywhere, see ExternalRefs) and
// not at the same pointer naming the same target in the old one (the
// reference resolved against the $ids around it) is
// external_ref_introduced. One present in both is external_ref_present,
// reported only when something else changed: the caller reports present
// external references of an unchanged schema on its own. A removed
// external reference is not a change of its own.
//
// The result is sorted by pointer, then kind (then direction, detail,
// note), without duplicates. Two schemas with the same canonical form give
// nil, whatever they contain (cycles, external references, unresolvable
// references). Work is bounded by opt (see Options); a reference that
// cannot be resolved (missing target, cycle of references with nothing in
// between, too deep, ambiguous anchor, not a schema) gives a
// schema_unresolved change with a Note, and the diff goes on elsewhere.
//
// Limits: $dynamicRef is resolved like $ref (dynamic scope is not
// modeled); changes inside a matched oneOf branch are graded as for anyOf
// (a widened branch may start to overlap another and so also reject
// instances: not seen), and oneOf branches are proved disjoint only by the
// three rules above (else they are assumed to overlap); branch matching is
// greedy, and past its caps conservative (see matchAlts); regular
// expressions and formats are not compared; additionalItems is compared
// only where it applies (items in array form); then/else are compared even
// without if; changes inside unknown keywords and unreachable definitions
// are not walked (an unknown keyword's change is keyword_unmodeled as a
// whole); the walk stops at 20000 nested frames (only reachable through
// chains of references into deeply nested definitions) with a
// schema_unresolved change.
func DiffSchema(name, base string, old, new jcs.Value, opt Options) []Change {
	if opt.MaxNodes <= 0 {
		opt.MaxNodes = schDefaultMaxNodes
	}
	if opt.MaxRefDepth <= 0 {
		opt.MaxRefDepth = schDefaultMaxRefDepth
	}
	if !old.Valid() && !new.Valid() {
		return nil
	}
	d := &schDiffer{
		name: name, base: base, opt: opt,
		old: newSchSide(old), new: newSchSide(new),
		seen: make(map[schPairKey]struct{}),
	}
	d.old.nz.budget, d.new.nz.budget = opt.MaxNodes, opt.MaxNodes
	if old.Valid() && new.Valid() && (bytes.Equal(old.Raw(), new.Raw()) || d.same(old, new)) {
		return nil
	}
	d.diff(schNode{v: old}, schNode{v: new}, 1, 0)
	d.externalRefs()
	return d.finish()
}

// schNode is a schema position: its value (the zero Value when absent)
// and its pointer inside its schema (where it would be, when absent).
type schNode struct {
	v    jcs.Value
	path *schPath
	// outer: positions whose annotations lie over this one's, outermost
	// first (as the references a position stands for do). A branch of an
	// anyOf compared with a schema that is not a choice has the anyOf (and
	// the references to it) as outer layers: an annotation the anyOf
	// carries is the branch's too.
	outer []schNode
	// tmask restricts the position to instances of these types (0: none):
	// a schema of several types compared with the branch of a choice that
	// takes some of them (see lift) is compared as that part of itself.
	tmask uint8
	// vset restricts the position to these values (keys of schSide.key;
	// nil: none): an enum compared with the branch of a choice that takes
	// some of its values (see lift) is compared as that part of itself.
	vset map[string]bool
}

// schPath is a JSON pointer kept as a chain of escaped segments, so that
// descending costs O(1); str builds the text only for a reported change.
type schPath struct {
	parent *schPath
	seg    string
}

func (p *schPath) str() string {
	n := 0
	for q := p; q != nil; q = q.parent {
		n += 1 + len(q.seg)
	}
	b := make([]byte, n)
	for q := p; q != nil; q = q.parent {
		n -= len(q.seg)
		copy(b[n:], q.seg)
		n--
		b[n] = '/'
	}
	return string(b)
}

func (x schNode) get(kw string) (jcs.Value, bool) {
	if !x.v.Valid() || x.v.Kind() != jcs.Object {
		return jcs.Value{}, false
	}
	return x.v.Get(kw)
}

func (x schNode) has(kw string) bool {
	_, ok := x.get(kw)
	return ok
}

// child is the subschema position under keyword kw (kw needs no escaping).
func (x schNode) child(kw string) schNode {
	v, _ := x.get(kw)
	return schNode{v: v, path: &schPath{x.path, kw}}
}

// member is the position kw/key (an object-valued keyword's member).
func (x schNode) member(kw, key string) schNode {
	var v jcs.Value
	if o, ok := x.get(kw); ok && o.Kind() == jcs.Object {
		v, _ = o.Get(key)
	}
	return schNode{v: v, path: &schPath{&schPath{x.path, kw}, jcs.PointerToken(key)}}
}

// elem is the position kw/i (an array-valued keyword's element).
func (x schNode) elem(kw string, i int) schNode {
	var v jcs.Value
	if a, ok := x.get(kw); ok && a.Kind() == jcs.Array && i < a.Len() {
		v = a.Index(i)
	}
	return schNode{v: v, path: &schPath{&schPath{x.path, kw}, strconv.Itoa(i)}}
}

func schOff(v jcs.Value) int {
	if !v.Valid() {
		return -1
	}
	return v.Offset()
}

type schPairKey struct {
	o, n int
	pol  int8
}

type schDiffer struct {
	name, base string
	opt        Options
	old, new   *schSide
	seen       map[schPairKey]struct{}
	visited    int
	exhausted  bool
	frames     int
	out        []Change
	// trials memoises the trial diffs of two branches (see matchAlts):
	// their cost, and their records, which stand for the pair's diff when
	// the pair is chosen.
	trials map[schTrialKey]schTrial
	// dialectWhy: where the schemas use a keyword the dialects read
	// differently ("" none), once a $schema change asked (dialect.go).
	dialectWhy *string
}

type schTrial struct {
	cost int
	out  []Change
}

type schTrialKey struct {
	schPairKey
	outerO, outerN int // offset of the innermost outer layer, -1 none
}

func schOuterKey(x schNode) int {
	if len(x.outer) == 0 {
		return -1
	}
	return schOff(x.outer[len(x.outer)-1].v)
}

// Polarity of the walk: 1 as is, -1 inside "not" (mirrored), 0 inside "if"
// (neutral).
func schApply(dir Direction, pol int8) Direction {
	switch pol {
	case -1:
		return dir.Mirror()
	case 0:
		return Neutral
	}
	return dir
}

// emit records one change. dir is the input-schema direction before
// polarity; hi raises the severity where the table says so.
func (d *schDiffer) emit(kind, ptr string, dir Direction, pol int8, hi bool, detail, note string) {
	eff := schApply(dir, pol)
	sev := schSeverity(kind, eff, hi)
	if d.opt.Output {
		// What the tool returns is graded for the agent that reads it:
		// widening is what it may now receive unannounced, narrowing
		// (the tool returns less) is harmless, and low.
		if kind == ParamAddedOptional || kind == ParamAddedRequired {
			eff = schApply(Widening, pol)
		}
		if eff == Narrowing {
			sev = "low"
		} else if kind != ExternalRefIntroduced && kind != ExternalRefPresent {
			switch sev {
			case "high":
				sev = "medium"
			case "medium":
				sev = "low"
			}
		}
	}
	d.out = append(d.out, Change{Name: d.name, Kind: kind, Pointer: d.base + ptr,
		Direction: eff, Severity: sev, Detail: detail, Note: note})
}

func schSeverity(kind string, eff Direction, hi bool) string {
	switch kind {
	case ExternalRefIntroduced:
		return "high"
	case ExternalRefPresent, SchemaUnresolved, KeywordUnmodeled,
		ParamAddedRequired, RequiredAdded, RequiredDropped, DescriptionChanged, SchemaDefaultChanged:
		return "medium"
	case SchemaNotationChanged, SchemaDialectChanged, SchemaAnnotationChanged, TitleChanged:
		return "low"
	case ParamRemoved:
		// hi: the object is closed (callers sending it are rejected), or
		// the dropped declaration constrained the value in a way that
		// mattered.
		if hi {
			return "medium"
		}
		return "low"
	case ParamAddedOptional:
		if hi {
			return "high"
		}
		return "medium"
	case TypeChanged:
		return "high"
	}
	switch eff {
	case Widening:
		switch kind {
		case TypeWidened, TypeNarrowed, AdditionalPropertiesLoosened, AdditionalPropertiesTightened:
			return "high"
		}
		if hi {
			return "high"
		}
		return "medium"
	case Neutral:
		return "medium"
	}
	return "low"
}

func (d *schDiffer) unresolved(ptr, detail, note string) {
	d.out = append(d.out, Change{Name: d.name, Kind: SchemaUnresolved, Pointer: d.base + ptr,
		Direction: Neutral, Severity: schLower("medium", d.opt.Output), Detail: detail, Note: note})
}

func schLower(sev string, output bool) string {
	if !output {
		return sev
	}
	if sev == "high" {
		return "medium"
	}
	return "low"
}

func schNodePtr(o, n schNode) string {
	if n.v.Valid() {
		return n.path.str()
	}
	return o.path.str()
}

// kwPtr is where keyword kw is: on the new side if it has it, else on the
// old side.
func schKwPtr(o, n schNode, kw string) string {
	if n.has(kw) {
		return n.path.str() + "/" + kw
	}
	if o.has(kw) {
		return o.path.str() + "/" + kw
	}
	return schNodePtr(o, n) + "/" + kw
}

// same reports whether two values (either may be absent) have the same
// canonical form.
func (d *schDiffer) same(a, b jcs.Value) bool {
	if !a.Valid() || !b.Valid() {
		return a.Valid() == b.Valid()
	}
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case jcs.Array, jcs.Object:
		return d.old.digest(a).sum == d.new.digest(b).sum
	case jcs.Null, jcs.True, jcs.False:
		return true
	}
	d.old.scratch = a.AppendCanonical(d.old.scratch[:0])
	d.new.scratch = b.AppendCanonical(d.new.scratch[:0])
	return bytes.Equal(d.old.scratch, d.new.scratch)
}

// enter marks a pair visited and charges the work budget; false means the
// pair was seen (a shared definition, a cycle) or the budget is spent.
func (d *schDiffer) enter(o, n schNode, pol int8) bool {
	if d.exhausted {
		return false
	}
	k := schPairKey{schOff(o.v), schOff(n.v), pol}
	if _, ok := d.seen[k]; ok {
		return false
	}
	d.seen[k] = struct{}{}
	if o.v.Valid() {
		d.visited++
	}
	if n.v.Valid() {
		d.visited++
	}
	if d.visited > d.opt.MaxNodes {
		d.exhausted = true
		d.unresolved(schNodePtr(o, n), "",
			"work budget exhausted after "+strconv.Itoa(d.opt.MaxNodes)+" schema nodes; the rest of the schemas was not compared")
		return false
	}
	return true
}

// diff compares two schema positions.
func (d *schDiffer) diff(o, n schNode, pol int8, rd int) {
	if d.exhausted || (!o.v.Valid() && !n.v.Valid()) {
		return
	}
	layered := len(o.outer) > 0 || len(n.outer) > 0
	same := !layered && d.same(o.v, n.v)
	if same && !d.old.hasRef(o.v) {
		return
	}
	if !same && d.equiv(o, n) {
		// A layered pair whose validating keywords have the same bytes is a
		// schema moved into or out of a choice, its annotations with it:
		// nothing to say.
		if !layered || !d.sameValidation(o.v, n.v) {
			d.emit(SchemaNotationChanged, schNodePtr(o, n), Neutral, pol, false,
				"spelled differently; accepts exactly the same instances, with the same annotations", "")
		}
		return
	}
	if !d.enter(o, n, pol) {
		return
	}
	d.frames++
	defer func() { d.frames-- }()
	if d.frames > schMaxFrames {
		d.unresolved(schNodePtr(o, n), "", "the schemas nest too deeply (through $ref) to be compared here")
		return
	}
	// Pure references ({"$ref": "#..."} with only annotations beside it)
	// stand for their targets, unless the other side has a reference with
	// further keywords: then both are compared as implicit allOf members.
	oc, nc := []schNode{o}, []schNode{n}
	_, _, oPure := d.old.pureRef(o.v)
	_, _, nPure := d.new.pureRef(n.v)
	if !(oPure && d.new.mixedRef(n.v)) && !(nPure && d.old.mixedRef(o.v)) {
		var ok bool
		if oc, ok = d.follow(d.old, o, rd); !ok {
			return
		}
		if nc, ok = d.follow(d.new, n, rd); !ok {
			return
		}
	}
	mo, mn := schLayers(o, oc), schLayers(n, nc)
	o2, n2 := oc[len(oc)-1], nc[len(nc)-1]
	if len(oc) > 1 || len(nc) > 1 {
		if !layered && d.same(o2.v, n2.v) && !d.old.hasRef(o2.v) {
			d.meta(mo, mn, pol)
			return
		}
		if !d.enter(o2, n2, pol) {
			return
		}
		rd += max(len(oc), len(nc)) - 1
	}
	if d.lift(o2, n2, mo, mn, pol, rd) {
		return
	}
	d.meta(mo, mn, pol)
	d.structure(o2, n2, pol, rd)
}

// sameValidation reports whether two schemas have the same canonical bytes
// apart from their own annotation keywords.
func (d *schDiffer) sameValidation(a, b jcs.Value) bool {
	if a.Kind() != jcs.Object || b.Kind() != jcs.Object {
		return d.same(a, b)
	}
	i, j := 0, 0
	for {
		for i < a.Len() {
			if k, _ := a.Member(i); schKeywords[k.Str()] != schKwAnnotation {
				break
			}
			i++
		}
		for j < b.Len() {
			if k, _ := b.Member(j); schKeywords[k.Str()] != schKwAnnotation {
				break
			}
			j++
		}
		if i == a.Len() || j == b.Len() {
			return i == a.Len() && j == b.Len()
		}
		ka, va := a.Member(i)
		kb, vb := b.Member(j)
		if ka.Str() != kb.Str() || !d.same(va, vb) {
			return false
		}
		i, j = i+1, j+1
	}
}

// schLayers is the annotation chain of a position: its outer layers, then
// the position and the references it stands for.
func schLayers(x schNode, chain []schNode) []schNode {
	if len(x.outer) == 0 {
		return chain
	}
	return append(slices.Clip(x.outer), chain...)
}

// equiv reports whether two positions have the same normal form (see
// Normalize), their outer layers' annotations included: a notation change.
func (d *schDiffer) equiv(o, n schNode) bool {
	a, b := d.layered(d.old, o), d.layered(d.new, n)
	return a != nil && b != nil && a.sum == b.sum
}

// layered is the normal form of a position with the annotations of its
// outer layers over its own (the outermost wins).
func (d *schDiffer) layered(s *schSide, x schNode) *nrm {
	z := s.nz.norm(x.v)
	if z == nil || len(x.outer) == 0 {
		return z
	}
	m := make(map[string]*nrm, len(z.keys))
	for i, k := range z.keys {
		m[k] = z.vals[i]
	}
	for i := len(x.outer) - 1; i >= 0; i-- {
		y := s.nz.norm(x.outer[i].v)
		if y == nil {
			return nil
		}
		for j, k := range y.keys {
			if schKeywords[k] != schKwStructural {
				m[k] = y.vals[j]
			}
		}
	}
	return nrmFromMap(m)
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

// Keyword classes.
const (
	schKwStructural = 1 + iota
	schKwAnnotation
	schKwIgnored
)

var schKeywords = map[string]uint8{
	"type": schKwStructural, "enum": schKwStructural, "const": schKwStructural,
	"properties": schKwStructural, "required": schKwStructural, "additionalProperties": schKwStructural,
	"patternProperties": schKwStructural, "propertyNames": schKwStructural, "unevaluatedProperties": schKwStructural,
	"minProperties": schKwStructural, "maxProperties": schKwStructural,
	"dependentRequired": schKwStructural, "dependentSchemas": schKwStructural, "dependencies": schKwStructural,
	"items": schKwStructural, "prefixItems": schKwStructural, "additionalItems": schKwStructural,
	"unevaluatedItems": schKwStructural, "contains": schKwStructural, "minContains": schKwStructural,
	"maxContains": schKwStructural, "minItems": schKwStructural, "maxItems": schKwStructural,
	"uniqueItems": schKwStructural, "minimum": schKwStructural, "maximum": schKwStructural,
	"exclusiveMinimum": schKwStructural, "exclusiveMaximum": schKwStructural, "multipleOf": schKwStructural,
	"minLength": schKwStructural, "maxLength": schKwStructural, "pattern": schKwStructural,
	"format": schKwStructural, "allOf": schKwStructural, "anyOf": schKwStructural, "oneOf": schKwStructural,
	"not": schKwStructural, "if": schKwStructural, "then": schKwStructural, "else": schKwStructural,
	"$ref": schKwStructural, "$dynamicRef": schKwStructural,

	"title": schKwAnnotation, "description": schKwAnnotation, "default": schKwAnnotation,
	"examples": schKwAnnotation, "deprecated": schKwAnnotation, "readOnly": schKwAnnotation,
	"writeOnly": schKwAnnotation, "$comment": schKwAnnotation,

	// Definitions are compared where references reach them; anchors only
	// name places (a renamed anchor shows up through the references).
	"$defs": schKwIgnored, "definitions": schKwIgnored, "$anchor": schKwIgnored, "$dynamicAnchor": schKwIgnored,
	// $id starts a resolution scope: its changes are seen through the
	// references it resolves (internal ones are followed, external ones
	// compared by what they name).
	"$id": schKwIgnored,
}

// Schema classes.
const (
	schAny  = iota // absent, true, {}
	schNone        // false
	schObj         // an object with keywords
	schBad         // not a schema
)

func schClass(v jcs.Value) int {
	if !v.Valid() {
		return schAny
	}
	switch v.Kind() {
	case jcs.True:
		return schAny
	case jcs.False:
		return schNone
	case jcs.Object:
		if v.Len() == 0 {
			return schAny
		}
		return schObj
	}
	return schBad
}

// structure compares the validation keywords of two positions (references
// already followed).
func (d *schDiffer) structure(o, n schNode, pol int8, rd int) {
	co, cn := schClass(o.v), schClass(n.v)
	if co == schBad || cn == schBad {
		if !d.same(o.v, n.v) {
			what := n.v
			if cn != schBad {
				what = o.v
			}
			d.emit(KeywordUnmodeled, schNodePtr(o, n), Neutral, pol, false,
				"a "+what.Kind().String()+" where a schema belongs", "")
		}
		return
	}
	if co == schNone || cn == schNone {
		if co == cn {
			return
		}
		mo, mn := uint8(0), uint8(0)
		if co != schNone {
			mo = d.effMask(d.old, o.v, rd)
		}
		if cn != schNone {
			mn = d.effMask(d.new, n.v, rd)
		}
		d.typeChange(schNodePtr(o, n), mo, mn, pol)
		return
	}
	d.typeKw(o, n, pol, rd)
	d.enumConst(o, n, pol)
	// Keywords of types a restricted position does not take say nothing
	// about it.
	applies := func(t uint8) bool { return (o.tmask == 0 || o.tmask&t != 0) && (n.tmask == 0 || n.tmask&t != 0) }
	if applies(schTObject) {
		d.objects(o, n, pol, rd)
	}
	if applies(schTArray) {
		d.arrays(o, n, pol, rd)
	}
	if applies(schTNumber | schTInteger) {
		d.numbers(o, n, pol)
	}
	if applies(schTString) {
		d.strs(o, n, pol)
	}
	d.compositions(o, n, pol, rd)
	d.refs(o, n, pol, rd)
}

// malformed reports a modeled keyword whose value is not what the keyword
// takes, when it differs between the sides.
func (d *schDiffer) malformed(o, n schNode, kw string, pol int8) {
	vo, _ := o.get(kw)
	vn, _ := n.get(kw)
	if d.same(vo, vn) {
		return
	}
	d.emit(KeywordUnmodeled, schKwPtr(o, n, kw), Neutral, pol, false, schQuote(kw)+" has a value this keyword does not take; compared as bytes", "")
}

// ---- types ----

const (
	schTNull uint8 = 1 << iota
	schTBoolean
	schTObject
	schTArray
	schTNumber
	schTString
	schTInteger
	schTAll = 1<<7 - 1
)

var schTypeNames = []struct {
	name string
	bit  uint8
}{
	{"array", schTArray}, {"boolean", schTBoolean}, {"integer", schTInteger}, {"null", schTNull},
	{"number", schTNumber}, {"object", schTObject}, {"string", schTString},
}

func schTypeBit(s string) uint8 {
	for _, t := range schTypeNames {
		if t.name == s {
			if t.bit == schTNumber {
				return schTNumber | schTInteger
			}
			return t.bit
		}
	}
	return 0
}

// schTypeMask reads a type keyword's value (absent: every type).
func schTypeMask(v jcs.Value, has bool) (uint8, bool) {
	if !has {
		return schTAll, true
	}
	switch v.Kind() {
	case jcs.String:
		b := schTypeBit(v.Str())
		return b, b != 0
	case jcs.Array:
		var m uint8
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if e.Kind() != jcs.String {
				return 0, false
			}
			b := schTypeBit(e.Str())
			if b == 0 {
				return 0, false
			}
			m |= b
		}
		return m, true
	}
	return 0, false
}

func schTypeString(m uint8) string {
	switch m {
	case schTAll:
		return "any"
	case 0:
		return "nothing"
	}
	var parts []string
	for _, t := range schTypeNames {
		if m&t.bit != 0 && !(t.bit == schTInteger && m&schTNumber != 0) {
			parts = append(parts, t.name)
		}
	}
	return strings.Join(parts, "|")
}

// effMask is the set of JSON types v can accept: its type keyword
// intersected with what its references, allOf, anyOf and oneOf allow.
// Memoised per value; a cycle counts as any type.
func (d *schDiffer) effMask(s *schSide, v jcs.Value, rd int) uint8 {
	switch schClass(v) {
	case schNone:
		return 0
	case schAny, schBad:
		return schTAll
	}
	off := v.Offset()
	if m, ok := s.masks[off]; ok {
		if m.state == 1 {
			return schTAll
		}
		return m.mask
	}
	s.masks[off] = schMaskMemo{state: 1}
	t, has := v.Get("type")
	m, ok := schTypeMask(t, has)
	if !ok {
		m = schTAll
	}
	m &= d.compMask(s, v, rd)
	if e, ok := v.Get("enum"); ok && e.Kind() == jcs.Array {
		var u uint8
		for i := 0; i < e.Len(); i++ {
			u |= schValueType(e.Index(i))
		}
		m &= u
	}
	if c, ok := v.Get("const"); ok {
		m &= schValueType(c)
	}
	s.masks[off] = schMaskMemo{mask: m, ok: true, state: 2}
	return m
}

// schValueType is the type bit of an instance value (an integral number is
// an integer).
func schValueType(v jcs.Value) uint8 {
	switch v.Kind() {
	case jcs.Null:
		return schTNull
	case jcs.True, jcs.False:
		return schTBoolean
	case jcs.Object:
		return schTObject
	case jcs.Array:
		return schTArray
	case jcs.String:
		return schTString
	case jcs.Number:
		if f := v.Float(); f == math.Trunc(f) {
			return schTInteger
		}
		return schTNumber
	}
	return 0
}

// compMask is what v's references and combinators allow.
func (d *schDiffer) compMask(s *schSide, v jcs.Value, rd int) uint8 {
	m := uint8(schTAll)
	if !v.Valid() || v.Kind() != jcs.Object {
		return m
	}
	if rd < d.opt.MaxRefDepth {
		for _, kw := range [...]string{"$ref", "$dynamicRef"} {
			if r, ok := v.Get(kw); ok && r.Kind() == jcs.String && s.internalRef(r.Str(), v) {
				if t, _, problem := s.resolveAt(r.Str(), v); problem == "" {
					m &= d.effMask(s, t, rd+1)
				}
			}
		}
	}
	if a, ok := v.Get("allOf"); ok && a.Kind() == jcs.Array {
		for i := 0; i < a.Len(); i++ {
			m &= d.effMask(s, a.Index(i), rd)
		}
	}
	for _, kw := range [...]string{"anyOf", "oneOf"} {
		if a, ok := v.Get(kw); ok && a.Kind() == jcs.Array {
			var u uint8
			for i := 0; i < a.Len(); i++ {
				u |= d.effMask(s, a.Index(i), rd)
			}
			m &= u
		}
	}
	return m
}

func (d *schDiffer) typeKw(o, n schNode, pol int8, rd int) {
	to, ho := o.get("type")
	tn, hn := n.get("type")
	if !ho && !hn {
		return // type changes inside combinators are found there
	}
	mo, okO := schTypeMask(to, ho)
	mn, okN := schTypeMask(tn, hn)
	if !okO || !okN {
		d.malformed(o, n, "type", pol)
		return
	}
	mo &= d.effMask(d.old, o.v, rd)
	mn &= d.effMask(d.new, n.v, rd)
	if o.tmask != 0 {
		mo &= o.tmask
	}
	if n.tmask != 0 {
		mn &= n.tmask
	}
	d.typeChange(schKwPtr(o, n, "type"), mo, mn, pol)
}

func (d *schDiffer) typeChange(ptr string, mo, mn uint8, pol int8) {
	if mo == mn {
		return
	}
	detail := "type " + schTypeString(mo) + " → " + schTypeString(mn)
	switch {
	case mn&mo == mo:
		d.emit(TypeWidened, ptr, Widening, pol, false, detail, "")
	case mn&mo == mn:
		d.emit(TypeNarrowed, ptr, Narrowing, pol, false, detail, "")
	default:
		d.emit(TypeChanged, ptr, Neutral, pol, false, detail, "")
	}
}

// ---- enum and const ----

// schValues is the set of values a position is limited to by enum and
// const (their intersection), restricted to x.vset when it is set; ok is
// false when neither keyword limits it. Keys are canonical (schSide.key).
type schValues struct {
	keys []string
	vals map[string]jcs.Value
}

func (d *schDiffer) values(s *schSide, x schNode) (schValues, bool) {
	e, he := x.get("enum")
	c, hc := x.get("const")
	if !he && !hc {
		return schValues{}, false
	}
	v := schValues{vals: map[string]jcs.Value{}}
	add := func(val jcs.Value) {
		k := s.key(val)
		if _, dup := v.vals[k]; !dup {
			v.vals[k] = val
			v.keys = append(v.keys, k)
		}
	}
	if he {
		for i := 0; i < e.Len(); i++ {
			add(e.Index(i))
		}
	}
	if hc {
		k := s.key(c)
		if he {
			if _, ok := v.vals[k]; !ok {
				return schValues{vals: map[string]jcs.Value{}}, true
			}
			v = schValues{vals: map[string]jcs.Value{k: v.vals[k]}, keys: []string{k}}
		} else {
			add(c)
		}
	}
	if x.vset != nil {
		var keys []string
		for _, k := range v.keys {
			if x.vset[k] {
				keys = append(keys, k)
			} else {
				delete(v.vals, k)
			}
		}
		v.keys = keys
	}
	return v, true
}

func schPreviewValues(v schValues, keys []string) string {
	var b strings.Builder
	for i, k := range keys {
		if i == 8 {
			b.WriteString(", … (" + strconv.Itoa(len(keys)) + " in all)")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(safetext.Clip(string(v.vals[k].Canonical()), 40))
	}
	if len(keys) == 0 {
		b.WriteString("no values")
	}
	return b.String()
}

// enumConst compares the values enum and const limit a position to, as
// one set: a const is a one-element enum. Two constants (without enum) are
// const_changed; otherwise values added are enum_widened, values removed
// enum_narrowed, and a limit added or removed altogether is enum_narrowed
// or enum_widened (const_changed when the limit is a const alone).
func (d *schDiffer) enumConst(o, n schNode, pol int8) {
	eo, heo := o.get("enum")
	en, hen := n.get("enum")
	if (heo && eo.Kind() != jcs.Array) || (hen && en.Kind() != jcs.Array) {
		d.malformed(o, n, "enum", pol)
		return
	}
	co, hco := o.get("const")
	cn, hcn := n.get("const")
	if !heo && !hen && o.vset == nil && n.vset == nil {
		switch {
		case !hco && !hcn, d.same(co, cn):
		case !hcn:
			d.emit(ConstChanged, o.path.str()+"/const", Widening, pol, false, "const removed (was "+schPreview(co)+")", "")
		case !hco:
			d.emit(ConstChanged, n.path.str()+"/const", Narrowing, pol, false, "const added: "+schPreview(cn), "")
		default:
			d.emit(ConstChanged, n.path.str()+"/const", Neutral, pol, false, "const "+schPreview(co)+" → "+schPreview(cn), "")
		}
		return
	}
	kwPtr := func(x schNode, hasEnum bool) string {
		if hasEnum {
			return x.path.str() + "/enum"
		}
		return x.path.str() + "/const"
	}
	vo, okO := d.values(d.old, o)
	vn, okN := d.values(d.new, n)
	switch {
	case !okO && !okN:
	case !okN:
		if !heo {
			d.emit(ConstChanged, o.path.str()+"/const", Widening, pol, false, "const removed (was "+schPreview(co)+")", "")
		} else {
			d.emit(EnumWidened, o.path.str()+"/enum", Widening, pol, false, "enum removed (was "+schPreviewValues(vo, vo.keys)+")", "")
		}
	case !okO:
		if !hen {
			d.emit(ConstChanged, n.path.str()+"/const", Narrowing, pol, false, "const added: "+schPreview(cn), "")
		} else {
			d.emit(EnumNarrowed, n.path.str()+"/enum", Narrowing, pol, false, "enum added: "+schPreviewValues(vn, vn.keys), "")
		}
	default:
		var added, removed []string
		for _, k := range vn.keys {
			if _, ok := vo.vals[k]; !ok {
				added = append(added, k)
			}
		}
		for _, k := range vo.keys {
			if _, ok := vn.vals[k]; !ok {
				removed = append(removed, k)
			}
		}
		ptr := kwPtr(n, hen)
		if len(added) > 0 {
			d.emit(EnumWidened, ptr, Widening, pol, false, "enum values added: "+schPreviewValues(vn, added), "")
		}
		if len(removed) > 0 {
			d.emit(EnumNarrowed, ptr, Narrowing, pol, false, "enum values removed: "+schPreviewValues(vo, removed), "")
		}
	}
}

// schPreview is a short canonical rendering of a value for a Detail.
func schPreview(v jcs.Value) string {
	return safetext.Clip(string(v.Canonical()), 60)
}

// schQuote quotes a schema's text in a detail, clipped, in safetext's
// dialect (as every value mcpdrift shows: an ESC reads \u001b, an
// invisible filler is escaped, where Go's quote wrote \x1b and left it).
func schQuote(s string) string { return safetext.Quote(safetext.Clip(s, 120)) }

// ---- objects ----

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

// ---- arrays ----

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

// ---- numbers and counts ----

func schNum(f float64) string {
	if math.IsInf(f, 0) {
		return "none"
	}
	return string(jcs.AppendNumber(nil, f))
}

// count compares a numeric limit; absent means def. isMax: smaller is
// tighter.
func (d *schDiffer) count(o, n schNode, kw string, isMax bool, def float64, pol int8) {
	vo, ho := o.get(kw)
	vn, hn := n.get(kw)
	if !ho && !hn {
		return
	}
	if (ho && vo.Kind() != jcs.Number) || (hn && vn.Kind() != jcs.Number) {
		d.malformed(o, n, kw, pol)
		return
	}
	fo, fn := def, def
	if ho {
		fo = vo.Float()
	}
	if hn {
		fn = vn.Float()
	}
	if fo == fn {
		return
	}
	detail := kw + " " + schNum(fo) + " → " + schNum(fn)
	if (fn > fo) != isMax {
		d.emit(ConstraintTightened, schKwPtr(o, n, kw), Narrowing, pol, false, detail, "")
	} else {
		d.emit(ConstraintLoosened, schKwPtr(o, n, kw), Widening, pol, false, detail, "")
	}
}

// schBound is the effective lower or upper numeric bound of a schema.
type schBound struct {
	ok   bool
	val  float64
	excl bool
	kw   string
}

func (b schBound) describe(lower bool) string {
	if !b.ok {
		return "none"
	}
	op := map[[2]bool]string{{true, false}: "≥ ", {true, true}: "> ", {false, false}: "≤ ", {false, true}: "< "}[[2]bool{lower, b.excl}]
	return op + schNum(b.val)
}

// schBounds reads minimum/exclusiveMinimum (lower) or
// maximum/exclusiveMaximum, draft-04 boolean exclusives included.
func schBounds(x schNode, lower bool) (schBound, bool) {
	incl, excl := "maximum", "exclusiveMaximum"
	if lower {
		incl, excl = "minimum", "exclusiveMinimum"
	}
	var cands []schBound
	exclBool := false
	if e, ok := x.get(excl); ok {
		switch e.Kind() {
		case jcs.Number:
			cands = append(cands, schBound{ok: true, val: e.Float(), excl: true, kw: excl})
		case jcs.True:
			exclBool = true
		case jcs.False:
		default:
			return schBound{}, false
		}
	}
	if m, ok := x.get(incl); ok {
		if m.Kind() != jcs.Number {
			return schBound{}, false
		}
		cands = append(cands, schBound{ok: true, val: m.Float(), excl: exclBool, kw: incl})
	}
	var b schBound
	for _, c := range cands {
		if schTighter(c, b, lower) > 0 {
			b = c
		}
	}
	return b, true
}

// schTighter compares bounds: >0 when a admits fewer values than b.
func schTighter(a, b schBound, lower bool) int {
	switch {
	case !a.ok && !b.ok:
		return 0
	case !b.ok:
		return 1
	case !a.ok:
		return -1
	case a.val != b.val:
		if (a.val > b.val) == lower {
			return 1
		}
		return -1
	case a.excl != b.excl:
		if a.excl {
			return 1
		}
		return -1
	}
	return 0
}

func (d *schDiffer) numbers(o, n schNode, pol int8) {
	for _, lower := range [...]bool{true, false} {
		bo, okO := schBounds(o, lower)
		bn, okN := schBounds(n, lower)
		if !okO || !okN {
			if lower {
				d.malformed(o, n, "minimum", pol)
				d.malformed(o, n, "exclusiveMinimum", pol)
			} else {
				d.malformed(o, n, "maximum", pol)
				d.malformed(o, n, "exclusiveMaximum", pol)
			}
			continue
		}
		c := schTighter(bn, bo, lower)
		if c == 0 {
			continue
		}
		ptr := o.path.str() + "/" + bo.kw
		if bn.ok {
			ptr = n.path.str() + "/" + bn.kw
		}
		what := "upper bound "
		if lower {
			what = "lower bound "
		}
		detail := what + bo.describe(lower) + " → " + bn.describe(lower)
		if c > 0 {
			d.emit(ConstraintTightened, ptr, Narrowing, pol, false, detail, "")
		} else {
			d.emit(ConstraintLoosened, ptr, Widening, pol, false, detail, "")
		}
	}

	const kw = "multipleOf"
	vo, ho := o.get(kw)
	vn, hn := n.get(kw)
	if !ho && !hn || d.same(vo, vn) {
		return
	}
	if (ho && (vo.Kind() != jcs.Number || vo.Float() <= 0)) || (hn && (vn.Kind() != jcs.Number || vn.Float() <= 0)) {
		d.malformed(o, n, kw, pol)
		return
	}
	ptr := schKwPtr(o, n, kw)
	switch {
	case !ho:
		d.emit(ConstraintTightened, ptr, Narrowing, pol, false, "multipleOf added: "+schPreview(vn), "")
	case !hn:
		d.emit(ConstraintLoosened, ptr, Widening, pol, false, "multipleOf removed (was "+schPreview(vo)+")", "")
	default:
		ro, okO := new(big.Rat).SetString(string(vo.Canonical()))
		rn, okN := new(big.Rat).SetString(string(vn.Canonical()))
		detail := "multipleOf " + schPreview(vo) + " → " + schPreview(vn)
		switch {
		case okO && okN && new(big.Rat).Quo(rn, ro).IsInt():
			d.emit(ConstraintTightened, ptr, Narrowing, pol, false, detail, "")
		case okO && okN && new(big.Rat).Quo(ro, rn).IsInt():
			d.emit(ConstraintLoosened, ptr, Widening, pol, false, detail, "")
		default:
			d.emit(ConstraintLoosened, ptr, Neutral, pol, false, detail+" (neither divides the other: may accept values rejected before)", "")
		}
	}
}

// ---- strings ----

func (d *schDiffer) strs(o, n schNode, pol int8) {
	d.count(o, n, "minLength", false, 0, pol)
	d.count(o, n, "maxLength", true, math.Inf(1), pol)
	for _, kw := range [...]string{"pattern", "format"} {
		vo, ho := o.get(kw)
		vn, hn := n.get(kw)
		switch {
		case !ho && !hn, d.same(vo, vn):
		case (ho && vo.Kind() != jcs.String) || (hn && vn.Kind() != jcs.String):
			d.malformed(o, n, kw, pol)
		case !ho:
			d.emit(ConstraintTightened, n.path.str()+"/"+kw, Narrowing, pol, false, kw+" added: "+schQuote(vn.Str()), "")
		case !hn:
			d.emit(ConstraintLoosened, o.path.str()+"/"+kw, Widening, pol, true, kw+" removed (was "+schQuote(vo.Str())+")", "")
		default:
			d.emit(ConstraintLoosened, n.path.str()+"/"+kw, Neutral, pol, false,
				kw+" "+schQuote(vo.Str())+" → "+schQuote(vn.Str())+" (not compared: may accept values rejected before)", "")
		}
	}
}

// ---- combinators ----

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

// schTypeGroups counts the groups of JSON types in a mask (integer and
// number are one).
func schTypeGroups(m uint8) int {
	n := 0
	for _, g := range [...]uint8{schTNull, schTBoolean, schTObject, schTArray, schTNumber | schTInteger, schTString} {
		if m&g != 0 {
			n++
		}
	}
	return n
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

// Bounds of branch matching. Branches are first matched by equal normal
// forms (validation only), in linear time. Of the rest, pairs whose types
// can meet are candidates; with at most schMaxTrialPairs candidate pairs,
// each is diffed (a trial, memoised, charged to the work budget) and pairs
// are chosen greedily by the trial that finds the least (records near the
// branches' roots weigh more than deep ones); with at most
// schMaxScoredPairs, they are chosen by a cheap similarity (shared
// keywords and property names) instead; beyond that none are paired. A
// branch left unpaired is reported added or removed, so past the caps an
// edited branch shows as one removed and one added: more records, never
// fewer.
const (
	schMaxTrialPairs  = 64
	schMaxScoredPairs = 4096
)

// matchAlts compares two sets of alternatives (anyOf/oneOf branches, allOf
// members, or one schema standing for itself): matched pairs are diffed,
// unmatched new ones are added and unmatched old ones removed. ko and kn
// are the keywords ("" for a schema standing for itself); layerO and layerN,
// when not nil, are the outer layers of the alternatives of that side when
// they are diffed. It returns, for each old and each new alternative, the
// index of its match (-1 none).
func (d *schDiffer) matchAlts(ao, an, layerO, layerN []schNode, ko, kn string, pol int8, rd int) (matchedO, matchedN []int) {
	matchedO = make([]int, len(ao))
	matchedN = make([]int, len(an))
	for i := range matchedO {
		matchedO[i] = -1
	}
	for j := range matchedN {
		matchedN[j] = -1
	}
	pair := func(i, j int) { matchedO[i], matchedN[j] = j, i }
	// Every branch looked at is charged to the work budget.
	if !d.charge(len(ao)+len(an), func() string { return schNodePtr(schFirst(ao), schFirst(an)) }) {
		return matchedO, matchedN
	}
	withLayers := func(x schNode, l []schNode) schNode {
		if l != nil {
			x.outer = l
		}
		return x
	}
	all := ko == "allOf"
	// Candidates: for anyOf and oneOf, branches whose types can meet (a
	// string branch replaced by an object branch is one alternative
	// removed and another added); allOf members are conjuncts, any pair.
	meet := func(i, j int) bool {
		return all || d.effMask(d.old, ao[i].v, rd)&d.effMask(d.new, an[j].v, rd) != 0
	}
	// Equal validation, by normal form (else by canonical bytes).
	key := func(s *schSide, x schNode) string {
		if z := s.nz.norm(x.v); z != nil {
			return "n" + string(z.vsum[:])
		}
		if !x.v.Valid() {
			return "absent"
		}
		return s.key(x.v)
	}
	queue := make(map[string][]int, len(ao))
	for i, x := range ao {
		k := key(d.old, x)
		queue[k] = append(queue[k], i)
	}
	for j, x := range an {
		k := key(d.new, x)
		if q := queue[k]; len(q) > 0 {
			queue[k] = q[1:]
			pair(q[0], j)
		}
	}
	// Alternatives limited to values (enum, const) compare as sets of
	// values (see valueMatch); the others go on.
	if ko != "allOf" && kn != "allOf" {
		d.valueMatch(ao, an, matchedO, matchedN, layerO, layerN, pol, rd)
	}
	// The rest: candidates whose types meet.
	var remO, remN []int
	for i := range ao {
		if matchedO[i] == -1 {
			remO = append(remO, i)
		}
	}
	for j := range an {
		if matchedN[j] == -1 {
			remN = append(remN, j)
		}
	}
	type cand struct{ i, j, cost int }
	var cands []cand
	note := ""
	if n := len(remO) * len(remN); n > 0 {
		switch {
		case n == 1:
			// One of each left: no choice to make.
			if meet(remO[0], remN[0]) {
				cands = append(cands, cand{remO[0], remN[0], 0})
			}
		case n <= schMaxTrialPairs:
			for _, i := range remO {
				for _, j := range remN {
					if !meet(i, j) {
						continue
					}
					cands = append(cands, cand{i, j, d.trial(withLayers(ao[i], layerO), withLayers(an[j], layerN), pol, rd)})
				}
			}
		case n <= schMaxScoredPairs:
			for _, i := range remO {
				for _, j := range remN {
					if !meet(i, j) {
						continue
					}
					cands = append(cands, cand{i, j, -schSimilarity(ao[i].v, an[j].v)})
				}
			}
		default:
			note = "more than " + strconv.Itoa(schMaxScoredPairs) + " pairs of differing branches: not matched, reported as removed and added"
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.cost != b.cost {
			return a.cost - b.cost
		}
		if da, db := abs(a.i-a.j), abs(b.i-b.j); da != db {
			return da - db
		}
		if a.i+a.j != b.i+b.j {
			return a.i + a.j - b.i - b.j
		}
		if a.i != b.i {
			return a.i - b.i
		}
		return a.j - b.j
	})
	for _, c := range cands {
		if matchedO[c.i] == -1 && matchedN[c.j] == -1 {
			pair(c.i, c.j)
		}
	}
	for j, i := range matchedN {
		if i < 0 {
			continue
		}
		o, n := withLayers(ao[i], layerO), withLayers(an[j], layerN)
		if t, ok := d.trials[schTrialKey{schPairKey{schOff(o.v), schOff(n.v), pol}, schOuterKey(o), schOuterKey(n)}]; ok {
			// Diffed already, in full (duplicates of records found
			// elsewhere are removed by finish).
			d.out = append(d.out, t.out...)
			continue
		}
		d.diff(o, n, pol, rd)
	}
	d.unmatched(ao, an, matchedO, matchedN, ko, kn, pol, rd, note)
	return matchedO, matchedN
}

// unmatched reports the alternatives left without a match: added ones
// widen (a type no old alternative took is type_widened), removed ones
// narrow; an added or removed oneOf branch that may overlap another is
// neutral; allOf members the other way round.
func (d *schDiffer) unmatched(ao, an []schNode, matchedO, matchedN []int, ko, kn string, pol int8, rd int, note string) {
	all := ko == "allOf"
	var unionO, unionN uint8
	for _, x := range ao {
		unionO |= d.effMask(d.old, x.v, rd)
	}
	for _, x := range an {
		unionN |= d.effMask(d.new, x.v, rd)
	}
	for j, x := range an {
		if matchedN[j] != -1 {
			continue
		}
		m := d.effMask(d.new, x.v, rd)
		if all {
			d.emit(CompositionNarrowed, x.path.str(), Narrowing, pol, false, "allOf member added ("+schTypeString(m)+")", note)
			continue
		}
		kind, dir := CompositionWidened, Widening
		what := kn + " branch added"
		if kn == "" {
			what = "the new schema matches no branch of the old " + ko
		}
		detail := what + " (" + schTypeString(m) + ")"
		if m&^unionO != 0 {
			kind, detail = TypeWidened, what+": type "+schTypeString(unionO)+" → "+schTypeString(unionO|m)
		}
		if kn == "oneOf" && len(an) > 1 && !d.disjointFrom(d.new, an, j) {
			dir = Neutral
			detail += "; it may overlap another oneOf branch, whose instances it then rejects"
		}
		d.emit(kind, x.path.str(), dir, pol, false, detail, note)
	}
	for i, x := range ao {
		if matchedO[i] != -1 {
			continue
		}
		m := d.effMask(d.old, x.v, rd)
		if all {
			d.emit(CompositionWidened, x.path.str(), Widening, pol, false, "allOf member removed ("+schTypeString(m)+")", note)
			continue
		}
		kind, dir := CompositionNarrowed, Narrowing
		what := ko + " branch removed"
		if ko == "" {
			what = "the old schema matches no branch of the new " + kn
		}
		detail := what + " (" + schTypeString(m) + ")"
		if m&^unionN != 0 {
			kind, detail = TypeNarrowed, what+": type "+schTypeString(unionO)+" → "+schTypeString(unionN&unionO)
		}
		if ko == "oneOf" && len(ao) > 1 && !d.disjointFrom(d.old, ao, i) {
			dir = Neutral
			detail += "; it may have overlapped another oneOf branch, whose instances are then accepted now"
		}
		d.emit(kind, x.path.str(), dir, pol, false, detail, note)
	}
}

// valueMatch compares the unmatched alternatives limited to values (enum,
// const) of both sides as sets of values: two that share values are
// diffed, each restricted to the values they share (so four const
// branches that became one enum branch change nothing); a value only the
// new ones take is enum_widened at its new branch, one only the old ones
// took enum_narrowed at its old branch. Those alternatives are marked
// matched (-2: diffed here); one that shares no value goes on to the
// general matching. Bounded by the caps of matchAlts (pairs of value
// alternatives beyond schMaxScoredPairs are left to it).
func (d *schDiffer) valueMatch(ao, an []schNode, matchedO, matchedN []int, layerO, layerN []schNode, pol int8, rd int) {
	type alt struct {
		i    int
		vals schValues
		set  map[string]bool
	}
	collect := func(s *schSide, xs []schNode, matched []int) []alt {
		var out []alt
		for i, x := range xs {
			if matched[i] != -1 {
				continue
			}
			z := s.nz.norm(x.v)
			if z == nil || len(z.set) == 0 {
				continue
			}
			v, ok := d.values(s, x)
			if !ok {
				continue
			}
			set := make(map[string]bool, len(z.set))
			for _, k := range z.set {
				set[k] = true
			}
			out = append(out, alt{i, v, set})
		}
		return out
	}
	vo, vn := collect(d.old, ao, matchedO), collect(d.new, an, matchedN)
	if len(vo) == 0 || len(vn) == 0 || len(vo)*len(vn) > schMaxScoredPairs {
		return
	}
	inO, inN := map[string]bool{}, map[string]bool{}
	for _, a := range vo {
		for k := range a.set {
			inO[k] = true
		}
	}
	for _, a := range vn {
		for k := range a.set {
			inN[k] = true
		}
	}
	restrict := func(x schNode, shared map[string]bool, vals schValues, layers []schNode) schNode {
		if layers != nil {
			x.outer = layers
		}
		x.vset = shared
		x.tmask = 0
		for k := range shared {
			if v, ok := vals.vals[k]; ok {
				x.tmask |= schValueType(v)
			}
		}
		return x
	}
	sharedO := make([]bool, len(vo))
	sharedN := make([]bool, len(vn))
	for a, x := range vo {
		for b, y := range vn {
			shared := map[string]bool{}
			for k := range x.set {
				if y.set[k] {
					shared[k] = true
				}
			}
			if len(shared) == 0 {
				continue
			}
			sharedO[a], sharedN[b] = true, true
			d.diff(restrict(ao[x.i], shared, x.vals, layerO), restrict(an[y.i], shared, y.vals, layerN), pol, rd)
		}
	}
	kwPtr := func(x schNode) string {
		if x.has("enum") {
			return x.path.str() + "/enum"
		}
		return x.path.str() + "/const"
	}
	for a, x := range vo {
		if !sharedO[a] {
			continue
		}
		matchedO[x.i] = -2
		var lost []string
		for _, k := range x.vals.keys {
			if x.set[k] && !inN[k] {
				lost = append(lost, k)
			}
		}
		if len(lost) > 0 {
			d.emit(EnumNarrowed, kwPtr(ao[x.i]), Narrowing, pol, false, "enum values removed: "+schPreviewValues(x.vals, lost)+" (no branch takes them now)", "")
		}
	}
	for b, y := range vn {
		if !sharedN[b] {
			continue
		}
		matchedN[y.i] = -2
		var gained []string
		for _, k := range y.vals.keys {
			if y.set[k] && !inO[k] {
				gained = append(gained, k)
			}
		}
		if len(gained) > 0 {
			d.emit(EnumWidened, kwPtr(an[y.i]), Widening, pol, false, "enum values added: "+schPreviewValues(y.vals, gained)+" (no branch took them before)", "")
		}
	}
}

func schFirst(xs []schNode) schNode {
	if len(xs) == 0 {
		return schNode{}
	}
	return xs[0]
}

// charge spends n nodes of the work budget; false (and one
// schema_unresolved change at ptr) when it is exhausted.
func (d *schDiffer) charge(n int, ptr func() string) bool {
	if d.exhausted {
		return false
	}
	d.visited += n
	if d.visited > d.opt.MaxNodes {
		d.exhausted = true
		d.unresolved(ptr(), "",
			"work budget exhausted after "+strconv.Itoa(d.opt.MaxNodes)+" schema nodes; the rest of the schemas was not compared")
		return false
	}
	return true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// trial diffs two branches on the side, to choose a pairing: the cost is
// what it finds, each record weighted by how near the branches' roots it
// is. Memoised; the work is charged to the budget.
func (d *schDiffer) trial(o, n schNode, pol int8, rd int) int {
	k := schTrialKey{schPairKey{schOff(o.v), schOff(n.v), pol}, schOuterKey(o), schOuterKey(n)}
	if c, ok := d.trials[k]; ok {
		return c.cost
	}
	if d.trials == nil {
		d.trials = make(map[schTrialKey]schTrial)
	}
	out, seen, exhausted := d.out, d.seen, d.exhausted
	d.out, d.seen = nil, make(map[schPairKey]struct{})
	d.diff(o, n, pol, rd)
	// Records near the branches' roots weigh more than deep ones: two
	// branches that share their shape but differ deep inside are a better
	// pair than two of different shapes whose differences are few but at
	// the top. Severity is not counted: it depends on the direction, and a
	// pairing should not.
	op, np := d.base+o.path.str(), d.base+n.path.str()
	cost := 0
	for _, c := range d.out {
		// Depth below the root of the branch the record is in (a record
		// is where the changed thing is on the new side, else the old).
		depth := strings.Count(c.Pointer, "/")
		switch {
		case strings.HasPrefix(c.Pointer, np):
			depth -= strings.Count(np, "/")
		case strings.HasPrefix(c.Pointer, op):
			depth -= strings.Count(op, "/")
		}
		cost += 1 << (20 - min(max(depth, 0), 20))
	}
	if !exhausted && d.exhausted {
		for _, c := range d.out {
			if c.Kind == SchemaUnresolved && strings.HasPrefix(c.Note, "work budget exhausted") {
				out = append(out, c)
			}
		}
	}
	// Without duplicates: two branches that reach one shared definition
	// report it twice, and trials nest.
	d.trials[k] = schTrial{cost, schCompact(d.out)}
	d.out, d.seen = out, seen
	return cost
}

// schSimilarity is a cheap likeness of two branches: shared keywords and
// shared property names.
func schSimilarity(a, b jcs.Value) int {
	if a.Kind() != jcs.Object || b.Kind() != jcs.Object {
		return 0
	}
	n := 0
	for i := 0; i < a.Len(); i++ {
		k, va := a.Member(i)
		vb, ok := b.Get(k.Str())
		if !ok {
			continue
		}
		n += 2
		if k.StrEqual("properties") && va.Kind() == jcs.Object && vb.Kind() == jcs.Object {
			for j := 0; j < va.Len(); j++ {
				pk, _ := va.Member(j)
				if _, ok := vb.Get(pk.Str()); ok {
					n++
				}
			}
		}
	}
	return n
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

// ---- external references and the result ----

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

func (d *schDiffer) finish() []Change {
	if len(d.out) == 0 {
		return nil
	}
	return schCompact(d.out)
}

// schCompact sorts changes by pointer, then kind (then direction, detail,
// note, severity) and drops duplicates.
func schCompact(out []Change) []Change {
	if len(out) == 0 {
		return out
	}
	slices.SortFunc(out, func(a, b Change) int {
		for _, c := range [...]int{
			strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Kind, b.Kind),
			strings.Compare(string(a.Direction), string(b.Direction)), strings.Compare(a.Detail, b.Detail),
			strings.Compare(a.Note, b.Note), strings.Compare(a.Severity, b.Severity),
		} {
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return slices.Compact(out)
}

// ---- parameter names ----

var schCapabilityWords = map[string]bool{
	"url": true, "uri": true, "callback": true, "webhook": true, "endpoint": true, "host": true,
	"hostname": true, "env": true, "environment": true, "command": true, "cmd": true, "script": true,
	"shell": true, "exec": true, "execute": true, "executable": true, "path": true, "filepath": true,
	"dir": true, "directory": true, "cwd": true, "workdir": true, "file": true, "filename": true,
	"header": true, "headers": true, "token": true, "proxy": true,
	// Switches and open-ended bags that change what the tool may do.
	"allow": true, "dangerous": true, "unsafe": true, "insecure": true, "options": true,
	"config": true, "configuration": true, "args": true, "argv": true, "eval": true, "code": true,
	"sql": true, "launch": true, "sandbox": true, "sudo": true, "privileged": true, "password": true,
	"secret": true, "credential": true, "auth": true, "cookie": true, "redirect": true,
}

// schPermissive reports whether a parameter's schema accepts any value or
// any object (true, {}, or an object type with no properties and open
// additionalProperties): the widest possible new parameter.
func schPermissive(v jcs.Value) bool {
	if !v.Valid() {
		return false
	}
	switch v.Kind() {
	case jcs.True:
		return true
	case jcs.Object:
	default:
		return false
	}
	if _, ok := v.Get("$ref"); ok {
		return false
	}
	for _, kw := range []string{"enum", "const", "anyOf", "oneOf", "allOf", "not", "pattern", "format", "properties"} {
		if _, ok := v.Get(kw); ok {
			return false
		}
	}
	t, hasType := v.Get("type")
	if hasType {
		objectish := t.StrEqual("object")
		if t.Kind() == jcs.Array {
			for i := 0; i < t.Len(); i++ {
				if t.Index(i).StrEqual("object") {
					objectish = true
				}
			}
		}
		if !objectish {
			return false
		}
	}
	if ap, ok := v.Get("additionalProperties"); ok && ap.Kind() == jcs.False {
		return false
	}
	return true
}

// schCapabilityName reports whether a word of a parameter name (split at
// non-alphanumerics and camelCase boundaries, plural s dropped) suggests a
// new capability.
func schCapabilityName(name string) bool {
	for _, w := range schWords(name) {
		w = strings.ToLower(w)
		if schCapabilityWords[w] || (len(w) > 3 && strings.HasSuffix(w, "s") && schCapabilityWords[w[:len(w)-1]]) {
			return true
		}
	}
	return false
}

// schWords splits "callbackURL_v2" into callback, URL, v2.
func schWords(s string) []string {
	var words []string
	rs := []rune(s)
	start := -1
	for i, r := range rs {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !alnum {
			if start >= 0 {
				words = append(words, string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		// A lower-case letter after a run of capitals starts a new word
		// ("URLPath"), except a plural s that ends it ("URIs").
		acronymEnd := unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) &&
			!(rs[i+1] == 's' && (i+2 == len(rs) || !unicode.IsLower(rs[i+2])))
		boundary := unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev) || acronymEnd)
		if boundary {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	if start >= 0 {
		words = append(words, string(rs[start:]))
	}
	return words
}

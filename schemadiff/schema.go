package schemadiff

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
)

// The structural diff of two JSON Schemas: DiffSchema, and the walk that
// visits pairs of positions (diff) and hands each keyword family to its
// file (structure): types.go (type), enums.go (enum, const), objects.go
// (properties, required, additionalProperties, ...; paramnames.go),
// arrays.go (items, prefixItems, contains, ...), constraints.go (string and
// number constraints), compositions.go (allOf, anyOf, oneOf, not, if;
// branches.go matches branches), refs.go ($ref; resolve.go), and
// annotations.go (title, description, default, ...; dialect.go for
// $schema). A position and its pointer: position.go; how a change is
// recorded and graded: severity.go; one side's document: side.go; the
// normal forms that prove two spellings equivalent: normalize.go.

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

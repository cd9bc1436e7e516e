package schemadiff

import (
	"strings"

	"github.com/mcpdrift/mcpdrift/catalog"
)

// Reasons of an allow decision over changes (DecideWithReason): every
// change that decides is notation; every one needs no review (it
// validates the same); or every change is information.
const (
	ReasonValidatesSame   = "validates the same"
	ReasonInformationOnly = "information only"
)

// NeedsNoReview reports whether a change leaves what a validator accepts
// and what the planner reads as they were, so that a tool whose every
// change is such is allowed under every profile: notation
// (schema_notation_changed), a dialect change no keyword of the schemas
// reads differently (schema_dialect_changed), an annotation validation
// never reads ($comment, examples, deprecated, readOnly, writeOnly:
// schema_annotation_changed), and a member of the tool outside the digest
// projection (tool_member_changed, information). A parameter's description
// or title (description_changed, title_changed) and a default
// (schema_default_changed) validate the same too, but the planner reads
// them or the executor may apply them: they are reviewed.
//
// The kinds are written down once, in the catalogue (Entry.NoReview).
func NeedsNoReview(c Change) bool {
	_, ok := noReviewKinds[c.Kind]
	return ok
}

var noReviewKinds = catalog.NoReviewKinds()

// Informational reports a change that is information only and never
// decides: a member of the tool outside the digest projection
// (execution, title, icons, _meta, a vendor member). The digests do not
// cover it, so an approval does not either.
func Informational(c Change) bool { return c.Kind == ToolMemberChanged }

// neutralReason is the reason an allow decision over the deciding
// changes d gives when none of them needs review (ok false when one
// does): notation only when every one is notation, else validates the
// same.
func neutralReason(d []Change) (string, bool) {
	for _, c := range d {
		if !NeedsNoReview(c) {
			return "", false
		}
	}
	if NotationOnly(d) {
		return ReasonNotationOnly, true
	}
	return ReasonValidatesSame, true
}

// validationChange reports whether an input schema's change record may
// change what a validator accepts: not notation, a neutral dialect
// change, an annotation, a default, planner-facing text, or an external
// $ref present (or pinned) on both sides. Schema drift under a stable
// description is said only over such changes.
func validationChange(c Change) bool {
	switch c.Kind {
	case SchemaNotationChanged, SchemaDialectChanged, SchemaAnnotationChanged, SchemaDefaultChanged,
		DescriptionChanged, TitleChanged, ExternalRefPresent, ExternalRefPinned:
		return false
	}
	return true
}

// driftDirection is the direction of the changes a schema drift under a
// stable description stands for: widening when one widens (the executor
// accepts something new), narrowing when every one narrows, neutral
// otherwise (a change that does both, or that cannot be ordered).
func driftDirection(cs []Change) Direction {
	d := Direction("")
	for _, c := range cs {
		switch {
		case c.Direction == Widening:
			return Widening
		case d == "":
			d = c.Direction
		case d != c.Direction:
			d = Neutral
		}
	}
	if d == "" {
		return Neutral
	}
	return d
}

// IsOutput reports whether a change is about what the tool returns: its
// pointer is under the output schema (outputSchema, or output_schema as
// some servers spell it), or it is an output_schema_* record.
func IsOutput(c Change) bool {
	switch c.Kind {
	case OutputSchemaAdded, OutputSchemaRemoved, OutputSchemaChanged:
		return true
	}
	return outputPointer(c.Pointer)
}

func outputPointer(p string) bool {
	for _, o := range [...]string{"/outputSchema", "/output_schema"} {
		if p == o || strings.HasPrefix(p, o+"/") {
			return true
		}
	}
	return false
}

// Package schemadiff says how MCP tools changed: a structural JSON Schema
// diff graded by direction (widening: the executor now accepts more than
// before; narrowing: existing callers can break) and severity, the
// escalation signals of structural-escalation-signals.md, tool-level
// changes (descriptions, titles, annotation hints, renames) and the server
// identity tuple. It works on raw tool definitions (jcs trees of the bytes
// the server sent), never fetches a $ref, and bounds its work.
package schemadiff

import (
	"strings"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Direction of a change, from the caller's and executor's point of view.
type Direction string

// Directions.
const (
	// Widening: the executor now accepts more than before (for an output
	// schema: the tool may now return what it could not before, which the
	// agent reading the result receives unannounced).
	Widening Direction = "widening"
	// Narrowing: existing callers can break. An output schema's changes
	// are never narrowing: a tool that returns less harms no reader, and
	// such a change is neutral.
	Narrowing Direction = "narrowing"
	// Neutral: neither, or both at once.
	Neutral Direction = "neutral"
)

// Mirror returns the opposite direction (neutral stays neutral).
func (d Direction) Mirror() Direction {
	switch d {
	case Widening:
		return Narrowing
	case Narrowing:
		return Widening
	}
	return Neutral
}

// Change is one structural change record. Pointer is an RFC 6901 pointer
// into the tool object as the server sent it (for example
// "/inputSchema/properties/callback_url"). Detail is a short description
// for people; it may hold server-controlled names and must be escaped
// before it is printed (report does that).
type Change struct {
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	Pointer   string    `json:"pointer"`
	Direction Direction `json:"direction"`
	Severity  string    `json:"severity"`
	Detail    string    `json:"detail,omitempty"`
	// Note marks a change whose evidence is incomplete (an unresolved or
	// cyclic $ref, a work budget exhausted); the change is still reported.
	Note string `json:"note,omitempty"`
	// Info is set on a change the decision profile takes as information
	// (DecisionProfile.Info): why. It is reported and never decides.
	Info string `json:"info,omitempty"`
	// SeverityRaised is set when Severity is one step above the grade of
	// the kind because the tool takes a capability parameter (a command,
	// code, SQL, a URL, a path, env, headers, a free-form object; see
	// Capabilities): which parameter, and the grade before.
	SeverityRaised *SeverityRaise `json:"severity_raised,omitempty"`
	// parts is Detail as it was composed, when it holds a server's values:
	// mcpdrift's words at even indexes, the values (raw) at odd ones.
	// Sentence quotes each value in its reader's format; Detail has them
	// quoted by safetext.Quote (what JSON readers get). A pointer keeps
	// Change comparable; the parts are never changed once made.
	parts *[]string
}

// composed returns the Detail of parts (words and raw values, alternating;
// see Change.parts) and the parts.
func composed(parts ...string) (string, *[]string) {
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			p = safetext.Quote(p)
		}
		b.WriteString(p)
	}
	return b.String(), &parts
}

// Kinds of schema changes (see catalog for explanations).
const (
	ParamAddedOptional            = "param_added_optional"
	ParamAddedRequired            = "param_added_required"
	ParamRemoved                  = "param_removed"
	RequiredDropped               = "required_dropped"
	RequiredAdded                 = "required_added"
	TypeWidened                   = "type_widened"
	TypeNarrowed                  = "type_narrowed"
	TypeChanged                   = "type_changed"
	EnumWidened                   = "enum_widened"
	EnumNarrowed                  = "enum_narrowed"
	ConstChanged                  = "const_changed"
	AdditionalPropertiesLoosened  = "additional_properties_loosened"
	AdditionalPropertiesTightened = "additional_properties_tightened"
	ConstraintLoosened            = "constraint_loosened"
	ConstraintTightened           = "constraint_tightened"
	CompositionWidened            = "composition_widened"
	CompositionNarrowed           = "composition_narrowed"
	ExternalRefIntroduced         = "external_ref_introduced"
	ExternalRefPresent            = "external_ref_present"
	// ExternalRefPinned: an external reference whose document is pinned
	// by hash in the trust record given (RefPins) and, when verification
	// was asked, still has that digest. Judged like any other change.
	ExternalRefPinned = "external_ref_pinned"
	// ExternalRefDocumentChanged: the document of a pinned external
	// reference, fetched to verify it, no longer has the pinned digest.
	ExternalRefDocumentChanged = "external_ref_document_changed"
	// ExternalRefUnverified: verification was asked and the document of
	// a pinned external reference could not be fetched.
	ExternalRefUnverified = "external_ref_unverified"
	KeywordUnmodeled      = "keyword_unmodeled"
	// SchemaAnnotationChanged: an annotation keyword inside a schema that
	// validation never reads ($comment, examples, deprecated, readOnly,
	// writeOnly) changed. Neutral: it needs no review (see NeedsNoReview).
	// A parameter's description or title is planner-facing text and is a
	// description_changed or title_changed record at its own pointer; a
	// default is schema_default_changed.
	SchemaAnnotationChanged = "schema_annotation_changed"
	// SchemaDefaultChanged: a default inside a schema changed, was added
	// or removed: validation is the same, but an executor may apply the
	// default when the argument is omitted.
	SchemaDefaultChanged = "schema_default_changed"
	// SchemaDialectChanged: $schema changed and the schemas use no keyword
	// whose meaning differs between the two dialects (see dialect.go):
	// they validate the same. Neutral: it needs no review. Where such a
	// keyword is used, the change is schema_unresolved instead: the
	// comparison under each side's dialect was not made.
	SchemaDialectChanged = "schema_dialect_changed"
	// SchemaNotationChanged: the schema at the pointer is spelled
	// differently but accepts exactly the same instances and carries the
	// same annotations (equal normal forms, see Normalize). Neutral, low.
	SchemaNotationChanged = "schema_notation_changed"
	SchemaUnresolved      = "schema_unresolved"

	OutputSchemaAdded   = "output_schema_added"
	OutputSchemaRemoved = "output_schema_removed"
	OutputSchemaChanged = "output_schema_changed"

	AnnotationHintWeakened       = "annotation_hint_weakened"
	AnnotationHintStrengthened   = "annotation_hint_strengthened"
	DescriptionChanged           = "description_changed"
	TitleChanged                 = "title_changed"
	SchemaDriftStableDescription = "schema_drift_stable_description"
	ToolRenameSuspected          = "tool_rename_suspected"
	// ToolMemberChanged: a member of the tool outside the digest
	// projection (execution, title, icons, _meta, a vendor member)
	// changed. Information: it never decides (see Informational).
	ToolMemberChanged = "tool_member_changed"
	ToolAdded         = "tool_added"
	ToolRemoved       = "tool_removed"

	ServerEndpointRebound = "server_endpoint_rebound"
	// ServerInstallMoved: a stdio endpoint whose only change is where the
	// same package's same binary is installed (an upgrade into a new
	// directory, an npx cache path).
	ServerInstallMoved = "server_install_moved"
	// ServerEnvChanged: the environment given to a stdio server (names,
	// or the digest of a value) changed; env vars can change the tool list.
	ServerEnvChanged     = "server_env_changed"
	PublisherKeyChanged  = "publisher_key_changed"
	ServerVersionChanged = "server_version_changed"
	ServerNameChanged    = "server_name_changed"
)

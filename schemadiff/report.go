package schemadiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// ReportSchemaID versions the JSON diff report.
const ReportSchemaID = "mcpdrift.diff_report.v1"

// Exit codes of diff (a contract; see docs/configuration.md, "Exit codes").
const (
	ExitNoChange     = 0 // nothing changed, or nothing that needs review (decision allow, with its reason)
	ExitChanged      = 1
	ExitInconclusive = 3 // nothing changed in what was seen, but pages of the new list went unseen
)

// NewListPartial is the inconclusive code of a diff whose new list is
// partial: tools on the pages that were not seen cannot be judged.
const NewListPartial = "diff_new_list_partial"

// Side describes one input of a diff.
type Side struct {
	Source         string             `json:"source"`
	Form           string             `json:"form"`
	ServerID       string             `json:"server_id,omitempty"`
	ManifestDigest string             `json:"manifest_digest,omitempty"`
	ToolCount      int                `json:"tool_count"`
	Completeness   string             `json:"tools_list_complete"`
	Identity       *manifest.Identity `json:"identity,omitempty"`
	// Surface is the pinned model-facing surface a snapshot side holds,
	// as the file has it (package surface reads it; nil: none). Not part
	// of the diff of tools.
	Surface []byte `json:"-"`
}

// Report is the result of comparing two tool lists.
type Report struct {
	Schema   string `json:"schema"`
	Decision string `json:"decision"`
	// DecisionReason says why changes were allowed: ReasonNotationOnly,
	// ReasonValidatesSame or ReasonInformationOnly (NeedsNoReview).
	DecisionReason string   `json:"decision_reason,omitempty"`
	Profile        string   `json:"profile"`
	DeniedBy       []string `json:"denied_by"`
	Old            Side     `json:"old"`
	New            Side     `json:"new"`
	Changes        []Change `json:"changes"`
	// Tools is the decision on every tool of either list (ToolDecisions):
	// unchanged tools allow; for the others, whether their changes are
	// notation only, and how the profile decides them on their own.
	Tools      []ToolVerdict `json:"tools"`
	Unverified []string      `json:"unverified_identity,omitempty"`
	// Inconclusive lists what the diff could not judge (catalogue codes):
	// NewListPartial when pages of the new list went unseen. It never
	// lets the decision be allow.
	Inconclusive []string `json:"inconclusive"`
	// Surface is the comparison of the model-facing surfaces the two
	// sides pin (a *surface.Result, set by the caller: this package
	// compares tools only); nil when it was not made.
	Surface  any      `json:"surface,omitempty"`
	Warnings []string `json:"warnings"`
	ExitCode int      `json:"exit_code"`
}

// ToolVerdict is the decision on one tool of either list.
type ToolVerdict struct {
	Name string `json:"name"`
	// Status is unchanged, changed, added or removed.
	Status   string `json:"status"`
	Changes  int    `json:"changes"`
	Severity string `json:"severity"` // the most severe of its changes
	// NotationOnly: every change of the tool is notation (its schemas are
	// spelled differently and accept the same instances): it needs no
	// review, under every profile.
	NotationOnly bool     `json:"notation_only"`
	Decision     string   `json:"decision"`
	Reason       string   `json:"reason,omitempty"`
	DeniedBy     []string `json:"denied_by,omitempty"`
}

// Tool returns the verdict on the named tool (nil: neither list has it).
func (r *Report) Tool(name string) *ToolVerdict {
	for i := range r.Tools {
		if r.Tools[i].Name == name {
			return &r.Tools[i]
		}
	}
	return nil
}

// identityKinds are the changes of the server half of the identity tuple:
// named after the server, not a tool.
var identityKinds = map[string]bool{ServerEndpointRebound: true, ServerInstallMoved: true, ServerEnvChanged: true,
	PublisherKeyChanged: true, ServerVersionChanged: true, ServerNameChanged: true}

// ToolDecisions decides every tool of two lists, by name: the tools of
// the new list in its order, then those only the old list has. A tool
// whose projection is unchanged and has no change record is allowed;
// every other tool is decided by DecideTool on its change records.
func ToolDecisions(old, new []manifest.Tool, cs []Change, p *DecisionProfile) []ToolVerdict {
	by := map[string][]Change{}
	for _, c := range cs {
		if identityKinds[c.Kind] {
			continue
		}
		by[c.Name] = append(by[c.Name], c)
	}
	oldBy := manifest.FirstByName(old)
	seen := make(map[string]bool, len(new))
	out := make([]ToolVerdict, 0, len(new)+len(old))
	decide := func(name, status string, changed bool) {
		g := by[name]
		v := ToolVerdict{Name: name, Status: status, Changes: len(g), NotationOnly: NotationOnly(p.Decisive(g))}
		for _, c := range g {
			if sevRank[c.Severity] > sevRank[v.Severity] {
				v.Severity = c.Severity
			}
		}
		v.Decision, v.Reason, v.DeniedBy = p.DecideTool(changed, g)
		out = append(out, v)
	}
	for i := range new {
		n := &new[i]
		if seen[n.Name] {
			continue
		}
		seen[n.Name] = true
		o := oldBy[n.Name]
		switch {
		case o == nil:
			decide(n.Name, StatusAdded, true)
		case sameProjection(o, n):
			decide(n.Name, StatusUnchanged, false)
		default:
			decide(n.Name, StatusChanged, true)
		}
	}
	for i := range old {
		if !seen[old[i].Name] {
			seen[old[i].Name] = true
			decide(old[i].Name, StatusRemoved, true)
		}
	}
	return out
}

// Statuses of a tool between two lists.
const (
	StatusUnchanged = "unchanged"
	StatusChanged   = "changed"
	StatusAdded     = "added"
	StatusRemoved   = "removed"
)

// sameProjection compares the tools' digests, the SHA-256 of their
// projections' preimages: computed once when a tool is read, not built
// again for each comparison.
func sameProjection(a, b *manifest.Tool) bool {
	return a.ToolDigest() == b.ToolDigest()
}

// Input is one side of a comparison.
type Input struct {
	Side
	Tools []manifest.Tool
}

// Compare diffs two tool lists (and identities, where both sides know
// them) and decides with the profile (nil: ReviewProfile).
func Compare(old, new Input, profile *DecisionProfile, opt ToolOptions) *Report {
	if profile == nil {
		profile = ReviewProfile
	}
	r := &Report{Schema: ReportSchemaID, Profile: profile.Name, Old: old.Side, New: new.Side, DeniedBy: []string{}, Warnings: []string{}, Inconclusive: []string{}}
	changes := DiffTools(old.Tools, new.Tools, opt)
	if old.Identity != nil && new.Identity != nil {
		iv := JudgeIdentity(*old.Identity, *new.Identity, profile)
		ic, unverified := iv.Changes, iv.Unverified
		for i := range ic {
			ic[i].Name = new.ServerID
		}
		changes = append(ic, changes...)
		r.Unverified = unverified
	}
	if new.Completeness != string(manifest.Complete) {
		msg := fmt.Sprintf("the new tool list is %s: a tool reported removed may be on an unobserved page", orUnknown(new.Completeness))
		if new.Completeness == string(manifest.Partial) {
			msg += ", and tools on the pages that were not seen cannot be judged"
		}
		for i := range changes {
			if changes[i].Kind == ToolRemoved {
				changes[i].Note = "the new list is incomplete"
			}
		}
		r.Warnings = append(r.Warnings, msg)
	}
	if old.Completeness != string(manifest.Complete) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the old tool list is %s: a tool reported added may have been on an unobserved page", orUnknown(old.Completeness)))
	}
	// Numbers the canonical form misstates: a change to them is seen only
	// where both sides hold a number at the same pointer.
	r.Warnings = append(r.Warnings, manifest.PrecisionWarnings("old", old.Tools)...)
	r.Warnings = append(r.Warnings, manifest.PrecisionWarnings("new", new.Tools)...)
	if changes == nil {
		changes = []Change{}
	}
	r.Changes = changes
	r.Tools = ToolDecisions(old.Tools, new.Tools, changes, profile)
	var denied []string
	r.Decision, r.DecisionReason, denied = profile.DecideWithReason(changes)
	// Changes that need no review (notation, changes that validate the
	// same) or that the profile takes as information are not a change to
	// review.
	changed := len(changes) > 0 && r.Decision != Allow
	if denied != nil {
		r.DeniedBy = denied
	}
	if new.Completeness == string(manifest.Partial) {
		// Pages went unseen: a tool on them (a privileged one past a page
		// cap, say) cannot be judged, so the diff never allows. The
		// review profile asks for review; fail-closed denies.
		r.Inconclusive = append(r.Inconclusive, NewListPartial)
		if _, deny := profile.Deny[NewListPartial]; deny {
			r.Decision = Deny
			r.DeniedBy = append(r.DeniedBy, NewListPartial)
			sort.Strings(r.DeniedBy)
		} else if r.Decision == Allow {
			r.Decision = Review
		}
		r.DecisionReason = ""
	}
	switch {
	case changed:
		r.ExitCode = ExitChanged
	case len(r.Inconclusive) > 0:
		r.ExitCode = ExitInconclusive
	}
	return r
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// ParamPath turns a pointer into a schema into a dotted parameter path
// ("/inputSchema/properties/a/properties/b" → "a.b"); "" when the pointer
// names no parameter.
func ParamPath(ptr string) string {
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var out []string
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "patternProperties", "dependentSchemas":
			if i+1 < len(segs) {
				tok, _ := jcs.UnescapePointerToken(segs[i+1])
				out = append(out, tok)
				i++
			}
		case "items", "additionalItems", "prefixItems":
			out = append(out, "[]")
		}
	}
	return strings.ReplaceAll(strings.Join(out, "."), ".[]", "[]")
}

func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// Sentence renders a change as one line a person can read, for example
// "gained optional parameter callback_url (string): widening". quote is
// applied to every server-controlled string (parameter names, details).
func Sentence(c Change, quote func(string) string) string {
	param := ParamPath(c.Pointer)
	output := IsOutput(c)
	p := func() string { return subject(c.Pointer, param, output, quote) }
	detail := ""
	if c.parts != nil {
		// A detail composed of mcpdrift's words and a server's values:
		// each value quoted, once, in the reader's format.
		var b strings.Builder
		for i, part := range *c.parts {
			if i%2 == 1 {
				part = quote(part)
			}
			b.WriteString(part)
		}
		detail = " (" + b.String() + ")"
	} else if c.Detail != "" {
		d := c.Detail
		// Parameter records carry "NAME (TYPE)"; the name is already said.
		if last := lastSegment(param); last != "" && strings.HasPrefix(d, last+" (") && strings.HasSuffix(d, ")") {
			d = d[len(last)+2 : len(d)-1]
		}
		detail = " (" + quote(d) + ")"
	}
	var s string
	switch c.Kind {
	case ParamAddedOptional:
		s = "gained optional " + p() + detail
	case ParamAddedRequired:
		s = "gained required " + p() + detail
	case ParamRemoved:
		if c.Direction == Widening {
			s = "no longer describes " + p() + detail
		} else {
			s = "lost " + p() + detail
		}
	case RequiredDropped:
		s = p() + " is no longer required"
	case RequiredAdded:
		s = p() + " is now required"
	case TypeWidened, TypeNarrowed, TypeChanged:
		s = "type of " + p() + " " + strings.TrimPrefix(c.Kind, "type_") + detail
	case EnumWidened, EnumNarrowed:
		s = "enum of " + p() + " " + strings.TrimPrefix(c.Kind, "enum_") + detail
	case ConstChanged:
		s = "constant of " + p() + " changed" + detail
	case AdditionalPropertiesLoosened, AdditionalPropertiesTightened:
		s = "additionalProperties of " + p() + " " + strings.TrimPrefix(c.Kind, "additional_properties_") + detail
	case ConstraintLoosened, ConstraintTightened:
		s = "constraint on " + p() + " " + strings.TrimPrefix(c.Kind, "constraint_") + detail
	case CompositionWidened, CompositionNarrowed:
		at := "at " + quote(c.Pointer)
		if output {
			at = "of " + p()
		}
		s = "composition " + at + " " + strings.TrimPrefix(c.Kind, "composition_") + detail
	case ExternalRefIntroduced:
		s = "now refers to an external document at " + quote(c.Pointer) + detail
	case ExternalRefPresent:
		s = "refers to an external document at " + quote(c.Pointer)
		if strings.HasSuffix(c.Detail, refNotPinned) {
			s += ", not pinned in the lock (mcpdrift lock pin-ref)"
		}
	case ExternalRefPinned:
		s = "refers to an external document pinned by hash at " + quote(c.Pointer) + detail
	case ExternalRefDocumentChanged:
		s = "the external document referred to at " + quote(c.Pointer) + " is not the one pinned" + detail
	case ExternalRefUnverified:
		s = "the pinned external document referred to at " + quote(c.Pointer) + " could not be verified" + detail
	case DescriptionChanged, TitleChanged:
		s = textSentence(c, p, quote)
	case SchemaDefaultChanged:
		s = "default of " + p() + " " + lastWord(c.Detail)
	case SchemaDialectChanged:
		s = "dialect of the schema at " + quote(strings.TrimSuffix(c.Pointer, "/$schema")) + " changed" + detail
	case ToolMemberChanged:
		s = memberSentence(c, quote)
	case NumberBeyondPrecisionChanged:
		s = "number at " + quote(c.Pointer) + " changed beyond float64 precision" + detail
	case SchemaNotationChanged:
		s = "the schema at " + quote(c.Pointer) + " is spelled differently but accepts the same instances"
	case SchemaDriftStableDescription:
		s = "input schema changed while the description stayed identical"
	case AnnotationHintWeakened, AnnotationHintStrengthened:
		s = "hint " + strings.TrimPrefix(c.Kind, "annotation_hint_") + ": " + quote(c.Detail)
	case ToolAdded, ToolRemoved, ToolRenameSuspected, ToolDuplicateName, ToolNameUnsafe, ToolNamesAmbiguous:
		s = strings.ReplaceAll(c.Kind, "_", " ")
		if c.Detail != "" {
			s += ": " + quote(c.Detail)
		}
	default:
		s = strings.ReplaceAll(c.Kind, "_", " ") + " at " + quote(c.Pointer) + detail
	}
	if c.Direction != Neutral && c.Direction != "" {
		s += ": " + string(c.Direction)
		if output && c.Kind != OutputSchemaRemoved {
			s += outputGrade[c.Direction]
		}
	}
	if c.Note != "" {
		s += " [" + quote(c.Note) + "]"
	}
	if c.Info != "" {
		s += " [information: " + c.Info + "]"
	}
	if c.SeverityRaised != nil {
		s += " [" + c.SeverityRaised.Sentence(quote) + "]"
	}
	return s
}

// outputGrade says what a change of the output schema means for the agent
// that reads the result.
var outputGrade = map[Direction]string{
	Widening:  " (the agent may now receive it unannounced)",
	Narrowing: " (harmless: the tool returns less)",
}

// subject names what a schema change is about: a parameter, a field of
// the output, or the schema at its pointer.
func subject(ptr, param string, output bool, quote func(string) string) string {
	switch {
	case output && param != "":
		return "output field " + quote(param)
	case output:
		return "the output schema at " + quote(ptr)
	case param == "":
		return "the schema at " + quote(ptr)
	}
	return "parameter " + quote(param)
}

// textSentence says a description or title changed: the tool's own
// ("description changed: ..."), or one inside a schema, which the planner
// reads as it reads the tool's ("description of parameter "path" changed:
// ..."). The detail is a word diff, or what happened to the text.
func textSentence(c Change, p func() string, quote func(string) string) string {
	k := strings.TrimSuffix(c.Kind, "_changed")
	detail := ": " + quote(c.Detail)
	if c.Detail == "" {
		detail = "" // a reader that shows the word diff on its own
	}
	switch c.Pointer {
	case "/description", "/title", "/annotations/title":
		return k + " changed" + detail
	}
	return k + " of " + p() + " changed" + detail
}

// memberSentence says a member outside the digest projection changed.
func memberSentence(c Change, quote func(string) string) string {
	m, _ := jcs.UnescapePointerToken(strings.TrimPrefix(c.Pointer, "/"))
	if m == "title" {
		return "title changed (outside the digest projection: information, it decides nothing): " + quote(c.Detail)
	}
	return "tool member " + quote(m) + " changed (outside the digest projection: information, it decides nothing)"
}

// lastWord is the last word of a detail ("default added" → "added").
func lastWord(s string) string {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}

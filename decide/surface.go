package decide

import (
	"bytes"
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
)

// The model-facing surface in the gateway (docs/surface.md): a served
// prompt, resource template or resource is served only when it is
// approved and unchanged, as the pinned bytes; prompts/get of any other
// is refused; instructions that are not the approved ones are replaced by
// them (or dropped), and under a profile that denies the change the whole
// server is withheld.

// Reason codes of the surface's decisions (catalogued).
const (
	ReasonSurfaceUnchanged      = "surface_unchanged"
	ReasonSurfaceAdded          = "surface_not_in_baseline"
	ReasonSurfaceChanged        = "surface_changed"
	ReasonSurfaceAmbiguous      = "surface_ambiguous"
	ReasonSurfaceIncomplete     = "surface_list_incomplete"
	ReasonSurfaceNotPinned      = "surface_not_pinned"
	ReasonPromptHidden          = "prompt_get_hidden"
	ReasonPromptUnknown         = "prompt_get_unknown"
	ReasonInstructionsUnchanged = "instructions_unchanged"
	ReasonInstructionsReplaced  = "instructions_replaced"
	ReasonInstructionsRemoved   = "instructions_removed"
	ReasonInstructionsChanged   = "server_instructions_changed"
)

// SurfaceItem is the decision on one served prompt, template or resource.
type SurfaceItem struct {
	Kind   surface.Kind `json:"kind"`
	Key    string       `json:"key"`
	Serve  bool         `json:"serve"`
	Reason string       `json:"reason"`
	Digest string       `json:"digest"`
	Pinned string       `json:"pinned_digest,omitempty"`
	// Note says why an ambiguous item is not served (escaped).
	Note string `json:"note,omitempty"`
}

// SurfaceList is the decision on one served list of the surface.
type SurfaceList struct {
	Kind surface.Kind `json:"kind"`
	// PassThrough: the baseline pins no such list (no surface at all, or
	// resources not requested): the list is served as the upstream sends
	// it, and Reason is surface_not_pinned.
	PassThrough bool `json:"pass_through"`
	// Withheld: the upstream's list could not be read whole; nothing of it
	// is served. Reason and Detail say why.
	Withheld bool          `json:"withheld"`
	Reason   string        `json:"reason,omitempty"`
	Detail   string        `json:"detail,omitempty"`
	Items    []SurfaceItem `json:"items"`

	serve []surface.Item   // the pinned items served, in served order
	index map[string]int   // key → index in Items (first)
	base  *surface.Surface // the pinned surface
}

// surfaceMembers are the members of each kind's object clients read by
// name (ambiguousItem).
var surfaceMembers = map[surface.Kind]map[string]string{
	surface.Prompt:   manifest.MemberKeys("name", "title", "description", "arguments", "icons", "_meta"),
	surface.Template: manifest.MemberKeys("uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons", "_meta"),
	surface.Resource: manifest.MemberKeys("uri", "name", "title", "description", "mimeType", "annotations", "size", "icons", "_meta"),
}

// argumentMembers are the members of a prompt argument clients read by
// name.
var argumentMembers = manifest.MemberKeys("name", "title", "description", "required", "_meta")

// ambiguousItem is manifest.AmbiguousObject of an item of kind k, and of each of a
// prompt's argument objects: an argument's "Description" beside its
// "description" is outside the projection as much as the prompt's own.
func ambiguousItem(k surface.Kind, v jcs.Value) string {
	if msg := manifest.AmbiguousObject(v, surfaceMembers[k]); msg != "" || k != surface.Prompt {
		return msg
	}
	args, ok := v.Get("arguments")
	if !ok || args.Kind() != jcs.Array {
		return ""
	}
	for i := range args.Len() {
		if msg := manifest.AmbiguousObject(args.Index(i), argumentMembers); msg != "" {
			return "its argument " + strconv.Itoa(i) + ": " + msg
		}
	}
	return ""
}

// DecideSurfaceList decides each item of a served list against the
// baseline's surface.
func DecideSurfaceList(b *Baseline, served *surface.List) *SurfaceList {
	k := served.Kind
	l := &SurfaceList{Kind: k, Items: []SurfaceItem{}, index: map[string]int{}}
	if b.Surface == nil || b.Surface.List(k).State == surface.NotRequested {
		l.PassThrough, l.Reason = true, ReasonSurfaceNotPinned
		return l
	}
	l.base = b.Surface
	if served.State != surface.Observed || served.Completeness != surface.Complete || len(served.Invalid) > 0 {
		l.Withheld, l.Reason = true, ReasonSurfaceIncomplete
		l.Detail = "the upstream's " + k.Method() + " could not be read whole"
		switch {
		case served.Reason != "":
			l.Detail += ": " + safetext.Inert(served.Reason)
		case len(served.Invalid) > 0:
			l.Detail += ": " + safetext.Inert(served.Invalid[0])
		}
		return l
	}
	pinned := b.Surface.List(k)
	dups := map[string]bool{}
	for _, d := range served.Duplicates() {
		dups[d] = true
	}
	for _, it := range served.Items {
		d := SurfaceItem{Kind: k, Key: it.Key, Digest: it.Digest}
		var old *surface.Item
		if pinned.State == surface.Observed {
			old = pinned.Find(it.Key)
		}
		if old != nil {
			d.Pinned = old.Digest
		}
		switch {
		case dups[it.Key]:
			d.Reason, d.Note = ReasonSurfaceAmbiguous, it.Label()+" is listed more than once"
		case old == nil:
			d.Reason = ReasonSurfaceAdded
		case old.Digest != it.Digest:
			d.Reason = ReasonSurfaceChanged
		default:
			if msg := ambiguousItem(k, old.Value); msg != "" {
				d.Reason, d.Note = ReasonSurfaceAmbiguous, it.Label()+" is not served: "+msg
				break
			}
			d.Serve, d.Reason = true, ReasonSurfaceUnchanged
			l.serve = append(l.serve, *old)
		}
		if _, seen := l.index[it.Key]; !seen {
			l.index[it.Key] = len(l.Items)
		}
		l.Items = append(l.Items, d)
	}
	return l
}

// Served are the items to serve, in the upstream's order: each the
// pinned item (its bytes as approved).
func (l *SurfaceList) Served() []surface.Item { return l.serve }

// Get decides a prompts/get (resources/read) of the item named key:
// allowed only for an item the list serves, by its exact key; reason is
// why not (prompt_get_hidden for an item the upstream serves and the
// gateway hides, prompt_get_unknown for one it does not serve at all,
// surface_list_incomplete when the list was withheld).
func (l *SurfaceList) Get(key string) (allowed bool, reason string) {
	switch {
	case l.PassThrough:
		return true, ReasonSurfaceNotPinned
	case l.Withheld:
		return false, ReasonSurfaceIncomplete
	}
	i, ok := l.index[key]
	switch {
	case !ok:
		return false, ReasonPromptUnknown
	case !l.Items[i].Serve:
		return false, ReasonPromptHidden
	}
	return true, ReasonSurfaceUnchanged
}

// InstructionsDecision is the decision on the instructions of an
// initialize or server/discover result.
type InstructionsDecision struct {
	// Reason: instructions_unchanged (forward as they came),
	// instructions_replaced (serve Value in their place),
	// instructions_removed (serve the result without them), or
	// surface_not_pinned (the baseline pins none: forward).
	Reason string
	// Value is the approved instructions (instructions_replaced).
	Value jcs.Value
	// Withhold: the profile denies the change (fail-closed): the whole
	// server is withheld.
	Withhold bool
	// Served and Pinned are the digests ("" when absent).
	Served, Pinned string
}

// Changed reports whether the served instructions are not the approved
// ones (replaced or removed).
func (d InstructionsDecision) Changed() bool {
	return d.Reason == ReasonInstructionsReplaced || d.Reason == ReasonInstructionsRemoved
}

// DecideInstructions decides the instructions a result carries (present
// false: it has none) against the baseline's surface. Instructions not
// pinned as observed count as none approved.
// Ambiguous instructions (surface.ReadInstr) cannot be taken for the
// approved ones whatever their digest.
func DecideInstructions(b *Baseline, served surface.Instr, prof *schemadiff.DecisionProfile) InstructionsDecision {
	d := InstructionsDecision{Served: served.Digest}
	if b.Surface == nil {
		d.Reason = ReasonSurfaceNotPinned
		return d
	}
	p := b.Surface.Instructions
	approved := p.State == surface.Observed && p.Present
	if approved {
		d.Pinned = p.Digest
	}
	switch {
	case !served.Ambiguous && (approved && served.Present && served.Digest == p.Digest || !approved && !served.Present):
		d.Reason = ReasonInstructionsUnchanged
		return d
	case approved:
		d.Reason, d.Value = ReasonInstructionsReplaced, p.Value
	default:
		d.Reason = ReasonInstructionsRemoved
	}
	if prof == nil {
		prof = schemadiff.ReviewProfile
	}
	_, d.Withhold = prof.Deny[surface.CodeInstructionsChanged]
	return d
}

// RewriteInstructions is result (a JSON object's bytes) with its
// instructions member's value replaced by the approved one, or the member
// left out, as d says; every other member's bytes as they came, in their
// order. A member a decoder would take for "instructions" (another case,
// Go's encoding/json matches names without regard to case) is left out
// too: the approved instructions are the only ones served. ok is false
// when there is nothing to rewrite (d not a change, result not an
// object).
func RewriteInstructions(result jcs.Value, d InstructionsDecision) (out []byte, ok bool) {
	if !d.Changed() || result.Kind() != jcs.Object {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for i := range result.Len() {
		k, v := result.Member(i)
		if safetext.MemberKey(k.Str()) == safetext.MemberKey("instructions") {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(k.Raw())
		b.WriteByte(':')
		b.Write(v.Raw())
		n++
	}
	if d.Reason == ReasonInstructionsReplaced {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"instructions":`)
		b.Write(d.Value.Raw())
	}
	b.WriteByte('}')
	return b.Bytes(), true
}

// DecideResultInstructions reads the instructions of an initialize or
// server/discover result and decides them (DecideInstructions). A member
// that a case-insensitive decoder takes for "instructions" beside or
// instead of it ("Instructions": Go's encoding/json reads the last match)
// makes them changed whatever their digest, so that the rewrite serves
// the approved instructions alone. It returns what was served, too.
func DecideResultInstructions(b *Baseline, result jcs.Value, prof *schemadiff.DecisionProfile) (surface.Instr, InstructionsDecision) {
	if result.Kind() != jcs.Object {
		return surface.Instr{State: surface.NotObserved, Reason: "the result is not an object"}, InstructionsDecision{Reason: ReasonSurfaceNotPinned}
	}
	in := surface.ReadInstr(result, 0)
	return in, DecideInstructions(b, in, prof)
}

// Package decide is the decision core of the runtime gateway: given the
// pinned baseline (the tool definitions a snapshot holds, and its identity
// tuple), what the upstream serves now, and a decision profile, it says
// which tools may be served and which calls may go through, and why. It is
// pure — no I/O, no clock — so tests drive it without sockets, and the
// proxy only asks it.
//
// The rules (issue 10 and the structural-escalation note):
//
//   - A list that was not observed completely is withheld whole: fail
//     closed, never serve part of a list as if it were all of it.
//   - The identity tuple that counts is the endpoint and the publisher key;
//     under fail-closed also the pinned server name and version. A mismatch
//     withholds the whole server. Under review a changed name or version is
//     said (Notes) and each tool is judged by its digest.
//   - A tool is served only when its decision is allow: unchanged (the same
//     tool digest as pinned), or changed in notation only. Added, changed
//     and denied tools are hidden; removed tools are never advertised.
//   - A call is allowed only for a served tool, by its exact name, with
//     arguments that the PINNED inputSchema accepts (and, strictly, with no
//     property the pinned schema does not declare). A refusal names the
//     JSON pointer and the constraint, never the value.
package decide

import (
	"fmt"
	"strings"
	"sync"

	"github.com/mcpdrift/mcpdrift/classify"
	"github.com/mcpdrift/mcpdrift/internal/par"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
)

// Decisions (the same words as schemadiff's).
const (
	Allow  = schemadiff.Allow
	Review = schemadiff.Review
	Deny   = schemadiff.Deny
)

// Reason codes of list and call decisions (catalogued).
const (
	ReasonUnchanged        = "tool_unchanged"
	ReasonNotationOnly     = "tool_changed_notation_only"
	ReasonChanged          = "tool_changed_needs_review"
	ReasonDenied           = "tool_change_denied"
	ReasonAdded            = "tool_not_in_baseline"
	ReasonRemoved          = "tool_no_longer_served"
	ReasonParamHeader      = "tool_param_header_invalid"
	ReasonToolAmbiguous    = "tool_ambiguous"
	ReasonNamesCollide     = "tool_names_collide"
	ReasonListIncomplete   = "server_list_incomplete"
	ReasonIdentityMismatch = "server_identity_mismatch"
	ReasonBaselineInvalid  = "server_baseline_invalid"
	ReasonUnknownTool      = "call_unknown_tool"
	ReasonHiddenTool       = "call_hidden_tool"
	ReasonWithheld         = "call_server_withheld"
	ReasonInDoubt          = "call_approval_in_doubt"
	ReasonBadArguments     = "call_arguments_invalid"
	ReasonUndeclaredArg    = "call_argument_undeclared"
	ReasonAmbiguousArg     = "call_argument_ambiguous"
	ReasonSchemaUnusable   = "call_schema_unusable"
)

// Baseline is what was approved: the pinned tool definitions with their
// identity tuple.
type Baseline struct {
	ServerID string
	Identity manifest.Identity
	Tools    []manifest.Tool
	// PinnedRefs and VerifiedRefs are the trust record of external
	// documents that goes with these tools (a lock's refs; see
	// Options.PinnedRefs), for a caller that keeps a baseline and replaces
	// it whole — the gateway's Reload — so that the pins travel with the
	// approvals. Set them before the baseline is used; Options.PinnedRefs,
	// when set, wins.
	PinnedRefs   map[string]string
	VerifiedRefs map[string]string
	// NameAcknowledged: the operator acknowledged a colliding tool name
	// (nil: none; set before use). See namesCollide.
	NameAcknowledged func(name string) bool
	// Surface is the approved model-facing surface (instructions,
	// prompts, resource templates, resources; surface.go), set before
	// use; nil: the baseline pins none, and the gateway passes it
	// through.
	Surface *surface.Surface

	byName   map[string]*manifest.Tool
	digests  map[string]string
	invalid  string
	problems []manifest.BaselineProblem
	compiled sync.Map // name → *compiledSchema
}

// NewBaseline makes a baseline of the pinned tools alone (a snapshot
// given as the baseline). Its validity is manifest.CheckBaseline's, the
// one check gate makes: here, no tool named twice. A baseline that fails
// is still returned, and every list decided against it is withheld with
// the reason (the gateway then serves nothing and says why).
func NewBaseline(serverID string, id manifest.Identity, tools []manifest.Tool) *Baseline {
	return newBaseline(serverID, id, tools, manifest.CheckBaseline(nil, &manifest.Definitions{Tools: tools, From: "the baseline"}))
}

// NewDeclaredBaseline is NewBaseline of the definitions pinned with the
// declared baseline d (its snapshot, a lock entry's definitions), valid
// when manifest.CheckBaseline(d, defs) finds nothing: d's entries
// recompute to its manifest_digest, no name is listed twice, and the
// definitions are its entries one for one.
func NewDeclaredBaseline(serverID string, id manifest.Identity, d *manifest.Declared, defs *manifest.Definitions) *Baseline {
	return newBaseline(serverID, id, defs.Tools, manifest.CheckBaseline(d, defs))
}

// InvalidBaseline is a baseline that withholds the server with why (escaped
// text): what a caller has when the baseline could not be read at all,
// such as a reload whose files no longer parse.
func InvalidBaseline(serverID, why string) *Baseline {
	return newBaseline(serverID, manifest.Identity{}, nil, []manifest.BaselineProblem{{Code: ReasonBaselineInvalid, Message: why}})
}

func newBaseline(serverID string, id manifest.Identity, tools []manifest.Tool, problems []manifest.BaselineProblem) *Baseline {
	b := &Baseline{ServerID: serverID, Identity: id, Tools: tools, problems: problems,
		byName: make(map[string]*manifest.Tool, len(tools)), digests: make(map[string]string, len(tools))}
	if len(problems) > 0 {
		why := make([]string, len(problems))
		for i, p := range problems {
			why[i] = p.Message
		}
		b.invalid = strings.Join(why, "; ")
	}
	for i := range tools {
		t := &tools[i]
		if _, dup := b.byName[t.Name]; dup {
			continue // an invalid baseline: the first stands, nothing is served
		}
		b.byName[t.Name] = t
		b.digests[t.Name] = toolDigest(t)
	}
	return b
}

// Problems are the codes and sentences of what makes the baseline
// invalid (none when it is valid): manifest.CheckBaseline's, or
// server_baseline_invalid for one that could not be read.
func (b *Baseline) Problems() []manifest.BaselineProblem { return b.problems }

// Invalid says why the baseline cannot be used ("" when it can).
func (b *Baseline) Invalid() string { return b.invalid }

func toolDigest(t *manifest.Tool) string { return t.ToolDigest() }

// Served is one observation of the upstream's tools/list.
type Served struct {
	Tools        []manifest.Tool
	Completeness manifest.Completeness
	// Identity is the upstream as the gateway knows it: its endpoint (as
	// recorded), publisher key, and the name and version it reported.
	Identity manifest.Identity
	// Instructions are those of the upstream's initialize or
	// server/discover result (nil: not known). Under a profile that denies
	// their change (fail-closed), instructions that are not the approved
	// ones withhold the server (server_instructions_changed).
	Instructions *surface.Instr
}

// Options tune a decision.
type Options struct {
	Profile    *schemadiff.DecisionProfile // nil: review
	Classifier *classify.Classifier        // nil: built-in

	// PinnedRefs is the trust record of external documents: document URL
	// (schemadiff.RefDocument's form, as the lock stores it) → the digest
	// pinned ("sha256:…"). A lock's refs (lock.Server.RefPins); the
	// gateway with --lock passes them too.
	//
	// nil: no trust record (diff, drift, a snapshot): external $refs are
	// judged as they always were — a change that introduces or keeps one
	// is denied under fail-closed, and a tool whose digest did not change
	// is not judged again.
	//
	// Not nil (it may be empty): every external $ref of a changed or added
	// tool is judged against it (external_ref_pinned when its document is
	// pinned, and verified when VerifiedRefs is set; else
	// external_ref_introduced or external_ref_present, denied under
	// fail-closed). A tool whose digest did not change is judged on its
	// external $refs alone: a document that changed or could not be
	// verified makes it reviewable (denied under fail-closed), and under
	// fail-closed so does an external $ref that is not pinned; otherwise
	// it stays allowed as approved.
	PinnedRefs map[string]string
	// VerifiedRefs, when not nil, says verification was asked (lock check
	// --verify-refs, proxy --verify-refs): document URL → the digest of
	// the document fetched now (reffetch). A pinned URL absent from it, or
	// mapped to "", could not be fetched (external_ref_unverified); one
	// whose digest differs is external_ref_document_changed, the URL and
	// both digests in the detail. Ignored without PinnedRefs.
	VerifiedRefs map[string]string
	// HTTPModern: the list was served over the 2026-07-28 Streamable HTTP
	// transport, whose clients MUST exclude a tool whose x-mcp-header
	// annotations break its rules (manifest.Tool.ParamHeaderProblem). In
	// a List such a tool is not served, whatever its approval
	// (tool_param_header_invalid), and a note says why: the gateway is
	// such a client, and its downstream's own client would drop it too.
	HTTPModern bool
}

// refPins is the trust record of opt (nil without one).
func (opt Options) refPins() *schemadiff.RefPins {
	if opt.PinnedRefs == nil {
		return nil
	}
	return &schemadiff.RefPins{Pinned: opt.PinnedRefs, Verified: opt.VerifiedRefs}
}

// refDecision judges the external $refs of a tool whose digest did not
// change: the records that count (a changed or unverified document; an
// unpinned reference when the profile denies it), nil when none does.
func refDecision(t *manifest.Tool, pins *schemadiff.RefPins, prof *schemadiff.DecisionProfile) []schemadiff.Change {
	if pins == nil {
		return nil
	}
	var out []schemadiff.Change
	for _, c := range schemadiff.RefChanges(t, pins) {
		switch c.Kind {
		case schemadiff.ExternalRefDocumentChanged, schemadiff.ExternalRefUnverified:
			out = append(out, c)
		case schemadiff.ExternalRefPresent, schemadiff.ExternalRefIntroduced:
			if _, denied := prof.Deny[c.Kind]; denied {
				out = append(out, c)
			}
		}
	}
	return out
}

// Tool is the decision on one served tool.
type Tool struct {
	Name       string   `json:"name"`
	Decision   string   `json:"decision"`
	Serve      bool     `json:"serve"`
	Reason     string   `json:"reason"`
	DeniedBy   []string `json:"denied_by,omitempty"`
	Digest     string   `json:"tool_digest"`
	Pinned     string   `json:"pinned_digest,omitempty"`
	Privileged bool     `json:"privileged"`
	// Fields are the fields whose field digests changed (description,
	// input_schema, output_schema, annotations): the gate's attribution.
	Fields  []string            `json:"fields,omitempty"`
	Changes []schemadiff.Change `json:"changes,omitempty"`
	// Removed: a pinned tool no longer served (DecideTools only; a List
	// names these in Removed).
	Removed bool `json:"removed,omitempty"`

	served *manifest.Tool
}

// List is the decision on one served list.
type List struct {
	// Withheld: the whole server is withheld (nothing served, every call
	// refused); Reason says why.
	Withheld bool   `json:"withheld"`
	Reason   string `json:"reason,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Tools has one entry per served tool, in served order (empty when
	// the server is withheld before tools are judged).
	Tools []Tool `json:"tools"`
	// Removed are pinned tools the upstream no longer serves.
	Removed []string `json:"removed"`
	// Notes say what was learnt without changing a decision (a changed
	// server version under review).
	Notes []string `json:"notes"`

	baseline *Baseline
	served   map[string]*manifest.Tool // name → served tool, served ones only
	index    map[string]int            // name → index in Tools
}

// DecideList decides which served tools may be served.
func DecideList(b *Baseline, s *Served, opt Options) *List {
	prof := opt.Profile
	if prof == nil {
		prof = schemadiff.ReviewProfile
	}
	if opt.Classifier == nil {
		opt.Classifier = classify.Default()
	}
	l := &List{Tools: []Tool{}, Removed: []string{}, Notes: []string{}, baseline: b, served: make(map[string]*manifest.Tool, len(s.Tools)), index: make(map[string]int, len(s.Tools))}
	if reason, detail := withheldBy(b, s, prof, l); reason != "" {
		l.Withheld, l.Reason, l.Detail = true, reason, detail
		return l
	}
	collide := namesCollide(b, s.Tools)
	for _, d := range decideTools(b, s.Tools, prof, opt) {
		if msg, ok := collide[d.Name]; ok && d.Serve {
			d.Serve, d.Reason = false, ReasonNamesCollide
			l.Notes = append(l.Notes, "tool "+safetext.QuoteASCII(d.Name)+" is not served: "+msg)
		}
		if d.Removed {
			l.Removed = append(l.Removed, d.Name)
			continue
		}
		if d.Serve {
			if msg := d.served.Ambiguity(); msg != "" {
				d.Serve, d.Reason = false, ReasonToolAmbiguous
				l.Notes = append(l.Notes, "tool "+safetext.Quote(d.Name)+" is not served: "+msg)
			}
		}
		if d.Serve && opt.HTTPModern {
			if msg := d.served.ParamHeaderProblem(); msg != "" {
				d.Serve, d.Reason = false, ReasonParamHeader
				l.Notes = append(l.Notes, "tool "+safetext.Quote(d.Name)+" is not served: "+msg)
			}
		}
		if d.Serve {
			l.served[d.Name] = d.served
		}
		l.index[d.Name] = len(l.Tools)
		l.Tools = append(l.Tools, d)
	}
	return l
}

// Withheld is DecideList's whole-server rule alone: the reason and detail
// of the rule that withholds every tool of s against b (an invalid
// baseline, an incomplete list, an identity the baseline does not pin, a
// name served twice), or ok false when none does — for a caller that has
// the per-tool decisions already (DecideTools) and need not make them
// again.
func Withheld(b *Baseline, s *Served, opt Options) (reason, detail string, ok bool) {
	prof := opt.Profile
	if prof == nil {
		prof = schemadiff.ReviewProfile
	}
	reason, detail = withheldBy(b, s, prof, &List{})
	return reason, detail, reason != ""
}

// withheldBy is the whole-server rule that withholds s against b ("":
// none); notes of the identity check go to l.
func withheldBy(b *Baseline, s *Served, prof *schemadiff.DecisionProfile, l *List) (reason, detail string) {
	if b.invalid != "" {
		return ReasonBaselineInvalid, b.invalid
	}
	if s.Completeness != manifest.Complete {
		return ReasonListIncomplete, fmt.Sprintf("the upstream's tools/list was %s: pages went unseen, so nothing is served", orUnknown(string(s.Completeness)))
	}
	if why := identityMismatch(b.Identity, s.Identity, prof, l); why != "" {
		return ReasonIdentityMismatch, why
	}
	if s.Instructions != nil && DecideInstructions(b, *s.Instructions, prof).Withhold {
		return ReasonInstructionsChanged, "the upstream's instructions are not the approved ones, and the " + prof.Name + " profile withholds a server that changes what the model is told first"
	}
	seen := make(map[string]bool, len(s.Tools))
	for i := range s.Tools {
		if seen[s.Tools[i].Name] {
			// Which of two same-named tools a client calls is undefined.
			return ReasonBaselineInvalid, fmt.Sprintf("the upstream serves tool %s twice", safetext.Quote(s.Tools[i].Name))
		}
		seen[s.Tools[i].Name] = true
	}
	return "", ""
}

// DecideTools decides every tool of a baseline and a served list by name
// — the served tools in their order, then the pinned tools no longer
// served (Removed) — with no whole-server rule: the per-tool decisions
// drift reports, and the gateway applies. Each decision is the one of
// schemadiff.DecisionProfile.DecideTool, the same code diff uses.
func DecideTools(pinned, served []manifest.Tool, opt Options) []Tool {
	prof := opt.Profile
	if prof == nil {
		prof = schemadiff.ReviewProfile
	}
	if opt.Classifier == nil {
		opt.Classifier = classify.Default()
	}
	return decideTools(NewBaseline("", manifest.Identity{}, pinned), served, prof, opt)
}

// DecideAndDiff is DecideTools of old's and new's tools under opt, and
// beside it the structural changes between the two lists
// (schemadiff.Compare's, identities included when both sides carry one)
// under the same classifier and trust record. Lock check and gate with
// snapshots report both.
func DecideAndDiff(old, new schemadiff.Input, opt Options) ([]Tool, []schemadiff.Change) {
	if opt.Classifier == nil {
		opt.Classifier = classify.Default()
	}
	tools := DecideTools(old.Tools, new.Tools, opt)
	changes := schemadiff.Compare(old, new, nil, schemadiff.ToolOptions{Classifier: opt.Classifier, Schema: schemadiff.Options{Refs: opt.refPins()}}).Changes
	return tools, changes
}

func decideTools(b *Baseline, served []manifest.Tool, prof *schemadiff.DecisionProfile, opt Options) []Tool {
	if opt.PinnedRefs == nil && b.PinnedRefs != nil {
		opt.PinnedRefs, opt.VerifiedRefs = b.PinnedRefs, b.VerifiedRefs
	}
	pins := opt.refPins()
	out := make([]Tool, 0, len(served))
	seen := make(map[string]bool, len(served))
	// Classifying every name is most of deciding a large unchanged list:
	// it is spread over the CPUs (the classifier is read-only).
	privileged := make([]bool, len(served))
	par.Range(len(served), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			privileged[i] = opt.Classifier.Classify(served[i].Name).Privileged
		}
	})
	for i := range served {
		st := &served[i]
		if seen[st.Name] {
			continue
		}
		seen[st.Name] = true
		d := Tool{Name: st.Name, Digest: toolDigest(st), Privileged: privileged[i], served: st}
		pt := b.byName[st.Name]
		switch {
		case pt == nil:
			d.Reason = ReasonAdded
			// Graded as DiffTools grades an added tool: a privileged one
			// is HIGH, so the decision's severity is the diff's.
			sev, detail := "medium", "not in the approved baseline"
			if c := opt.Classifier.Classify(st.Name); c.Privileged {
				sev, detail = "high", "not in the approved baseline: a new privileged tool ("+c.ActionClass+")"
			}
			d.Changes = []schemadiff.Change{{Name: st.Name, Kind: schemadiff.ToolAdded, Direction: schemadiff.Widening, Severity: sev, Detail: detail}}
			if pins != nil {
				// Against a trust record, a new tool's external $refs are
				// judged as DiffTools judges them.
				d.Changes = append(d.Changes, schemadiff.IntroducedRefChanges(st, pins)...)
			}
			d.Decision, _, d.DeniedBy = prof.DecideTool(true, d.Changes)
		case b.digests[st.Name] == d.Digest:
			d.Pinned = d.Digest
			var cs []schemadiff.Change
			if pins != nil && pt.MayReferOut() {
				cs = refDecision(st, pins, prof)
			}
			if len(cs) > 0 {
				// The tool's bytes are as approved, but what its external
				// $refs name is not pinned, or no longer what was pinned.
				d.Changes = cs
				d.Decision, _, d.DeniedBy = prof.DecideTool(true, cs)
				if d.Decision == Deny {
					d.Reason = ReasonDenied
				} else {
					d.Decision, d.Reason = Review, ReasonChanged
				}
				break
			}
			d.Reason, d.Serve = ReasonUnchanged, true
			d.Decision, _, _ = prof.DecideTool(false, nil)
		default:
			d.Pinned = b.digests[st.Name]
			of, nf := pt.FieldDigests(), st.FieldDigests()
			for _, f := range manifest.FieldNames {
				if of.Get(f) != nf.Get(f) {
					d.Fields = append(d.Fields, f)
				}
			}
			d.Changes = schemadiff.DiffTool(pt, st, schemadiff.ToolOptions{Classifier: opt.Classifier, Schema: schemadiff.Options{Refs: pins}})
			var why string
			d.Decision, why, d.DeniedBy = prof.DecideTool(true, d.Changes)
			switch {
			case d.Decision == Deny:
				d.Reason = ReasonDenied
			case d.Decision == Allow && allowReasons[why] != "":
				d.Reason, d.Serve = allowReasons[why], true
			default:
				d.Decision, d.Reason = Review, ReasonChanged
			}
		}
		out = append(out, d)
	}
	for i := range b.Tools {
		pt := &b.Tools[i]
		if seen[pt.Name] {
			continue
		}
		seen[pt.Name] = true
		d := Tool{Name: pt.Name, Pinned: b.digests[pt.Name], Removed: true, Reason: ReasonRemoved,
			Privileged: opt.Classifier.Classify(pt.Name).Privileged}
		sev := "low"
		if d.Privileged {
			sev = "medium"
		}
		d.Changes = []schemadiff.Change{{Name: pt.Name, Kind: schemadiff.ToolRemoved, Direction: schemadiff.Narrowing, Severity: sev, Detail: "tool no longer served"}}
		d.Decision, _, d.DeniedBy = prof.DecideTool(true, d.Changes)
		out = append(out, d)
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// ServedTools returns the tools to advertise, in served order, each as
// it was approved: the pinned tool object, whose digest projection is
// the served one's (or, changed in notation only, validates the same),
// and whose other members — title, icons, _meta, execution, which no
// digest covers — are the approved ones, not what the upstream says of
// the tool now. A pinned tool held without its bytes is served as the
// upstream sent it.
func (l *List) ServedTools() []*manifest.Tool {
	out := make([]*manifest.Tool, 0, len(l.served))
	for _, d := range l.Tools {
		if !d.Serve {
			continue
		}
		t := l.served[d.Name]
		if pt := l.baseline.byName[d.Name]; pt != nil && len(pt.Raw()) > 0 {
			t = pt
		}
		out = append(out, t)
	}
	return out
}

// Decision returns the decision on a served tool by its exact name.
func (l *List) Decision(name string) (Tool, bool) {
	i, ok := l.index[name]
	if !ok {
		return Tool{}, false
	}
	return l.Tools[i], true
}

// Verdict is the decision as every report carries it (diff, drift, the
// gate with snapshots): the one entry shape.
func (d Tool) Verdict() schemadiff.ToolVerdict {
	v := schemadiff.ToolVerdict{Name: d.Name, Status: schemadiff.StatusChanged, Changes: len(d.Changes), Decision: d.Decision, DeniedBy: d.DeniedBy}
	switch d.Reason {
	case ReasonUnchanged:
		v.Status, v.Changes = schemadiff.StatusUnchanged, 0
	case ReasonAdded:
		v.Status = schemadiff.StatusAdded
	case ReasonRemoved:
		v.Status = schemadiff.StatusRemoved
	case ReasonNotationOnly, ReasonValidatesSame:
		v.NotationOnly, v.Reason = d.Reason == ReasonNotationOnly, verdictReasons[d.Reason]
	}
	for _, c := range d.Changes {
		if schemadiff.SeverityRank(c.Severity) > schemadiff.SeverityRank(v.Severity) {
			v.Severity = c.Severity
		}
	}
	return v
}

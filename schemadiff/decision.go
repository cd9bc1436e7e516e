package schemadiff

import (
	"fmt"
	"sort"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Decisions.
const (
	Allow  = "allow"
	Review = "review"
	Deny   = "deny"
)

// DecisionProfile maps change kinds to a decision: data, not conditionals.
// A kind in Deny denies; a kind in Info is information (reported, and
// never decides); any other change is reviewable; no change allows.
type DecisionProfile struct {
	Name        string
	Description string
	Deny        map[string]string // kind → why it is denied
	Info        map[string]string // kind → why it is information
}

// ReviewProfile (default): everything is reviewable, graded by severity,
// but for what the tools' digests already judge: the server's reported
// name and version, and a stdio server's install moved (the same
// package's binary at another path, with the same arguments).
var ReviewProfile = &DecisionProfile{Name: "review", Description: "every change is reviewable, graded by severity; the server's reported name and version and a moved install of the same package are information (each tool is judged by its digest)",
	// The kinds it takes as information are written down once, in the
	// catalogue (Entry.ReviewInfo).
	Info: catalog.ReviewInfoKinds()}

// FailClosedProfile is the decision boundary of
// structural-escalation-signals.md: fail closed on any identity-tuple
// component mismatch that signals escalation.
var FailClosedProfile = &DecisionProfile{
	Name:        "fail-closed",
	Description: "deny schema drift under a stable description, external $refs whose document is not pinned by hash in the lock (or whose pinned document changed), endpoint or publisher churn under a stable name, and new optional parameters (never re-consented here); review everything else",
	// The kinds it denies are written down once, in the catalogue
	// (Entry.FailClosed), and documented in docs/reason-codes.md.
	Deny: catalog.FailClosedKinds(),
}

var decisionProfiles = map[string]*DecisionProfile{ReviewProfile.Name: ReviewProfile, FailClosedProfile.Name: FailClosedProfile}

// DecisionProfileByName returns a built-in decision profile.
func DecisionProfileByName(name string) (*DecisionProfile, error) {
	if p, ok := decisionProfiles[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown decision profile %s (known: review, fail-closed)", safetext.Quote(name))
}

// ReasonNotationOnly is the reason of an allow decision over changes that
// are all notation (see NotationOnly).
const ReasonNotationOnly = "notation only"

// Informs reports whether the profile takes a change as information: it
// is reported and never decides. A member of the tool outside the digest
// projection (Informational) is information under every profile; the
// profile's Info names the kinds it takes as information besides.
func (p *DecisionProfile) Informs(c Change) bool {
	if Informational(c) {
		return true
	}
	_, ok := p.Info[c.Kind]
	return ok
}

// Decisive returns the changes that decide under the profile: those it
// does not take as information (cs itself when there is none).
func (p *DecisionProfile) Decisive(cs []Change) []Change {
	n := 0
	for _, c := range cs {
		if p.Informs(c) {
			n++
		}
	}
	if n == 0 {
		return cs
	}
	out := make([]Change, 0, len(cs)-n)
	for _, c := range cs {
		if !p.Informs(c) {
			out = append(out, c)
		}
	}
	return out
}

// Decide returns the decision for a set of changes and the kinds that
// denied it (sorted). Changes that need no review (NeedsNoReview:
// notation, a neutral dialect change, annotations validation never reads,
// members outside the digest projection) allow, under every profile.
func (p *DecisionProfile) Decide(cs []Change) (string, []string) {
	d, _, denied := p.DecideWithReason(cs)
	return d, denied
}

// DecideWithReason is Decide with the reason of an allow over changes:
// ReasonNotationOnly, ReasonValidatesSame or ReasonInformationOnly (""
// otherwise). A change the profile takes as information (Informs) never
// decides: a profile's Deny is asked only about the others.
func (p *DecisionProfile) DecideWithReason(cs []Change) (decision, reason string, denied []string) {
	if len(cs) == 0 {
		return Allow, "", nil
	}
	d := p.Decisive(cs)
	if len(d) == 0 {
		return Allow, ReasonInformationOnly, nil
	}
	if why, ok := neutralReason(d); ok {
		return Allow, why, nil
	}
	seen := map[string]bool{}
	for _, c := range d {
		if _, ok := p.Deny[c.Kind]; ok && !seen[c.Kind] {
			seen[c.Kind] = true
			denied = append(denied, c.Kind)
		}
	}
	if len(denied) > 0 {
		sort.Strings(denied)
		return Deny, "", denied
	}
	return Review, "", nil
}

// DecideTool is the one per-tool decision of every command — diff, drift,
// the gate's structural explanation and the gateway: a tool whose
// projection did not change and has no change but information is allowed;
// one whose every change needs no review is allowed, saying why ("notation
// only", "validates the same"); one with a change the profile denies is
// denied; any other change — a changed digest the diff could not name
// included — is reviewable.
func (p *DecisionProfile) DecideTool(changed bool, cs []Change) (decision, reason string, denied []string) {
	d := p.Decisive(cs)
	switch {
	case !changed && len(cs) == 0:
		return Allow, "", nil
	case !changed && len(d) == 0:
		return Allow, ReasonInformationOnly, nil
	case len(d) == 0:
		return Review, "", nil
	}
	return p.DecideWithReason(cs)
}

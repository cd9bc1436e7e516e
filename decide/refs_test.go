package decide_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

const (
	refDoc   = "https://schemas.example.com/a.json"
	digestA  = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB  = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	noRef    = `{"name":"lookup","description":"Look up v1.","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`
	withRef  = `{"name":"lookup","description":"Look up v2.","inputSchema":{"type":"object","properties":{"a":{"$ref":"https://Schemas.Example.com:443/a.json#/$defs/x"}}}}`
	viaID    = `{"name":"lookup","description":"Look up v2.","inputSchema":{"$id":"https://schemas.example.com/root.json","type":"object","properties":{"a":{"$ref":"a.json"}}}}`
	relative = `{"name":"lookup","description":"Look up v2.","inputSchema":{"type":"object","properties":{"a":{"$ref":"a.json#/x"}}}}`
)

func one(t *testing.T, src string) []manifest.Tool { return tools(t, "["+src+"]") }

type refCase struct {
	name             string
	pinned, served   string
	profile          *schemadiff.DecisionProfile
	pins, verified   map[string]string
	decision, reason string
	deniedBy         string // "" none
	kind             string // a change of this kind is among the tool's
	detail           []string
}

// The decision table of external documents pinned by hash: without a
// trust record as before; against one, an unpinned ref is denied under
// fail-closed and reviewable under review, a pinned one is judged like any
// other change, and a pinned one whose document changed (or could not be
// verified) is denied under fail-closed with the URL and both digests.
func TestRefDecisions(t *testing.T) {
	fc, rv := schemadiff.FailClosedProfile, schemadiff.ReviewProfile
	pinned := map[string]string{refDoc: digestA}
	empty := map[string]string{}
	cases := []refCase{
		// A changed tool that introduces an external $ref.
		{name: "no record, fail-closed", pinned: noRef, served: withRef, profile: fc, decision: decide.Deny, reason: decide.ReasonDenied, deniedBy: schemadiff.ExternalRefIntroduced, kind: schemadiff.ExternalRefIntroduced},
		{name: "unpinned, fail-closed", pinned: noRef, served: withRef, profile: fc, pins: empty, decision: decide.Deny, reason: decide.ReasonDenied, deniedBy: schemadiff.ExternalRefIntroduced, kind: schemadiff.ExternalRefIntroduced,
			detail: []string{"not pinned in the lock", refDoc}},
		{name: "unpinned, review", pinned: noRef, served: withRef, profile: rv, pins: empty, decision: decide.Review, reason: decide.ReasonChanged, kind: schemadiff.ExternalRefIntroduced},
		{name: "pinned, fail-closed", pinned: noRef, served: withRef, profile: fc, pins: pinned, decision: decide.Review, reason: decide.ReasonChanged, kind: schemadiff.ExternalRefPinned,
			detail: []string{refDoc, digestA}},
		{name: "pinned through $id", pinned: noRef, served: viaID, profile: fc, pins: pinned, decision: decide.Review, reason: decide.ReasonChanged, kind: schemadiff.ExternalRefPinned},
		{name: "relative cannot be pinned", pinned: noRef, served: relative, profile: fc, pins: pinned, decision: decide.Deny, reason: decide.ReasonDenied, deniedBy: schemadiff.ExternalRefIntroduced, kind: schemadiff.ExternalRefIntroduced,
			detail: []string{"cannot be pinned", "relative"}},
		{name: "pinned, verified", pinned: noRef, served: withRef, profile: fc, pins: pinned, verified: map[string]string{refDoc: digestA}, decision: decide.Review, reason: decide.ReasonChanged, kind: schemadiff.ExternalRefPinned,
			detail: []string{"verified"}},
		{name: "pinned, document changed", pinned: noRef, served: withRef, profile: fc, pins: pinned, verified: map[string]string{refDoc: digestB}, decision: decide.Deny, reason: decide.ReasonDenied, deniedBy: schemadiff.ExternalRefDocumentChanged, kind: schemadiff.ExternalRefDocumentChanged,
			detail: []string{refDoc, "pinned " + digestA, "now " + digestB}},
		{name: "pinned, not fetched", pinned: noRef, served: withRef, profile: fc, pins: pinned, verified: map[string]string{}, decision: decide.Deny, reason: decide.ReasonDenied, deniedBy: schemadiff.ExternalRefUnverified, kind: schemadiff.ExternalRefUnverified},

		// A tool whose digest did not change.
		{name: "unchanged, no record", pinned: withRef, served: withRef, profile: fc, decision: decide.Allow, reason: decide.ReasonUnchanged},
		{name: "unchanged, unpinned, fail-closed", pinned: withRef, served: withRef, profile: fc, pins: empty, decision: decide.Deny, reason: decide.ReasonDenied, deniedBy: schemadiff.ExternalRefPresent, kind: schemadiff.ExternalRefPresent,
			detail: []string{"not pinned"}},
		{name: "unchanged, unpinned, review", pinned: withRef, served: withRef, profile: rv, pins: empty, decision: decide.Allow, reason: decide.ReasonUnchanged},
		{name: "unchanged, pinned", pinned: withRef, served: withRef, profile: fc, pins: pinned, decision: decide.Allow, reason: decide.ReasonUnchanged},
		{name: "unchanged, pinned, verified", pinned: withRef, served: withRef, profile: fc, pins: pinned, verified: map[string]string{refDoc: digestA}, decision: decide.Allow, reason: decide.ReasonUnchanged},
		{name: "unchanged, document changed, fail-closed", pinned: withRef, served: withRef, profile: fc, pins: pinned, verified: map[string]string{refDoc: digestB}, decision: decide.Deny, reason: decide.ReasonDenied, deniedBy: schemadiff.ExternalRefDocumentChanged, kind: schemadiff.ExternalRefDocumentChanged,
			detail: []string{refDoc, digestA, digestB}},
		{name: "unchanged, document changed, review", pinned: withRef, served: withRef, profile: rv, pins: pinned, verified: map[string]string{refDoc: digestB}, decision: decide.Review, reason: decide.ReasonChanged, kind: schemadiff.ExternalRefDocumentChanged},
		{name: "unchanged, verification ignored without a record", pinned: withRef, served: withRef, profile: fc, verified: map[string]string{refDoc: digestB}, decision: decide.Allow, reason: decide.ReasonUnchanged},

		// A tool new to the list.
		{name: "added, unpinned, fail-closed", served: withRef, profile: fc, pins: empty, decision: decide.Deny, reason: decide.ReasonAdded, deniedBy: schemadiff.ExternalRefIntroduced, kind: schemadiff.ExternalRefIntroduced},
		{name: "added, pinned, fail-closed", served: withRef, profile: fc, pins: pinned, decision: decide.Review, reason: decide.ReasonAdded, kind: schemadiff.ExternalRefPinned},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p []manifest.Tool
			if c.pinned != "" {
				p = one(t, c.pinned)
			}
			opt := decide.Options{Profile: c.profile, PinnedRefs: c.pins, VerifiedRefs: c.verified}
			ds := decide.DecideTools(p, one(t, c.served), opt)
			if len(ds) != 1 {
				t.Fatalf("%d decisions", len(ds))
			}
			d := ds[0]
			if d.Decision != c.decision || d.Reason != c.reason {
				t.Errorf("decision %s (%s), want %s (%s); changes %+v", d.Decision, d.Reason, c.decision, c.reason, d.Changes)
			}
			if got := strings.Join(d.DeniedBy, ","); got != c.deniedBy {
				t.Errorf("denied by %q, want %q", got, c.deniedBy)
			}
			if d.Serve != (c.decision == decide.Allow) {
				t.Errorf("serve %v with decision %s", d.Serve, d.Decision)
			}
			if c.kind == "" {
				if len(d.Changes) != 0 {
					t.Errorf("changes %+v, want none", d.Changes)
				}
				return
			}
			i := slices.IndexFunc(d.Changes, func(x schemadiff.Change) bool { return x.Kind == c.kind })
			if i < 0 {
				t.Fatalf("no %s change in %+v", c.kind, d.Changes)
			}
			for _, w := range c.detail {
				if !strings.Contains(d.Changes[i].Detail, w) {
					t.Errorf("detail %q lacks %q", d.Changes[i].Detail, w)
				}
			}
			// The gateway's list decision is the same.
			l := decide.DecideList(decide.NewBaseline("s", manifest.Identity{}, p), &decide.Served{Tools: one(t, c.served), Completeness: manifest.Complete}, opt)
			if ld, ok := l.Decision("lookup"); !ok || ld.Decision != d.Decision || ld.Serve != d.Serve {
				t.Errorf("list decision %+v, tools decision %s", ld, d.Decision)
			}
			// And with the trust record carried by the baseline (the
			// gateway's Reload).
			bl := decide.NewBaseline("s", manifest.Identity{}, p)
			bl.PinnedRefs, bl.VerifiedRefs = c.pins, c.verified
			l = decide.DecideList(bl, &decide.Served{Tools: one(t, c.served), Completeness: manifest.Complete}, decide.Options{Profile: c.profile})
			if ld, ok := l.Decision("lookup"); !ok || ld.Decision != d.Decision || ld.Serve != d.Serve || strings.Join(ld.DeniedBy, ",") != c.deniedBy {
				t.Errorf("baseline's record: %+v, tools decision %s", ld, d.Decision)
			}
		})
	}
}

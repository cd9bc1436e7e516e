package lockrun

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/delta"
	"github.com/mcpdrift/mcpdrift/lock"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/runerr"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
)

// ReviewOptions are the review of one server of the lock.
type ReviewOptions struct {
	ObserveOptions
	// Server is the entry reviewed (the caller's lock holds it; approvals
	// change it in place).
	Server *lock.Server
	// Today (YYYY-MM-DD, UTC) decides the suppressions' expiry.
	Today string
}

// Review is what review and approve read: the server's listing, its check
// against the entry and the profile's decision on every tool.
type Review struct {
	Server    *lock.Server
	Listing   *observe.Result
	Served    *lock.Served
	Result    *lock.ServerResult
	Decisions map[string]decide.Tool
	// Deltas are the readable deltas of the tools that changed.
	Deltas []delta.Tool
	opt    ReviewOptions
}

// Prepare observes the server and checks it against its entry. A listing
// that is not complete cannot be approved from (runerr.Inconclusive).
func Prepare(ctx context.Context, opt ReviewOptions) (*Review, error) {
	s := opt.Server
	o, served, err := Observe(ctx, s, opt.ObserveOptions)
	if err != nil {
		return nil, err
	}
	if err := o.Complete(); err != nil {
		return nil, err
	}
	res, err := s.Check(served, lock.CheckOptions{Classifier: opt.Classifier, Today: opt.Today})
	if err != nil {
		return nil, runerr.Usagef("%s", safetext.Inert(err.Error()))
	}
	res.Target = o.Target
	// The check's own decisions: each tool's is made once.
	r := &Review{Server: s, Listing: o, Served: served, Result: res, Decisions: map[string]decide.Tool{}, opt: opt}
	for _, d := range res.Decisions {
		r.Decisions[d.Name] = d
	}
	r.Deltas = changedDeltas(delta.Build(s.ToolValues(), served.Tools, res.Gate.StructuralChanges, res.Gate.Tools))
	return r, nil
}

// Applied is what an approval recorded.
type Applied struct {
	// Events is how many events it recorded in the server's history.
	Events int
	// AutoApproved are the tools the profile approved by itself.
	AutoApproved []string
	// Acknowledged say which colliding names were acknowledged, and why.
	Acknowledged []string
	// IdentityMismatch is the identity the gateway would withhold the
	// server for, not approved ("" when it matches or was approved).
	IdentityMismatch string
}

// Apply approves names (by the reviewer) and the tools the profile
// auto-approves, and the identity when asked. The lock then vouches for
// the approved names: colliding ones are refused unless acknowledged
// (vouch). On an error the entry may have changed in memory: the lock
// must not be written.
func (r *Review) Apply(names []string, identity bool, a lock.Approval, vouch manifest.Vouch) (*Applied, error) {
	served := r.Served.Tools
	ev, err := r.Server.Approve(served, names, a, r.opt.Classifier, "")
	if err != nil {
		return nil, runerr.Usagef("%s", safetext.Inert(err.Error()))
	}
	out := &Applied{Events: len(ev)}
	auto := slices.DeleteFunc(slices.Clone(r.Result.AutoApprovable), func(x string) bool { return slices.Contains(names, x) })
	if len(auto) > 0 {
		ev2, err := r.Server.Approve(served, auto, a, r.opt.Classifier, lock.AutoNotation)
		if err != nil {
			return nil, runerr.Usagef("%s", safetext.Inert(err.Error()))
		}
		for _, x := range ev2 {
			out.AutoApproved = append(out.AutoApproved, x.Tool)
		}
		out.Events += len(ev2)
	}
	// The lock vouches for the approved names from now on.
	vouch.What = "approve " + safetext.QuoteNames(names) + " of " + safetext.Quote(r.Server.Name)
	vouch.Servers = []string{r.Server.Name, r.Listing.Target}
	if out.Acknowledged, err = vouch.Check(entryNames(r.Server), append(slices.Clone(names), auto...)...); err != nil {
		return nil, err
	}
	if identity {
		r.Server.ApproveIdentity(r.Served.Identity, a)
		out.Events++
	} else if r.Result.Withheld && r.Result.WithheldReason == decide.ReasonIdentityMismatch {
		out.IdentityMismatch = r.Result.WithheldDetail
	}
	return out, nil
}

// entryNames are the names of the tools an entry approves.
func entryNames(s *lock.Server) []string {
	names := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		names[i] = t.Name
	}
	return names
}

// ChangedSurface are the items of the surface (instructions, prompts,
// resource templates, resources) the check found changed.
func (r *Review) ChangedSurface() []lock.SurfaceRef {
	if r.Result.Surface == nil {
		return nil
	}
	return lock.SurfaceRefs(r.Result.Surface.Changes)
}

// SurfaceDenied says which of refs the server's profile denies (changed
// instructions under fail-closed), for the explicit re-consent.
func (r *Review) SurfaceDenied(refs []lock.SurfaceRef) []string {
	prof, err := schemadiff.DecisionProfileByName(r.Server.Profile)
	if err != nil || r.Result.Surface == nil {
		return nil
	}
	var out []string
	for _, c := range r.Result.Surface.Changes {
		ref := lock.SurfaceRef{Kind: c.Kind, Key: c.Key}
		if _, deny := prof.Deny[c.Code]; deny && slices.Contains(refs, ref) {
			out = append(out, ref.Label()+" (denied by "+c.Code+")")
		}
	}
	return out
}

// ApplySurface approves the items refs of the surface as served into the
// entry; it returns the events recorded.
func (r *Review) ApplySurface(refs []lock.SurfaceRef, a lock.Approval) ([]lock.Event, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	ev, err := r.Server.ApproveSurface(r.Served.Surface, refs, a)
	if err != nil {
		return nil, runerr.Usagef("%s (nothing was approved)", safetext.Inert(err.Error()))
	}
	return ev, nil
}

// ApproveOptions are an approval of one server's tools (the CI form of a
// review).
type ApproveOptions struct {
	ReviewOptions
	// Tools are the tools approved; All approves every changed, added or
	// removed tool instead.
	Tools []string
	All   bool
	// Surface are the items of the surface approved (with All: every
	// changed one).
	Surface []lock.SurfaceRef
	// Identity accepts the identity the server has now.
	Identity bool
	// ReviewedDenied approves a change the profile denies (the person's
	// explicit re-consent).
	ReviewedDenied bool
	Approval       lock.Approval
	Vouch          manifest.Vouch
}

// ApproveResult is an approval.
type ApproveResult struct {
	Applied
	// Approved are the tools approved, each with its decision's reason.
	Approved []ToolApproval
	// NotApproved say which tools --all left as they are: their
	// decision comes from their external $refs, which no approval
	// changes.
	NotApproved []string
	// SurfaceApproved are the events of the surface's items approved.
	SurfaceApproved []lock.Event
}

// ToolApproval is one tool approved.
type ToolApproval struct {
	Tool, Reason string
}

// Approve observes the server and approves, into its entry, the version it
// serves now of exactly the tools named (or of every pending one with All).
// Nothing is changed unless every named tool can be approved: one neither
// served nor in the lock, a change the profile denies (without
// ReviewedDenied), or a tool whose decision comes from its external $refs
// is a runerr.Usage error.
func Approve(ctx context.Context, opt ApproveOptions) (*ApproveResult, error) {
	tools := opt.Tools
	switch {
	case opt.All && len(tools) > 0:
		return nil, runerr.Usagef("give tools or --all, not both")
	case opt.All && len(opt.Surface) > 0:
		return nil, runerr.Usagef("--all approves the changed surface too: give it without --instructions, --prompt, --template or --resource")
	case !opt.All && len(tools) == 0 && !opt.Identity && len(opt.Surface) == 0:
		return nil, runerr.Usagef("name the tools to approve, or give --all (every changed tool), --identity, --instructions, --prompt, --template or --resource")
	}
	r, err := Prepare(ctx, opt.ReviewOptions)
	if err != nil {
		return nil, err
	}
	srefs := opt.Surface
	if opt.All {
		tools, srefs = slices.Clone(r.Result.Pending), r.ChangedSurface()
	}
	tools, notApproved, err := r.approvable(tools, srefs, opt.All, opt.ReviewedDenied)
	if err != nil {
		return nil, err
	}
	sev, err := r.ApplySurface(srefs, opt.Approval)
	if err != nil {
		return nil, err
	}
	a, err := r.Apply(tools, opt.Identity, opt.Approval, opt.Vouch)
	if err != nil {
		return nil, err
	}
	res := &ApproveResult{Applied: *a, NotApproved: notApproved, SurfaceApproved: sev}
	res.Events += len(sev)
	for _, t := range tools {
		if d := r.Decisions[t]; d.Reason != decide.ReasonUnchanged {
			res.Approved = append(res.Approved, ToolApproval{t, d.Reason})
		}
	}
	return res, nil
}

// approvable are the tools of names that can be approved, and those --all
// leaves (their decision comes from their external $refs); an error when
// any named one cannot be.
func (r *Review) approvable(names []string, srefs []lock.SurfaceRef, all, reviewedDenied bool) (ok, left []string, err error) {
	var denied, unknown []string
	for _, t := range names {
		d, known := r.Decisions[t]
		note, byRefs := RefOnly(r.Server, d)
		switch {
		case !known:
			unknown = append(unknown, t)
		case byRefs:
			left = append(left, note)
			continue
		case d.Decision == decide.Deny && !reviewedDenied:
			denied = append(denied, fmt.Sprintf("%s (denied by %s)", safetext.QuoteASCII(t), safetext.Escape(strings.Join(d.DeniedBy, ", "))))
		}
		ok = append(ok, t)
	}
	if !reviewedDenied {
		denied = append(denied, r.SurfaceDenied(srefs)...)
	}
	name := r.Server.Name
	switch {
	case len(unknown) > 0:
		return nil, nil, runerr.Usagef("not served by %s and not in the lock: %s (nothing was approved)", safetext.Quote(name), safetext.QuoteNames(unknown))
	case len(left) > 0 && !all:
		return nil, nil, runerr.Usagef("%s; an approval cannot change that (nothing was approved)", strings.Join(left, "; "))
	case len(denied) > 0:
		return nil, nil, runerr.Usagef("the %s profile denies the change of %s: read it (mcpdrift review %s) and approve with --i-reviewed-the-denied-change (nothing was approved)", r.Server.Profile, strings.Join(denied, ", "), safetext.QuoteASCII(name))
	}
	return ok, left, nil
}

// RefOnly says, of a tool whose bytes are as approved but whose decision
// is not allow, that the decision comes from its external $refs (which
// no approval changes), and what to do: pin the documents.
func RefOnly(s *lock.Server, d decide.Tool) (string, bool) {
	if d.Reason == decide.ReasonUnchanged || d.Removed || d.Pinned == "" || d.Digest != d.Pinned {
		return "", false
	}
	t := s.Tool(d.Name)
	if t == nil {
		return "", false
	}
	tv := t.ToolValue()
	pins := s.RefPins()
	var unpinned, all []string
	for _, r := range schemadiff.ToolRefs(&tv) {
		if r.Document == "" {
			continue
		}
		all = append(all, r.Document)
		if _, ok := pins[r.Document]; !ok {
			unpinned = append(unpinned, r.Document)
		}
	}
	docs := unpinned
	if len(docs) == 0 {
		docs = all
	}
	slices.Sort(docs)
	docs = slices.Compact(docs)
	what := "its external $refs cannot be pinned (relative or not http)"
	if len(docs) > 0 {
		q := make([]string, 0, 6)
		for i, u := range docs {
			if i == 5 {
				q = append(q, fmt.Sprintf("and %d more", len(docs)-5))
				break
			}
			q = append(q, safetext.Quote(u))
		}
		what = "read and pin " + strings.Join(q, ", ") + " with mcpdrift lock pin-ref " + safetext.QuoteASCII(s.Name) + " URL"
	}
	return fmt.Sprintf("%s is as approved; its decision (%s, %s) comes from its external $refs: %s", safetext.QuoteASCII(d.Name), d.Decision, safetext.Escape(strings.Join(d.DeniedBy, ", ")), what), true
}

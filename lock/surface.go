package lock

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
)

// The model-facing surface of a server in the lock (docs/surface.md): its
// approved instructions, prompts, resource templates and (when pinned)
// resources, in the member "surface" (the snapshot's form), and who
// approved each, in "surface_approvals".

// SurfaceApproval says who approved one item of the surface: the
// instructions (Key "") or a prompt, template or resource by its key.
type SurfaceApproval struct {
	Kind surface.Kind `json:"kind"`
	Key  string       `json:"key,omitempty"`
	Approval
}

// SurfaceRef names one item of the surface to approve.
type SurfaceRef struct {
	Kind surface.Kind
	Key  string // "" for the instructions
}

// Label is how messages name the item.
func (r SurfaceRef) Label() string {
	if r.Kind == surface.Instructions {
		return "the instructions"
	}
	return surface.Label(r.Kind, r.Key)
}

// kindRank orders the kinds as every artifact lists them.
func kindRank(k surface.Kind) int {
	switch k {
	case surface.Instructions:
		return 0
	case surface.Prompt:
		return 1
	case surface.Template:
		return 2
	}
	return 3
}

func compareApprovals(a, b SurfaceApproval) int {
	if d := kindRank(a.Kind) - kindRank(b.Kind); d != 0 {
		return d
	}
	return strings.Compare(a.Key, b.Key)
}

// parseSurface reads a server's "surface" and "surface_approvals": the
// surface's digests recompute, and each approval is of an item the
// surface holds, with its digest, one for one.
func parseSurface(s *Server, v jcs.Value, ptr string) *Error {
	sv, ok := v.Get("surface")
	av, hasApprovals := v.Get("surface_approvals")
	if !ok {
		if hasApprovals {
			return &Error{Pointer: ptr + "/surface_approvals", Msg: "approvals of a surface the server does not pin"}
		}
		return nil
	}
	sf, err := surface.Parse(sv)
	if err != nil {
		var pe *surface.ParseError
		if errors.As(err, &pe) {
			return &Error{Pointer: ptr + "/surface" + pe.Pointer, Msg: pe.Msg}
		}
		return &Error{Pointer: ptr + "/surface", Msg: safetext.Inert(err.Error())}
	}
	s.Surface = sf
	if hasApprovals {
		if err := decodeInto(av, &s.SurfaceApprovals); err != nil {
			return &Error{Pointer: ptr + "/surface_approvals", Msg: safetext.Inert(err.Error())}
		}
	}
	want := approvable(sf)
	for i, a := range s.SurfaceApprovals {
		at := fmt.Sprintf("%s/surface_approvals/%d", ptr, i)
		ref := SurfaceRef{a.Kind, a.Key}
		d, ok := want[ref]
		switch {
		case !ok:
			return &Error{Pointer: at, Msg: "an approval of " + ref.Label() + ", which the surface does not hold (or holds twice)"}
		case d != a.Digest:
			return &Error{Pointer: at + "/digest", Msg: fmt.Sprintf("the approval is of %s, not of %s as the surface holds it (%s)", a.Digest, ref.Label(), d)}
		}
		delete(want, ref)
	}
	for ref := range want {
		return &Error{Pointer: ptr + "/surface_approvals", Msg: ref.Label() + " is in the surface without an approval"}
	}
	slices.SortFunc(s.SurfaceApprovals, compareApprovals)
	return nil
}

// approvable are the items of a pinned surface that carry an approval,
// with their digests: present instructions and every item of an observed
// list.
func approvable(sf *surface.Surface) map[SurfaceRef]string {
	out := map[SurfaceRef]string{}
	if in := sf.Instructions; in.State == surface.Observed && in.Present {
		out[SurfaceRef{Kind: surface.Instructions}] = in.Digest
	}
	for _, k := range surface.ListKinds {
		for _, it := range sf.List(k).Items {
			out[SurfaceRef{k, it.Key}] = it.Digest
		}
	}
	return out
}

// appendSurface appends the server's surface members (ind is the
// server's member indentation, a newline first).
func (s *Server) appendSurface(b []byte, ind string) []byte {
	if s.Surface == nil {
		return b
	}
	sb, err := surface.Marshal(s.Surface, strings.TrimPrefix(ind, "\n"))
	if err != nil {
		panic(fmt.Sprintf("lock: the surface of %s: %v", s.Name, err)) // read or approved: always pinnable
	}
	b = append(b, ","+ind+`"surface": `...)
	b = append(b, sb...)
	if len(s.SurfaceApprovals) > 0 {
		as := slices.Clone(s.SurfaceApprovals)
		slices.SortFunc(as, compareApprovals)
		b = append(b, ","+ind+`"surface_approvals": [`...)
		for i, a := range as {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, ind+"  "...)
			b = line(b, a)
		}
		b = append(b, ind+"]"...)
	}
	return b
}

// PinSurface pins the surface a server serves now, every item approved
// with a (lock add). It must be pinnable (surface.Pinnable).
func (s *Server) PinSurface(sf *surface.Surface, a Approval) error {
	if err := surface.Pinnable(sf); err != nil {
		return err
	}
	s.Surface, s.SurfaceApprovals = sf, nil
	for ref, d := range approvable(sf) {
		ap := a
		ap.Digest = d
		s.SurfaceApprovals = append(s.SurfaceApprovals, SurfaceApproval{Kind: ref.Kind, Key: ref.Key, Approval: ap})
	}
	slices.SortFunc(s.SurfaceApprovals, compareApprovals)
	return nil
}

// SurfaceRefs are the items of a comparison's changes that an approval
// can settle (the instructions, a prompt, template or resource by its
// key), in order, once each; a change of a whole list (not observed) is
// none.
func SurfaceRefs(cs []surface.Change) []SurfaceRef {
	var out []SurfaceRef
	for _, c := range cs {
		ref := SurfaceRef{Kind: c.Kind, Key: c.Key}
		switch {
		case c.Code == surface.CodeNotObserved, c.Code == surface.CodeUnreadable, c.Code == surface.CodeAmbiguous:
			continue
		case c.Kind != surface.Instructions && c.Key == "":
			continue
		case slices.Contains(out, ref):
			continue
		}
		out = append(out, ref)
	}
	return out
}

// ApproveSurface writes the served version of exactly the named items
// into the server's surface: a served item as served (added or
// changed), a pinned item the served list no longer holds removed, the
// instructions as served (or their absence). A name neither served nor
// pinned, an item served twice, instructions too large to keep, and a
// removal read from a partial listing are errors, and nothing changes.
// A server that pinned no surface starts from one where nothing is
// pinned (every kind not observed): what is not approved is new. It
// returns the events it appended to the history.
func (s *Server) ApproveSurface(served *surface.Surface, refs []SurfaceRef, a Approval) ([]Event, error) {
	if served == nil {
		return nil, errors.New("the surface was not observed, so nothing of it can be approved")
	}
	next := s.Surface
	if next == nil {
		next = surface.New(surface.NotObserved, "not approved yet")
	}
	cp := *next // lists are replaced, never changed in place
	next = &cp
	approvals := slices.Clone(s.SurfaceApprovals)
	var events []Event
	for _, ref := range refs {
		ev, err := approveOne(next, &approvals, served, ref, a)
		if err != nil {
			return nil, err
		}
		if ev != nil {
			events = append(events, *ev)
		}
	}
	if err := surface.Pinnable(next); err != nil {
		return nil, err
	}
	slices.SortFunc(approvals, compareApprovals)
	s.Surface, s.SurfaceApprovals = next, approvals
	s.History = append(s.History, events...)
	return events, nil
}

// approveOne approves one item into next (a copy) and approvals.
func approveOne(next *surface.Surface, approvals *[]SurfaceApproval, served *surface.Surface, ref SurfaceRef, a Approval) (*Event, error) {
	setApproval := func(digest string) {
		*approvals = slices.DeleteFunc(*approvals, func(x SurfaceApproval) bool { return x.Kind == ref.Kind && x.Key == ref.Key })
		if digest != "" {
			ap := a
			ap.Digest = digest
			*approvals = append(*approvals, SurfaceApproval{Kind: ref.Kind, Key: ref.Key, Approval: ap})
		}
	}
	ev := &Event{At: a.At, Action: ActionApproved, Kind: ref.Kind, Tool: ref.Key, By: a.By, Note: a.Note}
	if ref.Kind == surface.Instructions {
		in := served.Instructions
		switch {
		case in.State != surface.Observed:
			return nil, fmt.Errorf("the instructions were not observed (%s)", safetext.Inert(in.Reason))
		case in.Oversize:
			return nil, fmt.Errorf("the instructions are %d bytes, more than can be kept: they cannot be approved", in.Size)
		}
		old := next.Instructions
		if old.State == surface.Observed && old.Present == in.Present && old.Digest == in.Digest {
			return nil, nil
		}
		ev.From, ev.To = old.Digest, in.Digest
		if !in.Present {
			ev.Action = ActionRemoved
		}
		next.Instructions = in
		setApproval(in.Digest)
		return ev, nil
	}
	sl, pl := served.List(ref.Kind), *next.List(ref.Kind)
	var now *surface.Item
	if sl.State == surface.Observed {
		for i := range sl.Items {
			if sl.Items[i].Key != ref.Key {
				continue
			}
			if now != nil {
				return nil, fmt.Errorf("%s is served twice: an ambiguous item cannot be approved", ref.Label())
			}
			now = &sl.Items[i]
		}
	}
	var old *surface.Item
	if pl.State == surface.Observed {
		old = pl.Find(ref.Key)
	}
	switch {
	case now == nil && old == nil:
		return nil, fmt.Errorf("%s is neither served nor in the lock", ref.Label())
	case now == nil && (sl.State == surface.Observed && sl.Completeness != surface.Complete || sl.State == surface.NotObserved):
		return nil, fmt.Errorf("%s was not seen, but the %s were not listed completely: its removal cannot be approved", ref.Label(), ref.Kind.Plural())
	case now != nil && old != nil && now.Digest == old.Digest:
		return nil, nil
	}
	items := slices.Clone(pl.Items)
	if pl.State != surface.Observed {
		items = nil
	}
	items = slices.DeleteFunc(items, func(it surface.Item) bool { return it.Key == ref.Key })
	if old != nil {
		ev.From = old.Digest
	}
	if now == nil {
		ev.Action = ActionRemoved
		setApproval("")
	} else {
		items = append(items, *now)
		slices.SortFunc(items, func(x, y surface.Item) int { return strings.Compare(x.Key, y.Key) })
		ev.To = now.Digest
		setApproval(now.Digest)
	}
	*next.List(ref.Kind) = surface.List{Kind: ref.Kind, State: surface.Observed, Completeness: surface.Complete, Items: items}
	return ev, nil
}

// SurfaceResult is a server's surface in a check: the comparison with
// the approved surface, what the suppression file accepted, and the items
// an approval can settle.
type SurfaceResult struct {
	// Pinned: the lock pins a surface for this server.
	Pinned     bool             `json:"pinned"`
	Changes    []surface.Change `json:"changes"`
	Suppressed []surface.Change `json:"suppressed,omitempty"`
	Notes      []string         `json:"notes"`
	// Pending are the items a reviewer must approve ("instructions",
	// "prompt NAME", ...: their labels, escaped).
	Pending []string `json:"pending"`
}

// checkSurface compares what the server serves now with its approved
// surface into res: a change is a finding (exit 1) unless the
// suppression file accepts it, and changed instructions withhold the
// server under a profile that denies them (fail-closed).
func (s *Server) checkSurface(res *ServerResult, sv *Served, prof *schemadiff.DecisionProfile, opt CheckOptions) {
	cmp := surface.Compare(s.Surface, sv.Surface)
	sr := &SurfaceResult{Pinned: s.Surface != nil, Changes: []surface.Change{}, Notes: cmp.Notes, Pending: []string{}}
	for _, c := range cmp.Changes {
		if opt.Suppressions != nil {
			if m, _ := opt.Suppressions.Match(c.Code, c.Key, []string{s.Name}, opt.Today); m != nil {
				sr.Suppressed = append(sr.Suppressed, c)
				continue
			}
		}
		sr.Changes = append(sr.Changes, c)
	}
	// The gateway's rule, from the one decision core.
	if sv.Surface != nil && sv.Surface.Instructions.State == surface.Observed && !res.Withheld {
		b := &decide.Baseline{Surface: s.Surface}
		if d := decide.DecideInstructions(b, sv.Surface.Instructions, prof); d.Withhold {
			res.Withheld, res.WithheldReason = true, decide.ReasonInstructionsChanged
			res.WithheldDetail = "the instructions are not the approved ones, and the " + prof.Name + " profile withholds such a server"
		}
	}
	for _, ref := range SurfaceRefs(sr.Changes) {
		sr.Pending = append(sr.Pending, ref.Label())
	}
	if len(sr.Changes) > 0 {
		res.ExitCode = 1
	}
	res.Surface = sr
}

package probe

import (
	"github.com/mcpdrift/mcpdrift/surface"
)

// SurfaceCheck is the model-facing surface of a run: the one the declared
// side pins (nil: it pins none, pinned before surfaces were) and the one
// the run observed (nil: not observed).
type SurfaceCheck struct {
	Pinned *surface.Surface
	Now    *surface.Surface
	// Reflected lists where the surface carries a credential this run
	// sent (MCP-AUTH-CREDENTIAL-REFLECTED, as for the tools).
	Reflected []Reflection
}

// SurfaceReport is the surface part of a report: each kind's state as
// observed and as pinned, the changes (with their word diffs) and what was
// not compared.
type SurfaceReport struct {
	// Pinned: the declared side pins a surface.
	Pinned  bool             `json:"pinned"`
	Kinds   []SurfaceKind    `json:"kinds"`
	Changes []surface.Change `json:"changes"`
	Notes   []string         `json:"notes"`
}

// SurfaceKind is one kind's state and digest.
type SurfaceKind struct {
	Kind        surface.Kind  `json:"kind"`
	State       surface.State `json:"state"`
	Reason      string        `json:"reason,omitempty"`
	Count       int           `json:"count,omitempty"`
	Digest      string        `json:"digest,omitempty"`
	PinnedState surface.State `json:"pinned_state,omitempty"`
}

// Kinds summarises each kind of now (and of pinned, when set).
func Kinds(pinned, now *surface.Surface) []SurfaceKind {
	if now == nil {
		return []SurfaceKind{}
	}
	out := []SurfaceKind{}
	in := &now.Instructions
	ik := SurfaceKind{Kind: surface.Instructions, State: in.State, Reason: in.Reason, Digest: in.Digest}
	if pinned != nil {
		ik.PinnedState = pinned.Instructions.State
	}
	out = append(out, ik)
	for _, k := range surface.ListKinds {
		l := now.List(k)
		sk := SurfaceKind{Kind: k, State: l.State, Reason: l.Reason, Count: len(l.Items)}
		sk.Digest, _ = l.Digest()
		if l.State == surface.Observed && l.Completeness != surface.Complete {
			sk.Digest = "" // a partial list has no digest to claim
		}
		if pinned != nil {
			sk.PinnedState = pinned.List(k).State
		}
		out = append(out, sk)
	}
	return out
}

// surfaceRules reports each change of the surface against the pinned one
// as a finding of its code (the catalogue's severity), and returns the
// report's surface part. Nothing pinned: nothing compared, and a note says
// so; a kind not observed is said, never taken as clean.
func surfaceRules(r *Result, sc *SurfaceCheck) *SurfaceReport {
	cmp := surface.Compare(sc.Pinned, sc.Now)
	for _, c := range cmp.Changes {
		r.add(c.Code, c.Key, c.Message, "", nil)
	}
	reflected(r, sc.Reflected)
	r.Notes = append(r.Notes, cmp.Notes...)
	return &SurfaceReport{Pinned: sc.Pinned != nil, Kinds: Kinds(sc.Pinned, sc.Now), Changes: cmp.Changes, Notes: cmp.Notes}
}

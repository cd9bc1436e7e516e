package mcpclient

import (
	"context"
	"fmt"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/surface"
)

// DefaultMaxSurfacePages bounds the pages of each surface list when
// MaxListPages is not set: a prompts or templates list that paginates
// forever with fresh cursors ends there, partial.
const DefaultMaxSurfacePages = 1000

// SurfaceOptions ask a run to observe the model-facing surface (package
// surface) after the tools: the instructions of the initialize or
// server/discover result, and every page of prompts/list and
// resources/templates/list (and resources/list with Resources) when the
// server advertises them. A surface listing that fails does not fail the
// run: its kind is recorded not observed, with why.
type SurfaceOptions struct {
	// Resources lists resources/list too. Many servers list data that
	// changes all the time, so it is asked for only when pinned.
	Resources bool
	// ResourcesIf, when set, decides at the time of the resources listing
	// instead of Resources (drift asks for resources when the declared
	// side, read beside the listing, pins them).
	ResourcesIf func() bool
	// MaxInstructionsBytes bounds the instructions kept (0:
	// surface.DefaultMaxInstructionsBytes); larger ones are digested
	// whole and reported oversize, never cut.
	MaxInstructionsBytes int
}

func (o *SurfaceOptions) resources() bool {
	if o.ResourcesIf != nil {
		return o.ResourcesIf()
	}
	return o.Resources
}

// observeSurface reads the surface of the handshake's result and lists
// what the server advertises, into Observation.Surface.
func (r *run) observeSurface(ctx context.Context) {
	opt := r.cfg.Surface
	h := r.handshake
	if !h.Valid() || h.Kind() != jcs.Object {
		r.obs.Surface = surface.New(surface.NotObserved, "the server answered neither server/discover nor initialize with a result, so its capabilities and instructions are unknown")
		return
	}
	s := surface.New(surface.NotObserved, "")
	r.obs.Surface = s
	s.Instructions = surface.ReadInstr(h, opt.MaxInstructionsBytes)
	caps, ok := h.Get("capabilities")
	if !ok || caps.Kind() != jcs.Object {
		for _, k := range surface.ListKinds {
			l := s.List(k)
			l.Reason = r.handshakeMethod() + " result has no capabilities object, so what the server offers is unknown"
		}
		return
	}
	for _, k := range surface.ListKinds {
		l := s.List(k)
		l.Reason = ""
		switch {
		case k == surface.Resource && !opt.resources():
			l.State = surface.NotRequested
		case !advertises(caps, k.Capability()):
			l.State = surface.NotAdvertised
		default:
			r.listSurface(ctx, l)
		}
	}
}

// advertises reports whether capabilities advertise name: a member not
// null under it, or under a name decoders that ignore case take for it
// ("Prompts": Go's encoding/json sets mcp-go's capability from it, and
// the client lists the kind).
func advertises(caps jcs.Value, name string) bool {
	want := safetext.MemberKey(name)
	for i := range caps.Len() {
		k, v := caps.Member(i)
		if v.Kind() != jcs.Null && safetext.MemberKey(k.Str()) == want {
			return true
		}
	}
	return false
}

// handshakeMethod names the result the run read its capabilities from.
func (r *run) handshakeMethod() string {
	if r.rev != "" {
		return "the server/discover"
	}
	return "the initialize"
}

// listSurface lists one surface kind with the run's paging loop, within
// the bounds the tools have (MaxListBytes for its responses in all,
// MaxListTools for its entries in all) and a page bound.
func (r *run) listSurface(ctx context.Context, l *surface.List) {
	k := l.Kind
	key := k.ResultKey()
	var bytes int64
	var cycle, capped bool
	pages := r.cfg.MaxListPages
	if pages == 0 {
		pages = DefaultMaxSurfacePages
	}
	ls := &listing{method: k.Method(), what: k.Method() + ": ", maxBytes: r.cfg.MaxListBytes, maxItems: r.cfg.MaxListTools, maxPages: pages,
		pages: &l.Pages, bytes: &bytes, completeness: &l.Completeness, cycle: &cycle, capped: &capped,
		bytesKind: LimitListBytes, itemsKind: LimitListEntries}
	ls.read = func(req *rpcRequest, rep *reply, res jcs.Value) (string, bool, int, error) {
		next, has, err := checkPage(res, key)
		if err != nil {
			return "", false, 0, &ResponseError{Method: req.Method, HTTPStatus: rep.status, Reason: err.Error()}
		}
		arr, _ := res.Get(key)
		return next, has, arr.Len(), nil
	}
	ls.take = func(_ *rpcRequest, _ *reply, res jcs.Value) error {
		arr, _ := res.Get(key)
		for i := range arr.Len() {
			l.Add(arr.Index(i))
		}
		return nil
	}
	if err := r.paginate(ctx, ls); err != nil {
		l.State, l.Items, l.Invalid, l.Completeness = surface.NotObserved, nil, nil, ""
		l.Reason = k.Method() + " failed: " + safetext.Inert(err.Error())
		return
	}
	l.State = surface.Observed
	switch {
	case l.Completeness == surface.Complete:
	case cycle:
		l.Reason = "the server's cursors cycle"
	case capped:
		l.Reason = fmt.Sprintf("the listing was capped at %d pages", pages)
	default:
		l.Reason = "the legacy server sent an empty nextCursor, which was not followed"
	}
}

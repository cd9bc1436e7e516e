package proxy

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/surface"
)

// The model-facing surface in enforce mode (docs/surface.md, "The
// gateway"): prompts/list, resources/templates/list and (when pinned)
// resources/list are answered from the gateway's own listing of the
// upstream, with only the approved, unchanged items, as approved;
// prompts/get of any other prompt is refused before the upstream; the
// instructions of initialize and server/discover results are served as
// approved. A kind the baseline does not pin (no surface at all, or
// resources not requested) is passed through, and the decision log says
// so once per session. Every decision is decide's.

// surfaceListKinds are the list methods of the surface.
var surfaceListKinds = map[string]surface.Kind{"prompts/list": surface.Prompt, "resources/templates/list": surface.Template, "resources/list": surface.Resource}

// surfaceGate is the decision on the latest listing of one kind.
type surfaceGate struct {
	list     *decide.SurfaceList
	result   []byte         // the list result served
	errResp  *frame.Message // the upstream's error answer to the gateway's listing
	at       time.Time
	ttl      time.Duration
	baseline *decide.Baseline
	changes  uint64
}

// surfaceState is a session's surface: its gates, the list_changed
// notifications counted per kind, what was logged once, and the
// instructions the upstream last sent.
type surfaceState struct {
	gates        map[surface.Kind]*surfaceGate
	changes      map[surface.Kind]uint64
	logged       map[string]bool
	instructions *surface.Instr
}

func (st *surfaceState) init() {
	if st.gates == nil {
		st.gates, st.changes, st.logged = map[surface.Kind]*surfaceGate{}, map[surface.Kind]uint64{}, map[string]bool{}
	}
}

// surfacePinned reports whether the baseline pins kind k (a list kind to
// gate, and for surface.Instructions the instructions).
func surfacePinned(b *decide.Baseline, k surface.Kind) bool {
	if b == nil || b.Surface == nil {
		return false
	}
	return k == surface.Instructions || b.Surface.List(k).State != surface.NotRequested
}

// serveSurface answers a surface request in enforce mode; ok is false
// when it is to be forwarded (a kind not pinned, an allowed prompts/get).
func (s *session) serveSurface(ctx context.Context, m *frame.Message, fwd http.Header) (reply, bool) {
	k, isList := surfaceListKinds[m.Method]
	var t getTarget
	if !isList {
		t = getTargetOf(m)
		k = t.kind
	}
	b := s.g.baseline.Load()
	if !surfacePinned(b, k) {
		s.logSurfaceOnce(m.Method, decide.ReasonSurfaceNotPinned)
		return reply{}, false
	}
	if isList {
		if c, ok := m.Param("cursor"); ok && c.Kind() != jcs.Null {
			s.g.cfg.Metrics.request(m.Method, "refused")
			return ownError(m, mcpwire.CodeInvalidParams, "Invalid cursor: the gateway serves the whole list in one page", "invalid_cursor", nil), true
		}
	}
	g, err := s.gatedSurface(ctx, fwd, k)
	withheld := false
	if err == nil {
		if tg, terr := s.gated(ctx, fwd); terr == nil && tg.list.Withheld {
			withheld = true // the whole server: nothing of it is served
		}
	}
	if !isList {
		return s.itemGet(ctx, m, t, g, err, withheld)
	}
	switch {
	case err != nil:
		s.g.cfg.Metrics.request(m.Method, "withheld")
		return ownError(m, mcpwire.CodeInternalError, "the upstream could not be listed: "+err.Error(), decide.ReasonSurfaceIncomplete, nil), true
	case g.errResp != nil:
		// The upstream refused the gateway's own listing: its code and
		// message (escaped), the gateway's reason in data.
		s.g.cfg.Metrics.request(m.Method, "withheld")
		msg := g.errResp.ErrorMessage()
		return ownError(m, g.errResp.Code, safetext.Clip(msg, 256), decide.ReasonSurfaceIncomplete, nil), true
	case g.list.Withheld:
		s.g.cfg.Metrics.request(m.Method, "withheld")
		return ownError(m, mcpwire.CodeInternalError, g.list.Detail, decide.ReasonSurfaceIncomplete, nil), true
	case withheld:
		s.g.cfg.Metrics.request(m.Method, "withheld")
		return reply{body: frame.AppendResult(nil, m.IDRaw(), listResult(jcs.Value{}, k.ResultKey(), 0, nil))}, true
	}
	s.g.cfg.Metrics.request(m.Method, "served")
	return reply{body: frame.AppendResult(make([]byte, 0, len(g.result)+len(m.IDRaw())+40), m.IDRaw(), g.result)}, true
}

// getTarget is the item a prompts/get or a completion/complete names:
// its kind and key; named is false when the name is not a string (not
// what the list was decided on: a JavaScript server indexing by
// ["hidden"] reads "hidden").
type getTarget struct {
	kind  surface.Kind
	key   string
	named bool
}

// getTargetOf reads the item m names. A completion/complete names a prompt
// ("ref/prompt", its name) or a resource template ("ref/resource", its
// URI template); a reference of any other type, or none, names a prompt
// no list serves, so it is refused with the prompts/get contract: the
// upstream would complete the arguments of an item the gateway hides.
func getTargetOf(m *frame.Message) getTarget {
	str := func(v jcs.Value, ok bool) (string, bool) {
		if ok && v.Kind() == jcs.String {
			return v.Str(), true
		}
		return "", false
	}
	if m.Method != "completion/complete" {
		key, named := str(m.Param("name"))
		return getTarget{kind: surface.Prompt, key: key, named: named}
	}
	ref, ok := m.Param("ref")
	if !ok || !ref.Valid() || ref.Kind() != jcs.Object {
		return getTarget{kind: surface.Prompt}
	}
	typ, _ := str(ref.Get("type"))
	switch typ {
	case "ref/resource":
		key, named := str(ref.Get("uri"))
		return getTarget{kind: surface.Template, key: key, named: named}
	case "ref/prompt":
		key, named := str(ref.Get("name"))
		return getTarget{kind: surface.Prompt, key: key, named: named}
	}
	return getTarget{kind: surface.Prompt}
}

// itemGet decides a prompts/get or a completion/complete: refused -32602
// ("Unknown prompt", the contract of a hidden tool) unless the gated list
// serves the item by its exact key, a string.
func (s *session) itemGet(ctx context.Context, m *frame.Message, t getTarget, g *surfaceGate, err error, withheld bool) (reply, bool) {
	name := t.key
	reason := ""
	switch {
	case !t.named:
		reason = decide.ReasonPromptUnknown
	case err != nil || g.errResp != nil:
		reason = decide.ReasonSurfaceIncomplete
	case withheld:
		reason = decide.ReasonWithheld
	default:
		if ok, why := g.list.Get(name); !ok {
			reason = why
		}
	}
	if reason == "" {
		s.logDecision(m.Method, name, "allow", []string{decide.ReasonSurfaceUnchanged}, "")
		spanDecision(ctx, "allow", decide.ReasonSurfaceUnchanged)
		s.g.cfg.Metrics.request(m.Method, "allow")
		return reply{}, false
	}
	s.g.cfg.Metrics.refused(reason)
	s.g.cfg.Metrics.request(m.Method, "deny")
	s.logDecision(m.Method, name, "deny", []string{reason}, "")
	spanDecision(ctx, "deny", reason)
	what := "Unknown prompt: "
	if t.kind == surface.Template {
		what = "Unknown resource template: "
	}
	return ownError(m, mcpwire.CodeInvalidParams, what+safetext.Quote(safetext.Clip(name, 128)), reason, nil), true
}

// gatedSurface is the current gate of kind k, listing the upstream first
// when there is none fresh (none yet, older than its ttlMs or the relist
// interval, a list_changed since, a new baseline). Concurrent callers
// share one listing.
func (s *session) gatedSurface(ctx context.Context, fwd http.Header, k surface.Kind) (*surfaceGate, error) {
	if g := s.freshSurface(k); g != nil {
		return g, nil
	}
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if g := s.freshSurface(k); g != nil {
		return g, nil
	}
	s.mu.Lock()
	s.surf.init()
	change := s.surf.changes[k]
	s.mu.Unlock()
	b := s.g.baseline.Load()
	served := &surface.List{Kind: k, State: surface.Observed}
	pl := &pageListing{method: k.Method(), key: k.ResultKey(), entries: "entries", page: func(page int, arr jcs.Value) {
		served.Pages = page
		for i := range arr.Len() {
			served.Add(arr.Index(i))
		}
	}}
	first, err := s.upstreamPages(ctx, fwd, pl)
	if err != nil {
		return nil, err
	}
	served.Completeness = surface.Complete
	if pl.incomplete != "" {
		served.Completeness, served.Reason = surface.Partial, "the gateway's listing is incomplete: "+pl.incomplete
	}
	g := &surfaceGate{at: s.g.cfg.Now(), baseline: b, changes: change, errResp: pl.errResp}
	if pl.errResp == nil {
		g.list = decide.DecideSurfaceList(b, served)
		items := g.list.Served()
		g.result = listResult(first, k.ResultKey(), len(items), func(i int) []byte { return items[i].Value.Raw() })
		s.recordSurface(g.list)
	}
	if t, ok := first.Get("ttlMs"); ok && first.Valid() {
		if ms, ok := frame.Int64(t); ok && ms > 0 {
			g.ttl = time.Duration(ms) * time.Millisecond
		}
	}
	if g.errResp != nil || g.list.Withheld {
		g.ttl = listRetry
	}
	s.mu.Lock()
	s.surf.gates[k] = g
	s.mu.Unlock()
	return g, nil
}

// freshSurface is the gate of k when it may still be served.
func (s *session) freshSurface(k surface.Kind) *surfaceGate {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.surf.init()
	g := s.surf.gates[k]
	if g == nil || g.baseline != s.g.baseline.Load() || g.changes != s.surf.changes[k] {
		return nil
	}
	age := s.g.cfg.Now().Sub(g.at)
	if g.ttl > 0 && age > g.ttl || s.g.cfg.RelistInterval > 0 && age > s.g.cfg.RelistInterval {
		return nil
	}
	return g
}

// recordSurface logs each item's decision.
func (s *session) recordSurface(l *decide.SurfaceList) {
	if l.Withheld {
		s.logDecision(l.Kind.Method(), "", "withheld", []string{l.Reason}, "")
	}
	for _, d := range l.Items {
		dec := "serve"
		if !d.Serve {
			dec = "hide"
		}
		s.logDecision(l.Kind.Method(), d.Key, dec, []string{d.Reason}, d.Digest)
		if d.Note != "" {
			s.logNote(d.Note)
		}
	}
}

// logSurfaceOnce logs a decision about a whole kind once per session.
func (s *session) logSurfaceOnce(method, reason string) {
	s.mu.Lock()
	s.surf.init()
	done := s.surf.logged[method+" "+reason]
	s.surf.logged[method+" "+reason] = true
	s.mu.Unlock()
	if !done {
		s.logDecision(method, "", "pass", []string{reason}, "")
	}
}

// surfaceChanged handles a prompts or resources list_changed in enforce
// mode: the kinds it names are listed again (a get meanwhile decides on
// a listing made after it), then the notification is forwarded.
func (s *session) surfaceChanged(m *frame.Message, fwd func([]byte)) {
	kinds := []surface.Kind{surface.Prompt}
	if m.Method == "notifications/resources/list_changed" {
		kinds = []surface.Kind{surface.Template, surface.Resource}
	}
	b := s.g.baseline.Load()
	s.mu.Lock()
	s.surf.init()
	for _, k := range kinds {
		s.surf.changes[k]++
		delete(s.surf.gates, k)
	}
	s.mu.Unlock()
	s.g.cfg.Metrics.relist("list_changed")
	go func() {
		defer s.guard("re-observing the upstream's " + m.Method)
		ctx, cancel := context.WithTimeout(context.Background(), s.g.cfg.ListTimeout+time.Second)
		defer cancel()
		for _, k := range kinds {
			if surfacePinned(b, k) {
				_, _ = s.gatedSurface(ctx, nil, k)
			}
		}
		if fwd != nil {
			fwd(m.Raw)
		}
	}()
}

// noteInstructions records the instructions of an initialize or
// server/discover result (enforce): the tool list is decided again when
// they changed, since under fail-closed they withhold the server.
func (s *session) noteInstructions(result jcs.Value) {
	if result.Kind() != jcs.Object {
		return
	}
	in, _ := decide.DecideResultInstructions(s.g.baseline.Load(), result, s.g.cfg.Profile)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.surf.init()
	if old := s.surf.instructions; old == nil || old.Digest != in.Digest || old.Present != in.Present {
		s.gate = nil
	}
	s.surf.instructions = &in
}

// gateInstructions serves the instructions of an initialize or
// server/discover answer as decide says: as they came, the approved ones
// in their place, or none, every other byte of the result as it came;
// each decision is logged with both digests.
func (s *session) gateInstructions(ctx context.Context, m *frame.Message, resp *frame.Message, body []byte) []byte {
	if resp == nil || resp.Kind != frame.Response {
		return body
	}
	b := s.g.baseline.Load()
	_, d := decide.DecideResultInstructions(b, resp.Result, s.g.cfg.Profile)
	if d.Reason == decide.ReasonSurfaceNotPinned {
		s.logSurfaceOnce(m.Method, decide.ReasonSurfaceNotPinned)
		return body
	}
	reasons := []string{d.Reason}
	if d.Withhold {
		reasons = append(reasons, decide.ReasonInstructionsChanged)
	}
	decision := "serve"
	if d.Changed() {
		decision = "rewrite"
		s.logNote("the upstream's instructions (" + orNone(d.Served) + ") are not the approved ones (" + orNone(d.Pinned) + "): " + d.Reason)
	}
	s.logDecision(m.Method, "", decision, reasons, d.Served)
	spanDecision(ctx, decision, d.Reason)
	out, ok := decide.RewriteInstructions(resp.Result, d)
	if !ok {
		return body
	}
	return frame.AppendResult(nil, m.IDRaw(), out)
}

func orNone(d string) string {
	if d == "" {
		return "none"
	}
	return d
}

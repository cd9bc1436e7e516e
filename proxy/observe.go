package proxy

import (
	"bytes"
	"context"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// chain follows the pages of tools/list the downstream fetches (observe
// and audit modes): a chain is complete only from a first page requested
// without a cursor to a last page without nextCursor, each request
// sending the previous page's cursor. A chain joined midway is unknown,
// an unfinished one partial; neither is recorded.
type chain struct {
	active     bool
	nextCursor string
	transcript bytes.Buffer
	pages      int
	last       *decide.List // audit: the decision on the last complete chain
}

// page records one tools/list exchange of the downstream.
func (s *session) page(req, resp *frame.Message) {
	cursor, hasCursor := "", false
	if c, ok := req.Param("cursor"); ok && c.Kind() == jcs.String {
		cursor, hasCursor = c.Str(), true
	}
	s.mu.Lock()
	ch := &s.chain
	switch {
	case !hasCursor:
		ch.active, ch.pages = true, 0
		ch.transcript.Reset()
		ch.transcript.WriteByte('[')
	case !ch.active || cursor != ch.nextCursor:
		// Joined midway (or another chain's cursor): unknown, not recorded.
		ch.active = false
		s.mu.Unlock()
		return
	}
	if ch.pages > 0 {
		ch.transcript.WriteByte(',')
	}
	ch.transcript.Write(req.Raw)
	ch.transcript.WriteByte(',')
	ch.transcript.Write(resp.Raw)
	ch.pages++
	if int64(ch.transcript.Len()) > s.g.cfg.MaxListBytes || ch.pages > s.g.cfg.MaxListPages {
		ch.active = false
		s.mu.Unlock()
		return
	}
	nc, ok := resp.Result.Get("nextCursor")
	if ok && nc.Kind() == jcs.String {
		ch.nextCursor = nc.Str()
		s.mu.Unlock()
		return
	}
	// The last page: the chain is complete.
	ch.active = false
	ch.transcript.WriteByte(']')
	transcript := bytes.Clone(ch.transcript.Bytes())
	name, version, legacy := s.serverName, s.serverVersion, s.legacy
	s.mu.Unlock()

	tl, err := manifest.ParseToolListWith(transcript, manifest.ParseOptions{SkipInvalidTools: true})
	if err != nil || tl.Completeness != manifest.Complete || len(tl.Invalid) > 0 {
		return
	}
	schemas := schemasOf(tl)
	s.mu.Lock()
	s.observed = schemas // for a tools/call's Mcp-Param-* headers
	s.mu.Unlock()
	if s.g.cfg.OnObserved != nil {
		s.g.cfg.OnObserved(manifest.BuildObserved(s.g.cfg.ServerID, tl, tl.Completeness, s.g.cfg.Classifier))
	}
	if s.g.cfg.Mode == Audit {
		b := s.g.baseline.Load()
		l := decide.DecideList(b, &decide.Served{Tools: tl.Tools, Completeness: tl.Completeness,
			Identity: manifest.Identity{Endpoint: s.g.cfg.Target, ResolvedEndpoint: s.g.cfg.TargetResolved, ServerName: name, ServerVersion: version}},
			decide.Options{Profile: s.g.cfg.Profile, Classifier: s.g.cfg.Classifier, HTTPModern: s.httpModern(legacy)})
		s.mu.Lock()
		s.chain.last = l
		s.mu.Unlock()
		s.recordList(l)
		s.g.ready.Store(!l.Withheld)
	}
}

// auditCall logs what enforce would have decided about a forwarded call.
func (s *session) auditCall(ctx context.Context, m *frame.Message) {
	s.mu.Lock()
	l := s.chain.last
	s.mu.Unlock()
	name, args := callTarget(m)
	if l == nil {
		s.logDecision("tools/call", name, "audit_unjudged", []string{"no_complete_list_observed"}, "")
		spanDecision(ctx, "audit_unjudged", "no_complete_list_observed")
		return
	}
	c := l.DecideCall(name, args, decide.CallOptions{Strict: s.g.cfg.StrictArguments})
	if c.Allowed {
		d, _ := l.Decision(name)
		s.logDecision("tools/call", name, "audit_allow", []string{d.Reason}, d.Digest)
		spanDecision(ctx, "audit_allow", d.Reason)
		return
	}
	s.g.cfg.Metrics.refused("audit_" + c.Reason)
	s.logDecision("tools/call", name, "audit_would_deny", []string{c.Reason}, "")
	spanDecision(ctx, "audit_would_deny", c.Reason)
}

package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/telemetry/mcptrace"
)

// Tracing (Config.Tracer). Each downstream request and notification is a
// SERVER span, a child of the trace context the downstream put in
// params._meta (traceparent, tracestate) when that context is valid; a
// malformed or oversized one is dropped — never a parent, never
// forwarded — and the SERVER span starts a trace of its own
// (mcpdrift.trace_context.dropped says why). Each message the gateway
// sends upstream — forwarded, or its own listing's pages — is a CLIENT
// span, a child of the span in its context, and carries that CLIENT
// span's traceparent in its params._meta.
//
// That rewrite of params._meta is the one deliberate exception to the
// gateway forwarding the bytes it received, and it happens only when
// tracing is on: the upstream must see the span that called it, not the
// downstream's (W3C trace context says an intermediary that takes part in
// the trace replaces the parent id). Every other byte of the message is
// kept (mcptrace.RewriteMeta). With tracing off nothing here runs and the
// bytes forwarded are the bytes received.

// traceState is the gateway's tracing: the tracer and what the CLIENT
// spans say about the upstream.
type traceState struct {
	t         mcptrace.Tracer
	transport string
	host      string
	port      int
}

func newTraceState(c *Config) *traceState {
	if c.Tracer == nil {
		return nil
	}
	ts := &traceState{t: c.Tracer, transport: mcptrace.TransportPipe}
	if c.Upstream.URL != "" {
		ts.transport = mcptrace.TransportTCP
		if u, err := url.Parse(c.Upstream.URL); err == nil {
			ts.host = u.Hostname()
			if p, err := strconv.Atoi(u.Port()); err == nil {
				ts.port = p
			} else if u.Scheme == "https" {
				ts.port = 443
			} else {
				ts.port = 80
			}
		}
	}
	return ts
}

// ownWorkKey marks a context in which the gateway sends messages on its
// own behalf through a session (Observe's initialize): no SERVER span.
type ownWorkKey struct{}

// ownWork starts the INTERNAL span of work the gateway does on its own
// behalf (nil end without tracing).
func (g *Gateway) ownWork(ctx context.Context, name string) (context.Context, func()) {
	ctx = context.WithValue(ctx, ownWorkKey{}, true)
	if g.trace == nil {
		return ctx, func() {}
	}
	ctx, sp := g.trace.t.Start(ctx, mcptrace.Request{Kind: mcptrace.Internal, Name: name, Attrs: []mcptrace.Attr{mcptrace.String(mcptrace.KeyGatewayMode, string(g.cfg.Mode))}})
	return ctx, func() { sp.End(mcptrace.Outcome{}) }
}

// serverCell carries, in a SERVER span's context, the outcome of the
// upstream answer to that very message, when it was forwarded: the
// gateway relays that answer, so it is the SERVER span's outcome too.
type serverCell struct {
	m   *frame.Message
	o   mcptrace.Outcome
	set bool

	// The gateway's decision about the message (a tools/call, or any
	// method observe mode refuses), as the decision log records it.
	mu               sync.Mutex
	decision, reason string
}

// spanDecision puts the gateway's decision about the message being
// handled on its SERVER span (mcpdrift.proxy.decision and
// mcpdrift.proxy.reason: fixed codes, never server text); the first
// decision stands. Without tracing it does nothing.
func spanDecision(ctx context.Context, decision, reason string) {
	cell, _ := ctx.Value(serverCellKey{}).(*serverCell)
	if cell == nil {
		return
	}
	cell.mu.Lock()
	defer cell.mu.Unlock()
	if cell.decision == "" {
		cell.decision, cell.reason = decision, reason
	}
}

type serverCellKey struct{}

// handle processes one downstream message (serve), in its SERVER span
// when tracing.
func (s *session) handle(ctx context.Context, m *frame.Message, fwd http.Header, onMsg func([]byte)) reply {
	if where := s.failedReason(); where != "" {
		return s.failedReply(m, where)
	}
	rep := s.serveTraced(ctx, m, fwd, onMsg)
	if where := s.failedReason(); where != "" && !succeeded(rep) {
		return s.failedReply(m, where) // a fault ended the session while m was answered
	}
	return rep
}

// serveTraced is serve in m's SERVER span when tracing.
func (s *session) serveTraced(ctx context.Context, m *frame.Message, fwd http.Header, onMsg func([]byte)) reply {
	tr := s.g.trace
	if tr == nil || m.Kind.IsResponse() || ctx.Value(ownWorkKey{}) != nil {
		return s.serve(ctx, m, fwd, onMsg)
	}
	parent, perr := mcptrace.FromMeta(m)
	r := mcptrace.Request{Kind: mcptrace.Server, Method: m.Method, ID: string(m.IDRaw()), Transport: s.downstreamTransport(),
		SessionID: s.id, Parent: parent, Attrs: []mcptrace.Attr{mcptrace.String(mcptrace.KeyGatewayMode, string(s.g.cfg.Mode))}}
	if v, ok := metaVersion(m); ok {
		r.ProtocolVersion = v
	} else {
		s.mu.Lock()
		r.ProtocolVersion = s.version
		s.mu.Unlock()
	}
	if m.Method == "tools/call" {
		r.Target, _ = callTarget(m)
	}
	if perr != nil {
		r.Attrs = append(r.Attrs, mcptrace.String(mcptrace.KeyContextDropped, perr.Error()))
	}
	ctx, sp := tr.t.Start(ctx, r)
	cell := &serverCell{m: m}
	rep := s.serve(context.WithValue(ctx, serverCellKey{}, cell), m, fwd, onMsg)
	o := cell.o
	if !cell.set {
		o = replyOutcome(rep)
	}
	cell.mu.Lock()
	if cell.decision != "" {
		o.Attrs = append(o.Attrs, mcptrace.String(mcptrace.KeyGatewayDecision, cell.decision))
		if cell.reason != "" {
			o.Attrs = append(o.Attrs, mcptrace.String(mcptrace.KeyGatewayReason, cell.reason))
		}
	}
	cell.mu.Unlock()
	sp.End(o)
	return rep
}

// downstreamTransport: an HTTP downstream (a legacy session, or the
// shared stateless traffic, which has nothing to emit to) or stdio.
func (s *session) downstreamTransport() string {
	if s.http != nil || s.emit == nil {
		return mcptrace.TransportTCP
	}
	return mcptrace.TransportPipe
}

// replyOutcome is the outcome of a reply the gateway composed itself (a
// refusal, a served list) or relayed from an upstream refusal. Its own
// errors are small (their message is clipped to 1 KiB), so only a body
// under 64 KiB is read again; a larger one is a served list.
func replyOutcome(rep reply) mcptrace.Outcome {
	var o mcptrace.Outcome
	switch {
	case rep.err != nil:
		o.HTTPStatus = rep.err.Status
		if rep.err.Status != 0 {
			o.Failure = strconv.Itoa(rep.err.Status)
		} else {
			o.Failure = "upstream_error"
		}
		return o
	case rep.body == nil || len(rep.body) > 64<<10:
		return o
	}
	o.HTTPStatus = rep.status
	if m, err := frame.Parse(rep.body); err == nil {
		o = messageOutcome(m, rep.status)
	}
	return o
}

// messageOutcome reads an answer: its JSON-RPC error code, or a tool
// result's isError.
func messageOutcome(m *frame.Message, status int) mcptrace.Outcome {
	o := mcptrace.Outcome{HTTPStatus: status}
	switch m.Kind {
	case frame.ErrorResponse:
		o.RPCCode, o.HasRPCCode = m.Code, true
	case frame.Response:
		if v, ok := m.Result.Get("isError"); ok && v.Kind() == jcs.True {
			o.ToolError = true
		}
	}
	return o
}

// tracedList is the gateway's own listing in an INTERNAL tools/list span,
// the parent of its pages' CLIENT spans.
func (s *session) tracedList(ctx context.Context, fwd http.Header) (*manifest.ToolList, jcs.Value, error) {
	tr := s.g.trace
	if tr == nil {
		return s.listUpstream(ctx, fwd)
	}
	ctx, sp := tr.t.Start(ctx, mcptrace.Request{Kind: mcptrace.Internal, Name: "tools/list", Method: "tools/list", Transport: tr.transport,
		ServerAddress: tr.host, ServerPort: tr.port, Attrs: []mcptrace.Attr{mcptrace.String(mcptrace.KeyGatewayMode, string(s.g.cfg.Mode))}})
	tl, first, err := s.listUpstream(ctx, fwd)
	o := mcptrace.Outcome{}
	if err != nil {
		o.Failure = "list_incomplete"
	} else {
		o.Attrs = []mcptrace.Attr{mcptrace.Int(mcptrace.KeyListPages, int64(tl.Pages)), mcptrace.Bool(mcptrace.KeyListComplete, true)}
	}
	sp.End(o)
	return tl, first, err
}

// tracedUpstream is an upstream link whose requests and notifications
// are CLIENT spans carrying their traceparent upstream.
type tracedUpstream struct {
	upstream
	tr *traceState
}

// isHTTP reports whether an upstream link speaks HTTP (traced or not).
func isHTTP(up upstream) bool {
	if t, ok := up.(*tracedUpstream); ok {
		up = t.upstream
	}
	_, ok := up.(*httpUpstream)
	return ok
}

// traced wraps a new upstream link when tracing is on.
func (g *Gateway) traced(up upstream) upstream {
	if g.trace == nil || up == nil {
		return up
	}
	return &tracedUpstream{upstream: up, tr: g.trace}
}

// start starts the CLIENT span of m and returns the bytes and the parse
// to send: m with the span's context in params._meta.
func (u *tracedUpstream) start(ctx context.Context, raw []byte, m *frame.Message) (context.Context, mcptrace.Span, []byte, *frame.Message) {
	r := mcptrace.Request{Kind: mcptrace.Client, Method: m.Method, ID: string(m.IDRaw()), Transport: u.tr.transport, ServerAddress: u.tr.host, ServerPort: u.tr.port}
	if v, ok := metaVersion(m); ok {
		r.ProtocolVersion = v
	}
	if m.Method == "tools/call" {
		r.Target, _ = callTarget(m)
	}
	ctx, sp := u.tr.t.Start(ctx, r)
	out := mcptrace.RewriteMeta(m, sp.Context())
	if string(out) == string(raw) {
		return ctx, sp, raw, m
	}
	nm, err := frame.Parse(out)
	if err != nil || nm.Kind != m.Kind {
		return ctx, sp, raw, m // cannot happen (RewriteMeta keeps the message valid): send it as it came
	}
	return ctx, sp, out, nm
}

func (u *tracedUpstream) request(ctx context.Context, raw []byte, m *frame.Message, fwd http.Header, onMsg func(*frame.Message)) (*answer, error) {
	ctx, sp, raw2, m2 := u.start(ctx, raw, m)
	resp, err := u.upstream.request(ctx, raw2, m2, fwd, onMsg)
	var o mcptrace.Outcome
	if err != nil {
		o = replyOutcome(reply{err: asUpstreamError(err)})
	} else {
		o = messageOutcome(resp.Message, resp.status)
	}
	sp.End(o)
	if cell, ok := ctx.Value(serverCellKey{}).(*serverCell); ok && cell.m == m {
		cell.o, cell.set = o, true
	}
	return resp, err
}

func (u *tracedUpstream) send(ctx context.Context, raw []byte, m *frame.Message, fwd http.Header) error {
	if m == nil || m.Kind != frame.Notification {
		return u.upstream.send(ctx, raw, m, fwd) // a response to a server request: as it came
	}
	ctx, sp, raw2, m2 := u.start(ctx, raw, m)
	err := u.upstream.send(ctx, raw2, m2, fwd)
	o := mcptrace.Outcome{}
	if err != nil {
		o = replyOutcome(reply{err: asUpstreamError(err)})
	}
	sp.End(o)
	return err
}

func asUpstreamError(err error) *upstreamError {
	if ue, ok := err.(*upstreamError); ok {
		return ue
	}
	return &upstreamError{Msg: "transport"}
}

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/catalog"
	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/surface"
)

// observeMethods are what observe mode forwards.
var observeMethods = map[string]bool{
	"initialize": true, "notifications/initialized": true, "server/discover": true, "ping": true,
	"tools/list": true, "notifications/tools/list_changed": true, "subscriptions/listen": true,
	"notifications/cancelled": true,
}

// Error codes and the data member of the gateway's own errors (a
// contract: see docs/gateway.md, "The gateway's JSON-RPC errors").
const (
	dataSource = "mcpdrift-proxy"
	// reasonNotificationUndefined: a message without an id that is not a
	// notification the specification defines in its direction.
	reasonNotificationUndefined = "notification_undefined"
	// reasonResponseUnsolicited: a server's response outside the exchange
	// of the request it answers.
	reasonResponseUnsolicited = "response_unsolicited"
)

// session pairs one downstream conversation with one upstream link.
type session struct {
	g  *Gateway
	id string // the id the gateway gave a legacy HTTP session ("" otherwise)
	up upstream

	// emit delivers server→client messages that arrive outside any
	// request (a stdio downstream's stdout, a legacy session's GET
	// stream). It must not block for long.
	emit func([]byte)
	http *httpSession // a legacy HTTP session's stream (nil otherwise)

	mu            sync.Mutex
	legacy        bool   // the downstream initialized (a legacy session)
	version       string // the revision initialize agreed on
	serverName    string
	serverVersion string
	meta          []byte // the downstream's last 2026-07-28 params._meta (raw)
	fwd           http.Header
	gate          *gatedList
	inDoubt       bool
	identified    bool // a 2026-07-28 upstream said who it is (server/discover)
	lastUsed      time.Time
	observed      *schemaIndex // inputSchemas of the list the downstream last fully observed (audit)
	schemasTried  time.Time    // audit last listed the upstream for them (listSchemas)
	closed        bool
	chain         chain
	// changes counts the list_changed notifications seen: a gated list
	// from a listing that started before the last one is not fresh.
	changes uint64
	// failed is where the fault that ended the session happened (fault.go);
	// dead is closed then.
	failed string
	dead   chan struct{}

	lmu sync.Mutex // one listing of the upstream at a time

	// surf is the model-facing surface in enforce mode (surface.go),
	// under mu.
	surf surfaceState
}

// gatedList is the decision on the latest listing and what to serve.
type gatedList struct {
	list     *decide.List
	result   []byte // the tools/list result served (enforce)
	at       time.Time
	ttl      time.Duration
	baseline *decide.Baseline
	stale    bool         // the upstream could not be listed; this is the previous list
	schemas  *schemaIndex // the served tools' inputSchemas, for the Mcp-Param-* headers of a 2026-07-28 tools/call
	changes  uint64       // session.changes when its listing started
}

func newSession(g *Gateway, id string, up upstream, emit func([]byte)) *session {
	s := &session{g: g, id: id, up: up, emit: emit, lastUsed: g.cfg.Now(), dead: make(chan struct{})}
	up.onFault(s.fault)
	up.listen(func(m *frame.Message) { s.fromServer(m, s.emitOrDrop) })
	g.cfg.Metrics.sessionOpened()
	return s
}

func (s *session) emitOrDrop(b []byte) {
	if s.emit != nil {
		s.emit(b)
	}
}

func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.up.close()
	s.g.cfg.Metrics.sessionClosed()
}

// invalidate drops the gated list (a new baseline): the next list or call
// gates again.
func (s *session) invalidate() {
	s.mu.Lock()
	s.gate = nil
	s.mu.Unlock()
}

// reply is what the downstream gets for one message.
type reply struct {
	body []byte         // the response (nil for a notification or a response)
	err  *upstreamError // an upstream HTTP refusal to relay as it came (401/403)
	// status is the HTTP status of an error response to relay (the
	// upstream's, or the gateway's own); 0 is 200.
	status int
	// sse: the upstream answered on an event stream; an HTTP downstream
	// that accepts one is answered on one too.
	sse bool
}

// serve processes one downstream message (handle, trace.go, calls it,
// in the message's SERVER span when tracing). onMsg carries the server's
// messages that arrive while a request is answered (to the same stream).
func (s *session) serve(ctx context.Context, m *frame.Message, fwd http.Header, onMsg func([]byte)) reply {
	s.mu.Lock()
	s.lastUsed = s.g.cfg.Now()
	if fwd != nil {
		s.fwd = fwd
		if a := fwd.Get("Authorization"); a != "" && s.g.cfg.Upstream.ForwardAuthorization {
			// A downstream's credential, held only when it cannot be
			// ordinary text, and among a bounded few (redact.AddForwarded).
			s.g.cfg.Secrets.AddForwarded("Authorization", a)
		}
	}
	if meta, ok := m.Meta(); ok && m.Kind == frame.Request {
		s.meta = bytes.Clone(meta.Raw()) // a fresh copy: a listing may be reading the last one
	}
	fwd = s.fwd
	s.mu.Unlock()
	mode := s.g.cfg.Mode
	method := m.Method

	switch {
	case m.Kind == frame.Notification && !mcpwire.NotificationFromClient(method):
		// A request's method without an id, or a method the specification
		// does not define: a server that dispatches on the method alone
		// would run it, and nothing could answer it. Never forwarded.
		s.g.cfg.Metrics.request(method, "refused")
		s.logDecision(method, "", "deny", []string{reasonNotificationUndefined}, "")
		spanDecision(ctx, "deny", reasonNotificationUndefined)
		return reply{body: errorBody(m, mcpwire.CodeInvalidRequest, "Invalid Request: "+safetext.Quote(safetext.Clip(method, 128))+
			" is not a notification a client may send (a request needs an id)", reasonNotificationUndefined, nil), status: http.StatusBadRequest}
	case m.Kind.IsResponse():
		// The downstream answers a server request: forward as it came.
		_ = s.up.send(ctx, m.Raw, m, fwd)
		return reply{}
	case mode == Observe && !observeMethods[method]:
		s.g.cfg.Metrics.request(method, "refused")
		s.logDecision(method, "", "deny", []string{"observe_mode"}, "")
		spanDecision(ctx, "deny", "observe_mode")
		if m.Kind == frame.Notification {
			return reply{}
		}
		return ownError(m, mcpwire.CodeMethodNotFound, "mcpdrift proxy is in observe mode: only the listing methods reach the server", "observe_mode", nil)
	case m.Kind == frame.Notification:
		if err := s.up.send(ctx, m.Raw, m, fwd); err == nil && method == "notifications/initialized" {
			s.up.listen(func(x *frame.Message) { s.fromServer(x, s.emitOrDrop) })
		}
		s.g.cfg.Metrics.request(method, "forwarded")
		return reply{}
	case method == "tools/list" && mode == Enforce:
		return s.serveList(ctx, m, fwd)
	case mode == Enforce && (surfaceListKinds[method] != "" || method == "prompts/get" || method == "completion/complete"):
		if r, ok := s.serveSurface(ctx, m, fwd); ok {
			return r
		}
	case method == "tools/call" && mode == Enforce:
		name, args := callTarget(m)
		g, err := s.gated(ctx, fwd)
		if err != nil {
			return s.refuse(ctx, m, name, decide.Call{Reason: decide.ReasonWithheld, Message: "the upstream could not be listed: " + err.Error()})
		}
		c := g.list.DecideCall(name, args, decide.CallOptions{Strict: s.g.cfg.StrictArguments, InDoubt: s.doubt()})
		if !c.Allowed {
			return s.refuse(ctx, m, name, c)
		}
		d, _ := g.list.Decision(name)
		s.logDecision(method, name, "allow", []string{d.Reason}, d.Digest)
		spanDecision(ctx, "allow", d.Reason)
		s.g.cfg.Metrics.request(method, "allow")
	}
	if method == "tools/call" {
		var e *frame.Error
		if fwd, e = s.callHeaders(ctx, m, fwd); e != nil {
			s.g.cfg.Metrics.request(method, "refused")
			return reply{body: frame.AppendError(nil, m.IDRaw(), e), status: e.Status}
		}
	}
	// Forward a request, and learn from its answer.
	resp, err := s.up.request(ctx, m.Raw, m, fwd, func(x *frame.Message) { s.fromServer(x, onMsg) })
	if err != nil {
		ue, _ := err.(*upstreamError)
		if ue != nil && (ue.Status == http.StatusUnauthorized || ue.Status == http.StatusForbidden) {
			return reply{err: ue}
		}
		s.g.cfg.Metrics.request(method, "upstream_error")
		reason := "upstream_error"
		if ue != nil && ue.Reason != "" {
			reason = ue.Reason
		}
		return ownError(m, mcpwire.CodeInternalError, "the upstream did not answer: "+err.Error(), reason, nil)
	}
	s.g.cfg.Metrics.request(method, "forwarded")
	s.learn(m, resp.Message)
	if mode == Audit && method == "tools/call" {
		s.auditCall(ctx, m)
	}
	rep := reply{body: resp.Raw, sse: resp.sse}
	if mode == Enforce && (method == "initialize" || method == "server/discover") {
		rep.body = s.gateInstructions(ctx, m, resp.Message, rep.body)
	}
	if resp.Kind == frame.ErrorResponse && resp.status >= 400 {
		rep.status = resp.status
	}
	return rep
}

// callHeaders returns the headers to forward a 2026-07-28 tools/call
// with: fwd and the call's Mcp-Param-* headers (SEP-2243). When the
// gateway knows the tool's inputSchema (the gated list, the list the
// downstream fully observed, or in audit the upstream's list, fetched
// once when neither is had), they are derived from the body — a stdio
// downstream has none to give, and an HTTP upstream needs them — and an
// HTTP downstream's own must agree, as a server checks them: -32020 (400)
// for one missing, repeated or not the argument's value, and for one
// the schema annotates whose argument gives none (absent, null, not a
// string, integer or boolean). A header the schema does not annotate,
// and every header of a tool the gateway does not know, is forwarded as
// it came.
func (s *session) callHeaders(ctx context.Context, m *frame.Message, fwd http.Header) (http.Header, *frame.Error) {
	var down http.Header
	ps, fromHTTP := ctx.Value(downstreamKey{}).(*postStream)
	if fromHTTP {
		down = ps.params
	}
	httpUp := isHTTP(s.up)
	if !modernRequest(m) || !fromHTTP && !httpUp {
		return fwd, nil
	}
	name, args := callTarget(m)
	schema, known := s.callSchema(name)
	if !known && httpUp && s.g.cfg.Mode == Audit {
		// Audit lists nothing of its own, so a call before any list the
		// downstream observed would go to an HTTP upstream without the
		// headers it requires (enforce has its gated list): the upstream
		// is listed once for the session's schemas.
		s.listSchemas(ctx, fwd)
		schema, known = s.callSchema(name)
	}
	out := make(http.Header, len(fwd)+len(down))
	for k, vs := range fwd {
		out[k] = vs
	}
	if known {
		phs, names := frame.ParamHeadersAndNames(schema, args, fromHTTP)
		if fromHTTP {
			if e := frame.CheckParamHeaders(down, phs, names); e != nil {
				return nil, e
			}
		}
		for _, ph := range phs {
			out.Set(ph.Name, ph.Value)
		}
	}
	for k, vs := range down {
		if _, set := out[k]; !set {
			out[k] = vs
		}
	}
	return out, nil
}

// callSchema is the inputSchema the gateway knows for a tool: its gated
// list's, else the one the downstream last fully observed.
func (s *session) callSchema(name string) (jcs.Value, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate != nil {
		if schema, ok := s.gate.schemas.get(name); ok {
			return schema, true
		}
	}
	return s.observed.get(name)
}

// listSchemas lists the upstream for the schemas of an audit session's
// calls (s.observed) when no list was observed before: once, when it
// succeeds. The listing is the session's, not the call's: a client that
// gives up on its call does not cancel it (the shared stateless session
// would otherwise go without schemas). A listing that fails or is not
// complete leaves them unknown, and is tried again after
// schemaRetryInterval, not on every call.
func (s *session) listSchemas(ctx context.Context, fwd http.Header) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	now := s.g.cfg.Now()
	s.mu.Lock()
	skip := s.observed != nil || !s.schemasTried.IsZero() && now.Sub(s.schemasTried) < schemaRetryInterval
	if !skip {
		s.schemasTried = now
	}
	s.mu.Unlock()
	if skip {
		return
	}
	tl, _, err := s.tracedList(context.WithoutCancel(ctx), fwd)
	if err != nil || tl.Completeness != manifest.Complete {
		return
	}
	schemas := schemasOf(tl)
	s.mu.Lock()
	if s.observed == nil {
		s.observed = schemas
	}
	s.mu.Unlock()
}

// listRetry is how long a session serves the withholding of a listing
// that failed before it lists the upstream again.
const listRetry = 2 * time.Second

// schemaRetryInterval is how long an audit session waits before listing
// the upstream for its schemas again after a listing failed.
const schemaRetryInterval = 5 * time.Second

// modernRequest: a request of the 2026-07-28 revision (params._meta
// carries its protocolVersion).
func modernRequest(m *frame.Message) bool {
	v, ok := metaVersion(m)
	return ok && v >= mcpwire.Rev20260728
}

// metaVersion is params._meta's protocolVersion, when it is a string.
func metaVersion(m *frame.Message) (string, bool) {
	meta, ok := m.Meta()
	if !ok {
		return "", false
	}
	v, ok := meta.Get(mcpwire.MetaProtocolVersion)
	if !ok || v.Kind() != jcs.String {
		return "", false
	}
	return v.Str(), true
}

// learn records what an answer says about the upstream: the revision and
// serverInfo of initialize and server/discover; the pages of tools/list in
// observe and audit.
func (s *session) learn(m *frame.Message, resp *frame.Message) {
	if resp.Kind != frame.Response {
		return
	}
	switch m.Method {
	case "initialize":
		s.mu.Lock()
		s.gate = nil // gated, if at all, before the upstream said who it is
		s.legacy = true
		if v, ok := resp.Result.Get("protocolVersion"); ok && v.Kind() == jcs.String {
			s.version = v.Str()
			s.up.negotiated(s.version)
		}
		if si, ok := resp.Result.Get("serverInfo"); ok {
			s.serverName, s.serverVersion = implementation(si)
		}
		s.mu.Unlock()
		if s.g.cfg.Mode == Enforce {
			s.noteInstructions(resp.Result)
		}
	case "server/discover":
		if s.learnServerInfo(resp.Result) {
			s.mu.Lock()
			s.gate = nil // decided, if at all, against what was known before
			s.mu.Unlock()
		}
		if s.g.cfg.Mode == Enforce {
			s.noteInstructions(resp.Result)
		}
	case "tools/list":
		if s.g.cfg.Mode != Enforce {
			s.page(m, resp)
		}
	}
}

func implementation(v jcs.Value) (name, version string) {
	if v.Kind() != jcs.Object {
		return "", ""
	}
	if n, ok := v.Get("name"); ok && n.Kind() == jcs.String {
		name = safetext.Clip(n.Str(), 256)
	}
	if n, ok := v.Get("version"); ok && n.Kind() == jcs.String {
		version = safetext.Clip(n.Str(), 256)
	}
	return name, version
}

// fromServer handles a message the server sent (outside or during a
// request) and forwards it with fwd. A list_changed is held in enforce
// mode until the new list is gated: calls meanwhile are refused. fwd may
// be a request's stream that ends before that: a downstream handler
// delivers what comes after its end elsewhere (session.late), never to
// the finished response.
func (s *session) fromServer(m *frame.Message, fwd func([]byte)) {
	if m.Kind == frame.Notification && !mcpwire.NotificationFromServer(m.Method) {
		// Only the notifications the specification lets a server send
		// reach the downstream.
		s.logDecision(m.Method, "", "deny", []string{reasonNotificationUndefined}, "")
		return
	}
	if m.Kind.IsResponse() {
		// A response outside the exchange it answers (the session's GET
		// stream, a stdio server's output) answers nothing the gateway
		// sent: forwarded, the downstream would take it for the answer to
		// its own request with that id — a list that never went through
		// the decision. Every answer the downstream gets comes from the
		// exchange of its request.
		s.logDecision("", "", "deny", []string{reasonResponseUnsolicited}, "")
		return
	}
	if (m.Method == "notifications/prompts/list_changed" || m.Method == "notifications/resources/list_changed") && m.Kind == frame.Notification && s.g.cfg.Mode == Enforce {
		s.surfaceChanged(m, fwd)
		return
	}
	if m.Method == "notifications/tools/list_changed" && m.Kind == frame.Notification {
		switch s.g.cfg.Mode {
		case Enforce:
			s.mu.Lock()
			s.inDoubt = true
			s.gate = nil
			s.changes++
			change := s.changes
			s.mu.Unlock()
			s.g.cfg.Metrics.relist("list_changed")
			go func() {
				defer s.guard("re-observing the upstream after list_changed")
				ctx, cancel := context.WithTimeout(context.Background(), s.g.cfg.ListTimeout+time.Second)
				defer cancel()
				_, _ = s.gated(ctx, nil)
				s.mu.Lock()
				if s.changes == change {
					s.inDoubt = false // no later list_changed waits for its own listing
				}
				s.mu.Unlock()
				if fwd != nil {
					fwd(m.Raw)
				}
			}()
			return
		case Audit:
			s.mu.Lock()
			s.chain = chain{}
			s.mu.Unlock()
		}
	}
	if fwd != nil {
		fwd(m.Raw)
	}
}

func (s *session) doubt() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inDoubt
}

// refuse answers a tools/call the gateway will not forward: -32602, the
// way the specification answers an unknown tool, with mcpdrift's reason in
// data. It never reaches the upstream.
func (s *session) refuse(ctx context.Context, m *frame.Message, name string, c decide.Call) reply {
	s.g.cfg.Metrics.refused(c.Reason)
	s.g.cfg.Metrics.request("tools/call", "deny")
	s.logDecision("tools/call", name, "deny", []string{c.Reason}, "")
	spanDecision(ctx, "deny", c.Reason)
	data := map[string]string{"reason": c.Reason}
	if c.Pointer != "" {
		data["pointer"] = c.Pointer
	}
	if c.Constraint != "" {
		data["constraint"] = c.Constraint
	}
	msg := "tool " + safetext.Quote(name) + " refused by the gateway: " + c.Message
	if c.Reason == decide.ReasonUnknownTool || c.Reason == decide.ReasonHiddenTool {
		msg = "Unknown tool: " + safetext.Quote(safetext.Clip(name, 128))
	}
	return ownError(m, mcpwire.CodeInvalidParams, msg, c.Reason, data)
}

// ownError is the gateway's own error answer to m (errorBody), with the
// HTTP status the 2026-07-28 revision gives its code when m is a request
// of that revision: 404 for -32601 (which clients read to tell a modern
// server from a legacy one), 400 for -32602 and the header and version
// errors, as a server answers; 200 otherwise (an earlier revision's
// errors, and -32603, ride a 200 as they do from a server).
func ownError(m *frame.Message, code int, msg, reason string, extra map[string]string) reply {
	r := reply{body: errorBody(m, code, msg, reason, extra)}
	if modernRequest(m) {
		r.status = modernErrorStatus(code)
	}
	return r
}

// modernErrorStatus is the HTTP status of a 2026-07-28 error code (0: 200).
func modernErrorStatus(code int) int {
	switch code {
	case mcpwire.CodeMethodNotFound:
		return http.StatusNotFound
	case mcpwire.CodeInvalidParams, mcpwire.CodeHeaderMismatch, mcpwire.CodeMissingClientCapability, mcpwire.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return 0
}

// errorBody is the gateway's own JSON-RPC error to m: data carries
// {"source":"mcpdrift-proxy","reason":CODE,...}.
func errorBody(m *frame.Message, code int, msg, reason string, extra map[string]string) []byte {
	return frame.AppendError(nil, m.IDRaw(), &frame.Error{Code: code, Message: safetext.ClipEscaped(msg, 1024), Data: errorData(reason, extra)})
}

// errorData is the data member of the gateway's own errors:
// {"source":"mcpdrift-proxy","reason":CODE,...}.
func errorData(reason string, extra map[string]string) []byte {
	catalog.Get(reason) // every reason is catalogued (Get panics on an unknown code)
	data := map[string]string{"source": dataSource, "reason": reason}
	for k, v := range extra {
		data[k] = v
	}
	db, _ := json.Marshal(data)
	return db
}

func callTarget(m *frame.Message) (string, jcs.Value) {
	var name string
	if n, ok := m.Param("name"); ok && n.Kind() == jcs.String {
		name = n.Str()
	}
	args, _ := m.Param("arguments")
	return name, args
}

// serveList answers tools/list from the gated list (enforce): every
// approved, unchanged tool as it was approved (decide.List.ServedTools:
// the pinned tool object's bytes), in one page.
func (s *session) serveList(ctx context.Context, m *frame.Message, fwd http.Header) reply {
	if c, ok := m.Param("cursor"); ok && c.Kind() != jcs.Null {
		s.g.cfg.Metrics.request("tools/list", "refused")
		return ownError(m, mcpwire.CodeInvalidParams, "Invalid cursor: the gateway serves the whole list in one page", "invalid_cursor", nil)
	}
	g, err := s.gated(ctx, fwd)
	if err != nil {
		s.g.cfg.Metrics.request("tools/list", "withheld")
		return ownError(m, mcpwire.CodeInternalError, "the upstream could not be listed: "+err.Error(), decide.ReasonListIncomplete, nil)
	}
	s.g.cfg.Metrics.request("tools/list", "served")
	return reply{body: frame.AppendResult(make([]byte, 0, len(g.result)+len(m.IDRaw())+40), m.IDRaw(), g.result)}
}

// gated returns the current gated list, listing the upstream first when
// there is none, it is older than ttlMs or the relist interval, or the
// baseline changed. Concurrent callers share one listing.
func (s *session) gated(ctx context.Context, fwd http.Header) (*gatedList, error) {
	if g := s.fresh(); g != nil {
		return g, nil
	}
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if g := s.fresh(); g != nil {
		return g, nil
	}
	s.mu.Lock()
	switch prev := s.gate; {
	case prev == nil, prev.changes != s.changes: // a list_changed (counted when it came)
	case prev.baseline != s.g.baseline.Load():
		s.g.cfg.Metrics.relist("baseline_reloaded")
	case prev.ttl > 0 && s.g.cfg.Now().Sub(prev.at) > prev.ttl:
		s.g.cfg.Metrics.relist("ttl")
	default:
		s.g.cfg.Metrics.relist("interval")
	}
	change := s.changes // a list_changed from here on needs a listing after this one
	s.mu.Unlock()
	b := s.g.baseline.Load()
	tl, first, err := s.tracedList(ctx, fwd)
	if err == nil {
		s.identify(ctx, first, fwd)
	}
	now := s.g.cfg.Now()
	s.mu.Lock()
	prev := s.gate
	name, version, legacy, instr := s.serverName, s.serverVersion, s.legacy, s.surf.instructions
	s.mu.Unlock()
	var served *decide.Served
	switch {
	case err != nil && prev != nil && s.g.cfg.ServeStale && !prev.list.Withheld:
		st := *prev
		st.stale, st.at, st.changes = true, now, change
		s.setGate(&st)
		s.logDecision("tools/list", "", "stale", []string{"serve_stale"}, "")
		return &st, nil
	case err != nil:
		served = &decide.Served{Completeness: manifest.Partial}
	default:
		served = &decide.Served{Tools: tl.Tools, Completeness: tl.Completeness, Instructions: instr,
			Identity: manifest.Identity{Endpoint: s.g.cfg.Target, ResolvedEndpoint: s.g.cfg.TargetResolved, ServerName: name, ServerVersion: version}}
		if s.g.cfg.OnObserved != nil && tl.Completeness == manifest.Complete {
			s.g.cfg.OnObserved(manifest.BuildObserved(s.g.cfg.ServerID, tl, tl.Completeness, s.g.cfg.Classifier))
		}
	}
	list := decide.DecideList(b, served, decide.Options{Profile: s.g.cfg.Profile, Classifier: s.g.cfg.Classifier, HTTPModern: s.httpModern(legacy)})
	if err != nil {
		list.Detail = err.Error()
	}
	g := &gatedList{list: list, at: now, baseline: b, result: servedResult(list, first), schemas: newSchemaIndex(list.ServedTools()), changes: change}
	if first.Valid() {
		if t, ok := first.Get("ttlMs"); ok {
			if ms, ok := frame.Int64(t); ok && ms > 0 {
				g.ttl = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if err != nil {
		// A listing that failed withholds the server until the upstream
		// is listed again, which is tried at the next list or call after
		// listRetry, not left to --relist-interval: one failure (a
		// transient one, or one a downstream provoked) must not withhold
		// the server from the session, or every stateless client, for
		// good.
		g.ttl = listRetry
	}
	s.setGate(g)
	s.recordList(list)
	return g, nil
}

// learnServerInfo records the serverInfo a 2026-07-28 result carries in
// its _meta (server/discover's, and every result's SHOULD), and reports
// whether the name or version changed.
func (s *session) learnServerInfo(result jcs.Value) bool {
	if !result.Valid() || result.Kind() != jcs.Object {
		return false
	}
	meta, ok := result.Get("_meta")
	if !ok || meta.Kind() != jcs.Object {
		return false
	}
	si, ok := meta.Get(mcpwire.MetaServerInfo)
	if !ok {
		return false
	}
	name, version := implementation(si)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.legacy {
		return false
	}
	changed := name != s.serverName || version != s.serverVersion
	s.serverName, s.serverVersion, s.identified = name, version, true
	return changed
}

// identify makes sure a session that did not initialize (2026-07-28
// traffic) knows who the upstream is before its list is decided: the
// identity tuple's name and version are part of what is decided, and a
// downstream that lists without discovering first must not have its list
// judged against an unknown name. The listing's first page usually says
// it (first: its result's _meta); when it does not, the upstream's own
// server/discover is asked, once, until it answers. A legacy session
// learnt it from initialize, which is answered before anything after it
// is read. An upstream that says nothing leaves it unknown, and the
// decision says so.
func (s *session) identify(ctx context.Context, first jcs.Value, fwd http.Header) {
	s.learnServerInfo(first)
	s.mu.Lock()
	// The instructions are known only from server/discover: asked too
	// when the baseline pins them (surface.go).
	skip := s.legacy || s.identified && (s.surf.instructions != nil || !surfacePinned(s.g.baseline.Load(), surface.Instructions))
	meta := s.meta
	s.mu.Unlock()
	if skip {
		return
	}
	if len(meta) == 0 {
		meta = defaultMeta(s.g.cfg.Upstream.ClientName, s.g.cfg.Upstream.ClientVersion)
	}
	req := []byte(`{"jsonrpc":"2.0","id":"mcpdrift-proxy-discover","method":"server/discover","params":{"_meta":` + string(meta) + `}}`)
	rm, err := frame.Parse(req)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.g.cfg.ListTimeout)
	defer cancel()
	resp, err := s.up.request(ctx, req, rm, fwd, func(x *frame.Message) { s.fromServer(x, s.emitOrDrop) })
	if err == nil {
		s.learn(rm, resp.Message)
	}
}

// httpModern says whether a session's listing is a 2026-07-28 one over
// HTTP (legacy: the session initialized): the gateway is then a client of
// that transport, and does not serve what its clients must exclude
// (x-mcp-header; decide.Options.HTTPModern), in enforce and in what audit
// says enforce would do.
func (s *session) httpModern(legacy bool) bool {
	return !legacy && s.g.cfg.Upstream.URL != ""
}

func (s *session) setGate(g *gatedList) {
	s.mu.Lock()
	s.gate = g
	s.mu.Unlock()
	s.g.ready.Store(!g.list.Withheld)
}

// fresh returns the gated list when it may still be served.
func (s *session) fresh() *gatedList {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gate
	if g == nil || g.baseline != s.g.baseline.Load() || g.changes != s.changes {
		return nil // a list_changed came after its listing started (maybe in that listing's own stream)
	}
	age := s.g.cfg.Now().Sub(g.at)
	if g.ttl > 0 && age > g.ttl || s.g.cfg.RelistInterval > 0 && age > s.g.cfg.RelistInterval {
		return nil
	}
	return g
}

// recordList logs each tool's decision and updates the gauges.
func (s *session) recordList(l *decide.List) {
	served, hidden := 0, 0
	if l.Withheld {
		s.logDecision("tools/list", "", "withheld", []string{l.Reason}, "")
	}
	for _, n := range l.Notes {
		s.logNote(n)
	}
	for _, d := range l.Tools {
		dec := "serve"
		if !d.Serve {
			dec = "hide"
			hidden++
		} else {
			served++
		}
		reasons := append([]string{d.Reason}, d.DeniedBy...)
		if s.g.cfg.Log != nil {
			s.g.cfg.Log.write(s.g.cfg.Secrets, Record{Time: s.g.cfg.Now(), ServerID: s.g.cfg.ServerID, Session: s.id, Mode: string(s.g.cfg.Mode),
				Method: "tools/list", Tool: d.Name, Decision: dec, ToolDecision: d.Decision, Reasons: reasons, ToolDigest: d.Digest})
		}
	}
	s.g.cfg.Metrics.tools(served, hidden)
	s.g.status(l)
}

// servedResult builds the tools/list result to serve: the first page's
// members other than tools and nextCursor (ttlMs, cacheScope, _meta) as
// the upstream sent them, then the approved tools byte for byte
// (listResult).
func servedResult(l *decide.List, first jcs.Value) []byte {
	served := l.ServedTools()
	return listResult(first, "tools", len(served), func(i int) []byte { return served[i].Raw() })
}

// listResult builds a list result to serve in one page: the first page's
// members other than key and nextCursor as the upstream sent them, then
// key with the n items item gives, byte for byte. A member a decoder
// would take for key or nextCursor ("Tools": Go's encoding/json matches
// names without regard to case), or "__proto__", is left out with them:
// the approved list is the only list served.
func listResult(first jcs.Value, key string, n int, item func(i int) []byte) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	m := 0
	keyKey := safetext.MemberKey(key)
	if first.Valid() && first.Kind() == jcs.Object {
		for i := range first.Len() {
			k, v := first.Member(i)
			if mk := safetext.MemberKey(k.Str()); mk == keyKey || mk == "NEXTCURSOR" || k.Str() == "__proto__" {
				continue
			}
			if m > 0 {
				b.WriteByte(',')
			}
			b.Write(k.Raw())
			b.WriteByte(':')
			b.Write(v.Raw())
			m++
		}
	}
	if m > 0 {
		b.WriteByte(',')
	}
	b.WriteByte('"')
	b.WriteString(key)
	b.WriteString(`":[`)
	size := 2
	for i := range n {
		size += len(item(i)) + 1
	}
	b.Grow(size) // one allocation for a 60 MB list, not a doubling series
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(item(i))
	}
	b.WriteString("]}")
	return b.Bytes()
}

// listUpstream lists the whole upstream itself — every page, within one
// deadline and the gateway's bounds, cursors checked for cycles — in the
// downstream's session and with its client identity, and returns the
// parsed list with its completeness and the first page's result.
func (s *session) listUpstream(ctx context.Context, fwd http.Header) (*manifest.ToolList, jcs.Value, error) {
	// Each page is parsed once, by the envelope, and its tools projected
	// from that parse (pointers as in the transcript of the listing,
	// /2k+1/result/tools/i): the bounds, ids and cursor chain are checked
	// by the page loop, so reading the pages again as a transcript would
	// only repeat the parse of every byte.
	tl := &manifest.ToolList{Form: manifest.FormPages}
	unreadable := 0
	pl := &pageListing{method: "tools/list", key: "tools", entries: "tools", page: func(page int, ts jcs.Value) {
		ptr := "/" + strconv.Itoa(2*page-1) + "/result/tools/"
		for i := range ts.Len() {
			v := ts.Index(i)
			if v.Kind() != jcs.Object {
				unreadable++
				continue
			}
			t, err := manifest.ToolFromValue(v, ptr+strconv.Itoa(i))
			if err != nil {
				unreadable++
				continue
			}
			tl.Tools = append(tl.Tools, t)
		}
		tl.Pages = page
	}}
	first, err := s.upstreamPages(ctx, fwd, pl)
	if err != nil {
		return nil, jcs.Value{}, err
	}
	if pl.errResp != nil {
		return nil, jcs.Value{}, fmt.Errorf("the upstream answered tools/list with error %d", pl.errResp.Code)
	}
	if unreadable > 0 {
		return nil, jcs.Value{}, fmt.Errorf("the listing has %d unreadable tools entries", unreadable)
	}
	if pl.incomplete != "" {
		return nil, jcs.Value{}, fmt.Errorf("the listing is incomplete: %s", pl.incomplete)
	}
	tl.Completeness = manifest.Complete
	tl.Reason = fmt.Sprintf("%d pages; the gateway's own listing starts without a cursor and ends without nextCursor", tl.Pages)
	return tl, first, nil
}

// listRequest composes the gateway's own list page request (method: a
// list method, tools/list or a surface's). Its id is the gateway's (a
// stdio link replaces it anyway).
func listRequest(method string, page int, cursor string, hasCursor, legacy bool, meta []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":"mcpdrift-proxy-list-`)
	b.WriteString(strconv.Itoa(page))
	b.WriteString(`","method":`)
	mb, _ := json.Marshal(method)
	b.Write(mb)
	b.WriteString(`,"params":{`)
	n := 0
	if hasCursor {
		c, _ := json.Marshal(cursor)
		b.WriteString(`"cursor":`)
		b.Write(c)
		n++
	}
	if !legacy && len(meta) > 0 {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"_meta":`)
		b.Write(meta)
	}
	b.WriteString("}}")
	return b.Bytes()
}

func defaultMeta(name, version string) []byte {
	m := map[string]any{
		mcpwire.MetaProtocolVersion:    mcpwire.Rev20260728,
		mcpwire.MetaClientInfo:         map[string]string{"name": name, "version": version},
		mcpwire.MetaClientCapabilities: map[string]any{},
	}
	b, _ := json.Marshal(m)
	return b
}

// logDecision writes one decision record.
func (s *session) logDecision(method, tool, decision string, reasons []string, digest string) {
	if s.g.cfg.Log == nil {
		return
	}
	s.g.cfg.Log.write(s.g.cfg.Secrets, Record{Time: s.g.cfg.Now(), ServerID: s.g.cfg.ServerID, Session: s.id, Mode: string(s.g.cfg.Mode),
		Method: method, Tool: tool, Decision: decision, Reasons: reasons, ToolDigest: digest})
}

// logNote writes a note (a changed server version under review, an
// install move): what was learnt without changing a decision.
func (s *session) logNote(note string) {
	if s.g.cfg.Log == nil {
		return
	}
	s.g.cfg.Log.write(s.g.cfg.Secrets, Record{Time: s.g.cfg.Now(), ServerID: s.g.cfg.ServerID, Session: s.id, Mode: string(s.g.cfg.Mode),
		Event: "note", Note: safetext.Inert(safetext.ClipEscaped(note, 1024))})
}

package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// modernSpoken are the modern revisions this client speaks, newest first
// (a variable so tests can exercise version negotiation).
var modernSpoken = mcpwire.ModernRevisions

// ListTools observes the tools/list of one server: it detects the protocol
// era, fetches every page (within MaxListBytes, MaxListTools and
// MaxListPages when set) and keeps the bytes of each response in
// Observation.Transcript (or hands each page to Config.OnToolsPage).
//
// On error the Observation is still returned when the run got far enough to
// learn something (era, HTTP status and WWW-Authenticate of a refused
// request, a child's stderr, warnings); its Transcript is then nil and its
// Completeness "". It is nil only for a *ConfigError.
func ListTools(ctx context.Context, cfg Config) (*Observation, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	obs := &Observation{HeaderNames: headerNames(c.Headers), ClientCapabilities: c.ClientCapabilities}
	var t transport
	switch {
	case c.BaseURL == "":
		obs.Transport = TransportStdio
		t, err = startStdio(ctx, &c, obs)
	case c.Transport == TransportSSE:
		obs.Transport = TransportSSE
		t, err = openSSE(ctx, &c, obs)
	default:
		obs.Transport = TransportStreamableHTTP
		t, err = newHTTPTransport(&c, obs)
	}
	if err != nil {
		return failed(obs, err)
	}
	r := &run{cfg: &c, obs: obs, t: t, stdio: c.BaseURL == "", client: implementation{Name: c.ClientName, Version: c.ClientVersion}, trace: newTraced(&c)}
	err = r.run(ctx)
	r.t.close(obs)
	if err != nil {
		return failed(obs, err)
	}
	return obs, nil
}

// failed completes the Observation of a run that ended with err.
func failed(obs *Observation, err error) (*Observation, error) {
	obs.Transcript, obs.Completeness = nil, ""
	if he, ok := errors.AsType[*HTTPError](err); ok {
		obs.HTTPStatus, obs.WWWAuthenticate = he.Status, he.WWWAuthenticate
	}
	return obs, err
}

type run struct {
	cfg      *Config
	obs      *Observation
	t        transport
	stdio    bool
	client   implementation
	lastID   int64
	answered bool    // the server has answered a request
	rev      string  // the modern revision in use; "" in the legacy era
	trace    *traced // nil without Config.Tracer
	// handshake is the server/discover (modern) or initialize (legacy)
	// result the run went on from: its capabilities and instructions are
	// the surface's (surface.go). Not valid when there was none.
	handshake jcs.Value
}

// meta is the per-request _meta at rev.
func (r *run) meta(rev string) map[string]any {
	return requestMeta(rev, r.client, r.cfg.ClientCapabilities)
}

func (r *run) request(method string, params any) *rpcRequest {
	r.lastID++
	return newRequest(r.lastID, method, params)
}

func (r *run) roundTrip(ctx context.Context, req *rpcRequest) (*reply, error) {
	var rep *reply
	var err error
	if r.trace != nil {
		rep, err = r.tracedRoundTrip(ctx, req)
	} else {
		rep, err = r.t.roundTrip(ctx, req, !r.answered)
	}
	if err == nil {
		r.answered = true
	}
	return rep, err
}

func (r *run) run(ctx context.Context) error {
	if r.obs.Transport == TransportSSE {
		// 2026-07-28 has no HTTP+SSE transport, so nothing modern is tried.
		r.obs.RevisionReason = "the HTTP+SSE transport (2024-11-05, deprecated) has no server/discover: the revision is not claimed"
	} else if mcpwire.IsModern(r.cfg.PreferredRevision) {
		modern, err := r.discover(ctx)
		if err != nil {
			return err
		}
		if modern {
			if err := r.list(ctx); err != nil {
				return err
			}
			r.afterList(ctx)
			return r.callTools(ctx)
		}
	} else {
		r.obs.RevisionReason = "PreferredRevision is a legacy revision, so server/discover was not sent: the revision is not claimed"
	}
	if err := r.initialize(ctx); err != nil {
		status := r.sseFallback(err)
		if status == 0 {
			return err
		}
		if err := r.switchToSSE(ctx, status, err); err != nil {
			return err
		}
		if err := r.initialize(ctx); err != nil {
			return err
		}
	}
	if err := r.list(ctx); err != nil {
		return err
	}
	r.afterList(ctx)
	return r.callTools(ctx)
}

// afterList observes the surface when asked (Config.Surface).
func (r *run) afterList(ctx context.Context) {
	if r.cfg.Surface != nil {
		r.observeSurface(ctx)
	}
}

// sseFallback reports whether a failed initialize is the one after which
// a Streamable HTTP client tries the deprecated HTTP+SSE transport
// (2024-11-05 backwards compatibility): Transport left to auto, and
// initialize refused with HTTP 400, 404 or 405 (with a JSON-RPC error body
// or none). It returns that status.
func (r *run) sseFallback(err error) int {
	if r.obs.Transport != TransportStreamableHTTP || r.cfg.Transport != TransportAuto {
		return 0
	}
	status := 0
	if he, ok := errors.AsType[*HTTPError](err); ok && he.Method == methodInitialize {
		status = he.Status
	} else if pe, ok := errors.AsType[*ProtocolError](err); ok && pe.Method == methodInitialize {
		status = pe.HTTPStatus
	}
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return status
	}
	return 0
}

// switchToSSE replaces the Streamable HTTP transport with an HTTP+SSE one
// on the same URL. When the GET does not open an event stream either, the
// initialize error stands (with a warning saying what GET got).
func (r *run) switchToSSE(ctx context.Context, status int, initErr error) error {
	r.t.close(r.obs)
	r.obs.warn(fmt.Sprintf("initialize was refused with HTTP %d; trying the deprecated HTTP+SSE transport (GET for an event stream)", status))
	t, err := openSSE(ctx, r.cfg, r.obs)
	if err != nil {
		if ne, ok := errors.AsType[*notSSEError](err); ok {
			r.obs.warn("GET did not open an HTTP+SSE stream either (" + ne.reason + ")")
			r.t = closedTransport{}
			return initErr
		}
		// The GET was answered as an event stream (or refused with 401,
		// 403): the run failed speaking HTTP+SSE.
		r.t, r.obs.Transport = closedTransport{}, TransportSSE
		return err
	}
	r.t, r.answered = t, false
	r.obs.Transport = TransportSSE
	r.obs.RevisionReason = "Streamable HTTP was refused and the server speaks the HTTP+SSE transport (2024-11-05, deprecated), which has no server/discover: the revision is not claimed"
	return nil
}

// callTools sends Config.Calls. A call that fails does not end the run:
// its outcome says what happened.
func (r *run) callTools(ctx context.Context) error {
	for _, c := range r.cfg.Calls {
		params := map[string]any{"name": c.Name, "arguments": c.Arguments}
		if r.rev != "" {
			params["_meta"] = r.meta(r.rev)
		}
		out := CallOutcome{Name: c.Name}
		req := r.request(methodToolsCall, params)
		if r.rev != "" && !r.stdio {
			req.params = paramHeaders(c)
		}
		rep, err := r.roundTrip(ctx, req)
		if err == nil {
			var res jcs.Value
			res, err = r.expect(req, rep)
			if err == nil {
				out.Result = append(json.RawMessage(nil), res.Raw()...)
			}
		}
		if pe, ok := errors.AsType[*ProtocolError](err); ok {
			out.Code, out.Message = pe.Code, pe.Message
		} else if err != nil {
			out.Err, out.InputRequired = err.Error(), inputRequired(rep)
		}
		r.obs.Calls = append(r.obs.Calls, out)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// paramHeaders are the Mcp-Param-{Name} headers of a call (SEP-2243):
// none when the schema or the arguments are not JSON.
func paramHeaders(c ToolCall) []frame.ParamHeader {
	if len(c.InputSchema) == 0 {
		return nil
	}
	schema, err := jcs.Parse(c.InputSchema)
	if err != nil {
		return nil
	}
	args, err := jcs.Parse(c.Arguments)
	if err != nil {
		return nil
	}
	return frame.ParamHeaders(schema.Root(), args.Root())
}

func httpErr(method string, rep *reply) error {
	return &HTTPError{Method: method, Status: rep.status, WWWAuthenticate: rep.wwwAuth}
}

func okStatus(s int) bool { return s == 0 || s >= 200 && s <= 299 }

// expect returns the result of a reply or the error it amounts to.
func (r *run) expect(req *rpcRequest, rep *reply) (jcs.Value, error) {
	switch {
	case rep.status == http.StatusUnauthorized || rep.status == http.StatusForbidden:
		return jcs.Value{}, httpErr(req.Method, rep)
	case rep.msg != nil && rep.msg.isErr:
		return jcs.Value{}, rep.msg.protocolError(req.Method, rep.status)
	case rep.msg != nil:
		if !okStatus(rep.status) {
			r.obs.warn(fmt.Sprintf("%s: a result arrived with HTTP %d", req.Method, rep.status))
		}
		if rep.msg.result.Kind() != jcs.Object {
			return jcs.Value{}, &ResponseError{Method: req.Method, HTTPStatus: rep.status, Reason: "the result is a JSON " + rep.msg.result.Kind().String() + ", not an object"}
		}
		if err := checkResultType(rep.msg.result); err != nil {
			return jcs.Value{}, &ResponseError{Method: req.Method, HTTPStatus: rep.status, Reason: err.Error()}
		}
		return rep.msg.result, nil
	case !okStatus(rep.status):
		return jcs.Value{}, httpErr(req.Method, rep)
	}
	return jcs.Value{}, &ResponseError{Method: req.Method, HTTPStatus: rep.status, Reason: rep.problem}
}

// legacy records why the run falls back to initialize.
func (r *run) legacy(why string) (bool, error) {
	r.obs.RevisionReason = why + ": the revision is not claimed"
	return false, nil
}

// discover sends server/discover and decides the era (§5.4): a result or a
// recognized modern error means modern; anything else — no JSON-RPC body,
// another error code, -32601 without HTTP 404, or (stdio) no answer within
// StartupTimeout — means legacy. It reports whether the server is modern.
func (r *run) discover(ctx context.Context) (bool, error) {
	rev := r.cfg.PreferredRevision
	for retried := false; ; retried = true {
		req := r.request(methodDiscover, map[string]any{"_meta": r.meta(rev)})
		rep, err := r.roundTrip(ctx, req)
		if err != nil {
			if le, ok := errors.AsType[*LimitError](err); ok && r.stdio && le.Kind == LimitStartupTime {
				r.obs.warn("server/discover got no answer within " + r.cfg.StartupTimeout.String() + "; trying initialize")
				return r.legacy("server/discover got no answer")
			}
			return false, err
		}
		if rep.status == http.StatusUnauthorized || rep.status == http.StatusForbidden {
			return false, httpErr(req.Method, rep)
		}
		m := rep.msg
		switch {
		case m == nil:
			return r.legacy(fmt.Sprintf("server/discover not implemented (HTTP %d, %s)", rep.status, rep.problem))
		case !m.isErr:
			return r.modernFromDiscover(req, rep, rev)
		case m.code == mcpwire.CodeUnsupportedProtocolVersion:
			r.obs.Era = EraModern
			pe := m.protocolError(req.Method, rep.status)
			if alt := pickModern(pe.Supported, rev); alt != "" && !retried {
				r.obs.warn("the server refused " + rev + " and supports " + alt + "; retrying with it")
				rev = alt
				continue
			}
			if !retried && slices.Contains(pe.Supported, rev) {
				// The refusal lists the revision refused: the retry a
				// client makes with a supported version is that one.
				r.obs.warn("the server refused " + rev + " and lists it as supported; retrying with it once")
				continue
			}
			return false, pe
		case mcpwire.IsModernErrorCode(m.code):
			r.obs.Era = EraModern
			return false, m.protocolError(req.Method, rep.status)
		case m.code == mcpwire.CodeMethodNotFound && rep.status == http.StatusNotFound:
			r.obs.Era, r.rev, r.obs.ProtocolRevision = EraModern, rev, rev
			r.obs.RevisionReason = "server/discover answered -32601 with HTTP 404 (a modern server that does not implement it); tools/list was sent at " + rev
			r.obs.warn("the server does not implement server/discover, which 2026-07-28 servers must")
			return true, nil
		}
		return r.legacy(fmt.Sprintf("server/discover not implemented (JSON-RPC error %d%s: %s)", m.code, statusNote(rep.status), quote(m.errMsg)))
	}
}

func statusNote(status int) string {
	if status == 0 {
		return ""
	}
	return fmt.Sprintf(", HTTP %d", status)
}

// pickModern returns a modern revision this client speaks that the server
// lists, other than tried.
func pickModern(supported []string, tried string) string {
	for _, v := range modernSpoken {
		if v != tried && slices.Contains(supported, v) {
			return v
		}
	}
	return ""
}

// modernFromDiscover negotiates the revision from a DiscoverResult.
func (r *run) modernFromDiscover(req *rpcRequest, rep *reply, rev string) (bool, error) {
	res, err := r.expect(req, rep)
	if err != nil {
		return false, err
	}
	r.obs.DiscoverRaw = bytes.Clone(res.Raw())
	r.obs.ServerInfo = metaServerInfo(res)
	var versions []string
	sv, ok := res.Get("supportedVersions")
	if ok && sv.Kind() == jcs.Array {
		for i := range min(sv.Len(), 64) {
			if e := sv.Index(i); e.Kind() == jcs.String {
				versions = append(versions, safetext.Clip(e.Str(), 64))
			}
		}
	}
	reason := "server/discover lists " + rev
	alt := pickModern(versions, rev)
	switch {
	case len(versions) == 0:
		// A result that names no version proves nothing about the era: a
		// legacy server may answer an unknown method with {} (or anything),
		// so it is not taken as 2026-07-28.
		r.obs.warn("the server/discover result lists no supportedVersions; trying initialize")
		return r.legacy("server/discover answered without supportedVersions, so it is not taken as " + rev)
	case slices.Contains(versions, rev):
	case alt != "":
		reason = "server/discover lists " + alt + " but not " + rev
		rev = alt
	case slices.ContainsFunc(versions, func(v string) bool { return slices.Contains(mcpwire.LegacyRevisions, v) }):
		return r.legacy("server/discover lists only legacy revisions (" + quote(strings.Join(versions, ", ")) + ")")
	default:
		r.obs.warn("server/discover lists no revision this client speaks (" + quote(strings.Join(versions, ", ")) + "); asking for " + rev)
		reason = "server/discover lists no revision this client speaks; tools/list is sent at " + rev
	}
	r.obs.Era, r.rev, r.obs.ProtocolRevision, r.obs.RevisionReason = EraModern, rev, rev, reason
	r.handshake = res
	return true, nil
}

// initialize runs the legacy handshake.
func (r *run) initialize(ctx context.Context) error {
	r.obs.Era = EraLegacy
	r.rev, r.obs.ProtocolRevision = "", ""
	ask := mcpwire.LegacyRevisions[0]
	if !mcpwire.IsModern(r.cfg.PreferredRevision) {
		ask = r.cfg.PreferredRevision
	}
	req := r.request(methodInitialize, map[string]any{
		"protocolVersion": ask,
		"capabilities":    json.RawMessage(r.cfg.ClientCapabilities),
		"clientInfo":      r.client,
	})
	rep, err := r.roundTrip(ctx, req)
	if err != nil {
		return err
	}
	res, err := r.expect(req, rep)
	if err != nil {
		return err
	}
	pv, ok := res.Get("protocolVersion")
	if !ok {
		return &VersionError{Requested: ask, Answered: "(none)"}
	}
	if pv.Kind() != jcs.String || !slices.Contains(mcpwire.LegacyRevisions, pv.Str()) {
		return &VersionError{Requested: ask, Answered: safetext.Clip(string(pv.Raw()), 64)}
	}
	r.obs.LegacyVersion = pv.Str()
	r.handshake = res
	if si := serverInfoOf(res.Get("serverInfo")); si != nil {
		r.obs.ServerInfo = si
	}
	if caps, ok := res.Get("capabilities"); ok && caps.Kind() == jcs.Object {
		if _, ok := caps.Get("tools"); !ok {
			r.obs.warn("the server did not declare the tools capability")
		}
	}
	r.t.legacySession(r.obs.LegacyVersion)
	return r.notify(ctx, newRequest(0, methodInitialized, nil))
}

// listTools follows nextCursor and builds the transcript.
func (r *run) listTools(ctx context.Context) error {
	obs := r.obs
	var transcript []byte
	if r.cfg.OnToolsPage == nil {
		transcript = []byte{'['}
	}
	var kp *listPage // the page being read
	l := &listing{method: methodToolsList, maxBytes: r.cfg.MaxListBytes, maxItems: r.cfg.MaxListTools, maxPages: r.cfg.MaxListPages,
		pages: &obs.Pages, bytes: &obs.ListBytes, completeness: &obs.Completeness, cycle: &obs.CursorCycle, capped: &obs.CapReached,
		bytesKind: LimitListBytes, itemsKind: LimitListTools}
	l.first = func(rep *reply) { obs.HTTPStatus, obs.WWWAuthenticate = rep.status, rep.wwwAuth }
	l.read = func(req *rpcRequest, rep *reply, res jcs.Value) (string, bool, int, error) {
		next, hasNext, err := checkPage(res, "tools")
		if err != nil {
			return "", false, 0, &ResponseError{Method: req.Method, HTTPStatus: rep.status, Reason: err.Error()}
		}
		kp = &listPage{tools: pageTools(res), serverInfo: metaServerInfo(res)}
		kp.cacheFieldsOf(res)
		return next, hasNext, kp.tools, nil
	}
	l.take = func(req *rpcRequest, rep *reply, res jcs.Value) error {
		switch {
		case r.cfg.OnToolsPage != nil:
			if err := r.cfg.OnToolsPage(req.Body, res); err != nil {
				return err
			}
		default:
			if len(transcript) > 1 {
				transcript = append(transcript, ',')
			}
			transcript = append(append(append(transcript, req.Body...), ','), rep.msg.raw...)
		}
		r.cacheFields(kp)
		if obs.Pages == 1 && obs.ServerInfo == nil {
			obs.ServerInfo = kp.serverInfo
		}
		return nil
	}
	if err := r.paginate(ctx, l); err != nil {
		return err
	}
	if r.cfg.OnToolsPage == nil {
		obs.Transcript = append(transcript, ']')
	}
	return nil
}

// pageTools is the length of a checked page's "tools" array.
func pageTools(res jcs.Value) int {
	t, _ := res.Get("tools")
	return t.Len()
}

// listPage is what a listing reads of one tools/list page beside its
// tools.
type listPage struct {
	tools      int
	ttlOK      bool
	ttl        int64
	scopeOK    bool
	scope      string
	serverInfo *ServerInfo
}

// cacheFieldsOf reads a page's ttlMs and cacheScope (2026-07-28 list
// results).
func (kp *listPage) cacheFieldsOf(res jcs.Value) {
	ttl, okT := res.Get("ttlMs")
	n, isInt := frame.Int64(ttl)
	kp.ttlOK, kp.ttl = okT && isInt, n
	if scope, ok := res.Get("cacheScope"); ok && scope.Kind() == jcs.String {
		kp.scopeOK, kp.scope = true, scope.Str()
	}
}

// cacheFields records a page's ttlMs and cacheScope.
func (r *run) cacheFields(kp *listPage) {
	obs := r.obs
	if !kp.ttlOK || !kp.scopeOK {
		obs.MissingCacheFields = true
	}
	if obs.Pages == 1 {
		if kp.ttlOK {
			n := kp.ttl
			obs.TTLMs = &n
		}
		if kp.scopeOK {
			obs.CacheScope = safetext.Clip(kp.scope, 64)
		}
		return
	}
	if kp.scopeOK && safetext.Clip(kp.scope, 64) != obs.CacheScope {
		obs.warn("cacheScope differs between pages (" + quote(obs.CacheScope) + " on the first, " + quote(kp.scope) + " on page " + fmt.Sprint(obs.Pages) + "); all pages of one list must use the same")
	}
}

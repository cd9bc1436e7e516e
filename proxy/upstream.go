package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// upstream is one connection to the upstream server, on behalf of one
// downstream session (or of the shared stateless traffic).
type upstream interface {
	// request sends a client→server request (its raw bytes and parse) and
	// returns the response that answers it, its Raw carrying the request's
	// own id bytes. Messages the server sends before it (progress,
	// logging, requests to the client) go to onMsg in order.
	request(ctx context.Context, raw []byte, m *frame.Message, fwd http.Header, onMsg func(*frame.Message)) (*answer, error)
	// send sends a notification, or a response to a server request.
	send(ctx context.Context, raw []byte, m *frame.Message, fwd http.Header) error
	// negotiated records the legacy revision initialize agreed on.
	negotiated(version string)
	// listen delivers the server's messages that arrive outside any
	// request (the legacy GET stream, a stdio server's notifications) to
	// onMsg until the link closes.
	listen(onMsg func(*frame.Message))
	// alive reports whether the link can still carry messages.
	alive() bool
	// onFault sets what a panic on one of the link's own goroutines (its
	// reader, its GET stream, the rest of a response stream) calls: the
	// session ends, not the process.
	onFault(f func(where string, v any))
	close()
}

// faultHook is an upstream link's onFault.
type faultHook struct {
	mu sync.Mutex
	f  func(where string, v any)
}

func (h *faultHook) onFault(f func(where string, v any)) {
	h.mu.Lock()
	h.f = f
	h.mu.Unlock()
}

// faulted reports a panic recovered on one of the link's goroutines.
func (h *faultHook) faulted(where string, v any) {
	h.mu.Lock()
	f := h.f
	h.mu.Unlock()
	if f != nil {
		f(where, v)
	}
}

// answer is the upstream's response to a request, with how it came: an
// HTTP upstream's status (a 2026-07-28 error's status is part of it: 404
// for -32601, 400 for -32602, -32020, -32021, -32022) and whether it came
// on an event stream, so the gateway can answer the downstream the same
// way. On stdio both are zero.
type answer struct {
	*frame.Message
	status int
	sse    bool
}

// upstreamError is an upstream answer that carries no JSON-RPC response:
// an HTTP status (401/403 with its challenge, 404 for a lost session, 5xx)
// or a transport failure. Server-controlled parts are bounded; Error() is
// escaped.
type upstreamError struct {
	Status          int
	WWWAuthenticate string
	Msg             string
	// Reason is the reason code of the gateway's error answer ("":
	// upstream_error).
	Reason string
}

func (e *upstreamError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("the upstream answered HTTP %d: %s", e.Status, e.Msg)
	}
	return "the upstream: " + e.Msg
}

// httpUpstream speaks Streamable HTTP to the upstream: one POST per
// message, JSON or SSE answers, the legacy session id and revision header.
type httpUpstream struct {
	faultHook
	g      *Gateway
	url    string
	client *http.Client

	// life ends when the link is closed: the HTTP requests still open
	// (a request in flight, the rest of a response stream) end with it.
	life    context.Context
	endLife context.CancelFunc

	// direct is the client's transport when the client adds nothing to
	// a request (do); nil: every request goes through client.Do.
	direct http.RoundTripper
	// own is Upstream.Headers with canonical keys: the values every
	// request of the link carries, shared by them (never written to).
	own http.Header

	mu        sync.Mutex
	sessionID string // legacy: the upstream's Mcp-Session-Id
	version   string // legacy: the negotiated revision (MCP-Protocol-Version from 2025-06-18 on)
	// The header values of sessionID and of version (when it is sent),
	// shared by every request.
	sidValue, versionValue []string
	listening              bool
	dead                   bool
	cancel                 context.CancelFunc   // the GET stream
	oob                    func(*frame.Message) // the session's path for messages outside any request (listen)

	ids    linkIDs // the requests in flight sent under an id of the link's (ownIDNeeded)
	nextID atomic.Uint64
}

// upstreamTransport is the default transport to an HTTP upstream, shared
// by every session: http.DefaultTransport keeps 2 idle connections per
// host, so concurrent downstream calls would dial a new connection for
// nearly every request (and leave sockets in TIME_WAIT).
var upstreamTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 256
	return t
}()

func newHTTPUpstream(g *Gateway) *httpUpstream {
	c := g.cfg.Upstream.HTTPClient
	if c == nil {
		c = &http.Client{Transport: upstreamTransport}
	}
	cc := *c
	// Redirects are not followed: a gateway forwards to the upstream it
	// was configured with, never to where the upstream points.
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	life, end := context.WithCancel(context.Background())
	u := &httpUpstream{g: g, url: g.cfg.Upstream.URL, client: &cc, life: life, endLife: end, own: http.Header{}}
	if pu, err := url.Parse(u.url); err == nil && pu.User == nil && cc.Jar == nil && cc.Timeout == 0 {
		u.direct = cc.Transport
		if u.direct == nil {
			u.direct = http.DefaultTransport
		}
	}
	for k, vs := range g.cfg.Upstream.Headers {
		k = http.CanonicalHeaderKey(k)
		u.own[k] = append(u.own[k], vs...)
	}
	return u
}

// do sends hr. A client without a cookie jar or a timeout adds nothing to
// a request the link makes to a URL without userinfo (it follows no
// redirect, and sets no Basic credentials), so hr goes to its transport,
// as a reverse proxy sends one: Client.Do would copy the headers of every
// request for redirects that are never followed. The error is
// Client.Do's.
func (u *httpUpstream) do(hr *http.Request) (*http.Response, error) {
	if u.direct == nil {
		return u.client.Do(hr)
	}
	resp, err := u.direct.RoundTrip(hr)
	if err != nil {
		op := hr.Method[:1] + strings.ToLower(hr.Method[1:])
		return nil, &url.Error{Op: op, URL: hr.URL.Redacted(), Err: err}
	}
	return resp, nil
}

// Header values every request of a kind carries, shared by them (never
// written to).
var (
	hdrProtocolVersion = http.CanonicalHeaderKey(mcpwire.HeaderProtocolVersion)
	hdrSessionID       = http.CanonicalHeaderKey(mcpwire.HeaderSessionID)

	jsonType     = []string{"application/json"}
	acceptBoth   = []string{"application/json, text/event-stream"}
	acceptStream = []string{"text/event-stream"}
)

func (u *httpUpstream) alive() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return !u.dead
}

func (u *httpUpstream) negotiated(version string) {
	u.mu.Lock()
	u.version = version
	u.versionValue = nil
	if version != "" && version != mcpwire.Rev20250326 && version != mcpwire.Rev20241105 {
		u.versionValue = []string{version}
	}
	u.mu.Unlock()
}

// newRequest builds a request to the upstream with the gateway's own
// headers, the forwarded downstream headers, the session and the MCP
// headers derived from the body.
func (u *httpUpstream) newRequest(ctx context.Context, method string, body []byte, m *frame.Message, fwd http.Header) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.url, rd)
	if err != nil {
		return nil, err
	}
	h := hr.Header
	for k, vs := range u.own {
		h[k] = vs
	}
	if u.g.cfg.Upstream.ForwardAuthorization {
		if a := fwd.Get("Authorization"); a != "" {
			h.Set("Authorization", a)
		}
	}
	for k, vs := range fwd {
		// A tools/call's Mcp-Param-* headers (session.callHeaders).
		if strings.HasPrefix(k, mcpwire.HeaderParamPrefix) {
			h[k] = vs
		}
	}
	u.mu.Lock()
	sid, ver := u.sidValue, u.versionValue
	u.mu.Unlock()
	if body != nil {
		h["Content-Type"] = jsonType
	}
	h["Accept"] = acceptBoth
	if method == http.MethodGet {
		h["Accept"] = acceptStream
	}
	legacyHeader := ""
	if ver != nil {
		legacyHeader = ver[0]
	}
	sharedVersion := ver != nil
	if m != nil {
		hs, err := frame.DeriveHeaders(m, legacyHeader)
		if err != nil {
			return nil, err
		}
		if sharedVersion = ver != nil && hs.ProtocolVersion == legacyHeader; sharedVersion {
			hs.ProtocolVersion = "" // the shared value, below
		}
		hs.Set(h)
	}
	if sharedVersion {
		h[hdrProtocolVersion] = ver
	}
	if sid != nil {
		h[hdrSessionID] = sid
	}
	return hr, nil
}

func (u *httpUpstream) request(ctx context.Context, raw []byte, m *frame.Message, fwd http.Header, onMsg func(*frame.Message)) (*answer, error) {
	if !u.alive() {
		return nil, &upstreamError{Msg: "the link to the upstream was closed"}
	}
	var callerID []byte // the caller's id, when the link sends the request under its own
	if ownIDNeeded(m.ID) {
		own := linkIDString(u.nextID.Add(1))
		out, err := replaceID(raw, m, own)
		if err != nil {
			return nil, &upstreamError{Msg: err.Error()}
		}
		om, err := frame.Parse(out)
		if err != nil {
			return nil, &upstreamError{Msg: err.Error()}
		}
		defer u.ids.add(m.ID, own)()
		callerID, raw, m = m.IDRaw(), out, om
		onMsg = backToCaller(onMsg, m, callerID)
	}
	// The exchange is bounded by ex (RequestTimeout and the caller's
	// context). The HTTP request itself has a context of its own, ended
	// with ex until the answer is read, and with the link: the rest of a
	// response stream is read on after the answer (readRest).
	ex, cancel := requestContext(ctx, u.g, m)
	defer cancel()
	hctx, endReq := context.WithCancel(context.WithoutCancel(ctx))
	untilEx := context.AfterFunc(ex, endReq)
	untilLife := context.AfterFunc(u.life, endReq)
	readOn := false
	defer func() {
		if !readOn {
			untilEx()
			untilLife()
			endReq()
		}
	}()
	hr, err := u.newRequest(hctx, http.MethodPost, raw, m, fwd)
	if err != nil {
		return nil, &upstreamError{Msg: safetext.Inert(err.Error())}
	}
	start := u.g.cfg.Now()
	resp, err := u.do(hr)
	u.g.cfg.Metrics.upstreamLatency(m.Method, u.g.cfg.Now().Sub(start))
	if err != nil {
		u.g.cfg.Metrics.upstreamError("transport")
		return nil, &upstreamError{Msg: "cannot reach it: " + mcpwire.ErrorText(exchangeErr(ex, err), 300)}
	}
	if m.Method == "initialize" {
		if sid := resp.Header.Get(mcpwire.HeaderSessionID); sid != "" {
			u.mu.Lock()
			u.sessionID, u.sidValue = sid, []string{sid}
			u.mu.Unlock()
		}
	}
	hold, _ := ctx.Value(downstreamKey{}).(flushHolder)
	a, sr, err := u.readAnswer(resp, m, onMsg, hold)
	if err != nil && ex.Err() != nil {
		err = &upstreamError{Status: resp.StatusCode, Msg: "no answer in time: " + mcpwire.ErrorText(ex.Err(), 100)}
	}
	if err == nil && callerID != nil {
		// The caller's id back, byte for byte.
		if a.Message, err = withID(a.Message, callerID); err != nil {
			a, err = nil, &upstreamError{Status: resp.StatusCode, Msg: err.Error()}
		}
	}
	if sr != nil && untilEx() {
		// The answer came on a stream, within the exchange's bound: what
		// the upstream sends after it there is read on.
		readOn = true
		go u.readRest(sr, resp.Body, endReq, untilLife)
		return a, err
	}
	if sr != nil {
		sr.release()
	}
	resp.Body.Close()
	return a, err
}

// backToCaller wraps the onMsg of a request m sent under the link's own
// id: a notification of its subscriptions/listen stream carries that id
// as its subscription id, and gets the caller's back.
func backToCaller(onMsg func(*frame.Message), m *frame.Message, callerID []byte) func(*frame.Message) {
	if onMsg == nil || !longLived(m) {
		return onMsg
	}
	own := m.ID
	return func(x *frame.Message) {
		if sub, ok := subscriptionID(x); ok && sameID(sub, own) {
			if back, err := withSubscriptionID(x, sub, callerID); err == nil {
				x = back
			}
		}
		onMsg(x)
	}
}

// exchangeErr is the error to report of a failed exchange: its bound's
// when that ended it (the HTTP request's own context only says
// "canceled").
func exchangeErr(ex context.Context, err error) error {
	if ex.Err() != nil {
		return ex.Err()
	}
	return err
}

// The rest of a response stream, after the answer, is read for at most
// restWait (and never longer than RequestTimeout) and restEvents events,
// within the stream's own byte bound.
const (
	restWait   = 10 * time.Second
	restEvents = 100
)

// readRest reads what the upstream sends on a response stream after the
// answer, and hands its server messages to the session's path for
// messages outside any request (the one listen was given): a
// list_changed sent after a result, in the same stream, is then seen and
// re-observed, where it was closed unread. Responses there answer nothing
// in flight and are dropped. Bounded in time, events and bytes; it ends
// with the link.
func (u *httpUpstream) readRest(sr *resumingStream, body io.Closer, end context.CancelFunc, untilLife func() bool) {
	defer untilLife()
	defer end()
	defer body.Close()
	defer sr.release()
	defer func() {
		if v := recover(); v != nil {
			u.faulted("reading the rest of an upstream response stream", v)
		}
	}()
	t := time.AfterFunc(min(restWait, u.g.cfg.RequestTimeout), end)
	defer t.Stop()
	for range restEvents {
		ev, err := sr.Next()
		if err != nil {
			return
		}
		if len(frame.TrimSpace(ev.Data)) == 0 {
			continue
		}
		msg, err := frame.FromServer(ev.Data)
		if err != nil || msg.Kind.IsResponse() {
			continue
		}
		u.mu.Lock()
		oob := u.oob
		u.mu.Unlock()
		if oob != nil {
			oob(msg)
		}
	}
}

// readAnswer reads the response to m from resp: a JSON body, or an SSE
// stream whose other messages go to onMsg. When the answer came on a
// stream, its reader is returned too, to read the rest of it.
func (u *httpUpstream) readAnswer(resp *http.Response, m *frame.Message, onMsg func(*frame.Message), hold flushHolder) (*answer, *resumingStream, error) {
	max := u.g.cfg.MaxMessageBytes
	ct := mediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		u.g.cfg.Metrics.upstreamError(fmt.Sprint(resp.StatusCode))
		return nil, nil, &upstreamError{Status: resp.StatusCode, WWWAuthenticate: safetext.Clip(strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), 4096), Msg: "the request was refused"}
	}
	switch {
	case ct == "text/event-stream":
		lim := frame.SSELimits{MaxBytes: max, MaxLine: int(max), MaxEvents: 100000}
		if longLived(m) {
			lim.MaxEvents, lim.PerEvent = 1000, true // a stream that lives as long as the client listens: each event bounded
		}
		sr := u.responseStream(resp, lim)
		a, err := u.readStreamAnswer(sr, resp.StatusCode, m, onMsg, hold)
		if err != nil {
			sr.release()
			return nil, nil, err
		}
		return a, sr, nil
	case ct == "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
		if err != nil {
			return nil, nil, &upstreamError{Status: resp.StatusCode, Msg: "reading the response: " + safetext.Inert(err.Error())}
		}
		if int64(len(b)) > max {
			return nil, nil, &upstreamError{Status: resp.StatusCode, Msg: fmt.Sprintf("the response exceeded %d bytes", max)}
		}
		msg, err := frame.FromServer(b)
		if err != nil {
			return nil, nil, &upstreamError{Status: resp.StatusCode, Msg: err.Error()}
		}
		if !msg.Kind.IsResponse() || !sameID(msg.ID, m.ID) {
			return nil, nil, &upstreamError{Status: resp.StatusCode, Msg: "the answer is not the response to the request"}
		}
		return &answer{Message: msg, status: resp.StatusCode}, nil, nil
	}
	u.g.cfg.Metrics.upstreamError(fmt.Sprint(resp.StatusCode))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return nil, nil, &upstreamError{Status: resp.StatusCode, Msg: "no JSON-RPC answer (Content-Type " + safetext.Quote(safetext.Clip(ct, 80)) + ")"}
}

// flushHolder is the downstream stream a request's messages go to, when
// it can hold their flushes (postStream.holdFlushes).
type flushHolder interface{ holdFlushes(on bool) }

// readStreamAnswer reads sr up to the response to m (status: the HTTP
// status it came with); the messages before it go to onMsg, each while
// hold (when there is one) holds the downstream's flushes if more of the
// stream has already arrived.
func (u *httpUpstream) readStreamAnswer(sr *resumingStream, status int, m *frame.Message, onMsg func(*frame.Message), hold flushHolder) (*answer, error) {
	for {
		ev, err := sr.Next()
		if err != nil {
			u.g.cfg.Metrics.upstreamError("stream")
			if errors.Is(err, io.EOF) {
				return nil, &upstreamError{Status: status, Msg: "the response stream ended without the response"}
			}
			return nil, &upstreamError{Status: status, Msg: safetext.Inert(err.Error())}
		}
		if len(frame.TrimSpace(ev.Data)) == 0 {
			continue // a priming event
		}
		msg, err := frame.FromServer(ev.Data)
		if err != nil {
			return nil, &upstreamError{Status: status, Msg: err.Error()}
		}
		if msg.Kind.IsResponse() && sameID(msg.ID, m.ID) {
			sr.Answered()
			return &answer{Message: msg, status: status, sse: true}, nil
		}
		if msg.Kind.IsResponse() {
			// Another request's id: never handed to the downstream,
			// which could take it for the answer to one of its own.
			return nil, &upstreamError{Status: status, Msg: "the answer is not the response to the request"}
		}
		if onMsg == nil {
			continue
		}
		if hold != nil && sr.Buffered() > 0 {
			hold.holdFlushes(true)
			onMsg(msg)
			hold.holdFlushes(false)
			continue
		}
		onMsg(msg)
	}
}

func (u *httpUpstream) send(ctx context.Context, raw []byte, m *frame.Message, fwd http.Header) error {
	raw, m, ok := u.ids.cancelled(raw, m, false)
	if !ok {
		return nil // it names two requests in flight: which to cancel cannot be said
	}
	ctx, cancel := context.WithTimeout(ctx, u.g.cfg.RequestTimeout)
	defer cancel()
	hr, err := u.newRequest(ctx, http.MethodPost, raw, m, fwd)
	if err != nil {
		return &upstreamError{Msg: safetext.Inert(err.Error())}
	}
	resp, err := u.do(hr)
	if err != nil {
		u.g.cfg.Metrics.upstreamError("transport")
		return &upstreamError{Msg: "cannot reach it: " + mcpwire.ErrorText(err, 300)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return &upstreamError{Status: resp.StatusCode, Msg: "the message was not accepted"}
	}
	return nil
}

// listen opens the legacy GET stream of the session (once) and delivers
// its messages. A server that offers none (405) is fine. The stream is
// closed with the link.
func (u *httpUpstream) listen(onMsg func(*frame.Message)) {
	u.mu.Lock()
	if u.oob == nil {
		u.oob = onMsg
	}
	if u.listening || u.sessionID == "" || u.dead {
		u.mu.Unlock()
		return
	}
	u.listening = true
	ctx, cancel := context.WithCancel(context.Background())
	u.cancel = cancel
	u.mu.Unlock()
	go func() {
		defer func() {
			if v := recover(); v != nil {
				u.faulted("reading the upstream's GET stream", v)
			}
		}()
		hr, err := u.newRequest(ctx, http.MethodGet, nil, nil, nil)
		if err != nil {
			return
		}
		resp, err := u.do(hr)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return
		}
		max := u.g.cfg.MaxMessageBytes
		sr := frame.NewSSEReader(resp.Body, frame.SSELimits{MaxBytes: max, MaxLine: int(max), MaxEvents: 1000, PerEvent: true})
		for {
			ev, err := sr.Next()
			if err != nil {
				return
			}
			if len(frame.TrimSpace(ev.Data)) == 0 {
				continue
			}
			msg, err := frame.FromServer(ev.Data)
			if err != nil {
				continue
			}
			onMsg(msg)
		}
	}()
}

// close ends the upstream session (legacy DELETE) and the GET stream.
func (u *httpUpstream) close() {
	u.mu.Lock()
	if u.dead {
		u.mu.Unlock()
		return
	}
	u.dead = true
	sid, cancel := u.sessionID, u.cancel
	u.mu.Unlock()
	u.endLife()
	if cancel != nil {
		cancel()
	}
	if sid == "" {
		return
	}
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	hr, err := u.newRequest(ctx, http.MethodDelete, nil, nil, nil)
	if err != nil {
		return
	}
	if resp, err := u.do(hr); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
}

// mediaType is the media type of a Content-Type value ("" when it cannot
// be read); the two an upstream sends are taken as they are.
func mediaType(v string) string {
	if v == "application/json" || v == "text/event-stream" {
		return v
	}
	mt, _, _ := mime.ParseMediaType(v)
	return mt
}

// sameID compares two JSON-RPC ids as JSON values: strings by their text,
// numbers by their value.
func sameID(a, b jcs.Value) bool {
	if !a.Valid() || !b.Valid() || a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case jcs.String:
		return a.Str() == b.Str()
	case jcs.Number:
		return jcs.NumbersEqual(a, b)
	}
	return false
}

// longLived reports whether a request's answer is a stream that lives as
// long as the downstream keeps it open (2026-07-28 subscriptions/listen):
// it has no request deadline, only the downstream's own.
func longLived(m *frame.Message) bool { return m.Method == "subscriptions/listen" }

// requestContext bounds one upstream exchange by RequestTimeout, except a
// long-lived stream, which ends with the downstream's context.
func requestContext(ctx context.Context, g *Gateway, m *frame.Message) (context.Context, context.CancelFunc) {
	if longLived(m) {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, g.cfg.RequestTimeout)
}

package mcpclient

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

const (
	methodListen       = "subscriptions/listen"
	methodListChanged  = "notifications/tools/list_changed"
	methodAcknowledged = "notifications/subscriptions/acknowledged"
)

// ListenUnsupportedError says that the server offers no stream of
// notifications/tools/list_changed a client can hold open: a stdio or
// HTTP+SSE configuration (ListenToolsChanged speaks Streamable HTTP
// only), a legacy server whose GET is refused (405), or a modern one that
// does not implement subscriptions/listen or does not honour
// toolsListChanged. A caller falls back to polling.
type ListenUnsupportedError struct{ Reason string }

func (e *ListenUnsupportedError) Error() string {
	return "mcpclient: no list_changed stream: " + e.Reason
}

// ListenToolsChanged holds open the server's stream of
// notifications/tools/list_changed and calls onChange for each one: a
// 2026-07-28 subscriptions/listen (notifications.toolsListChanged), or, for
// a legacy server, a session's GET event stream. It detects the era as
// ListTools does (server/discover, then initialize) and ends the legacy
// session when it returns.
//
// It returns when ctx ends (ctx.Err()), when the server ends the stream
// (nil: the caller may listen again, after a pause), or with an error: a
// *ListenUnsupportedError when there is no such stream, a *LimitError
// when the stream exceeds MaxSSEEvents events or an event exceeds
// MaxResponseBytes, and the errors of ListTools otherwise. The request
// that opens the stream must be answered within RequestTimeout; the open
// stream itself is bounded by ctx only.
func ListenToolsChanged(ctx context.Context, cfg Config, onChange func()) error {
	c, err := cfg.normalize()
	if err != nil {
		return err
	}
	switch {
	case c.BaseURL == "":
		return &ListenUnsupportedError{Reason: "a stdio server's notifications are read only while it runs"}
	case c.Transport == TransportSSE:
		return &ListenUnsupportedError{Reason: "the HTTP+SSE transport is not held open between observations"}
	}
	obs := &Observation{Transport: TransportStreamableHTTP}
	t, _ := newHTTPTransport(&c, obs)
	defer t.close(obs)
	r := &run{cfg: &c, obs: obs, t: t, client: implementation{Name: c.ClientName, Version: c.ClientVersion}}
	if mcpwire.IsModern(c.PreferredRevision) {
		modern, err := r.discover(ctx)
		if err != nil {
			return err
		}
		if modern {
			return r.listenModern(ctx, t, onChange)
		}
	}
	if err := r.initialize(ctx); err != nil {
		return err
	}
	return r.listenLegacy(ctx, t, onChange)
}

// openStream sends hr and returns the response once its headers arrived
// within RequestTimeout; the body is then bounded by ctx only.
func openStream(ctx context.Context, t *httpTransport, hr *http.Request, method string) (*http.Response, context.CancelFunc, error) {
	sctx, cancel := context.WithCancel(ctx)
	hr = hr.WithContext(sctx)
	var timedOut atomic.Bool
	timer := time.AfterFunc(t.cfg.RequestTimeout, func() { timedOut.Store(true); cancel() })
	resp, err := t.client.Do(hr)
	if !timer.Stop() && timedOut.Load() && err != nil {
		cancel()
		return nil, nil, &LimitError{Method: method, Kind: LimitRequestTime, Max: t.cfg.RequestTimeout.Milliseconds()}
	}
	if err != nil {
		cancel()
		return nil, nil, t.failure(ctx, sctx, method, err)
	}
	return resp, cancel, nil
}

func (r *run) listenModern(ctx context.Context, t *httpTransport, onChange func()) error {
	req := r.request(methodListen, map[string]any{
		"_meta":         r.meta(r.rev),
		"notifications": map[string]bool{"toolsListChanged": true},
	})
	hr, err := t.newHTTPRequest(ctx, http.MethodPost, req.Body)
	if err != nil {
		return err
	}
	resp, cancel, err := openStream(ctx, t, hr, methodListen)
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		body, _ := readBounded(resp.Body, min(t.cfg.MaxResponseBytes, 64<<10), resp.ContentLength)
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return &HTTPError{Method: methodListen, Status: resp.StatusCode, WWWAuthenticate: safetext.Clip(strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), maxWWWAuthenticate)}
		}
		if m, err := parseMessage(body); err == nil && m.isErr {
			if m.code == mcpwire.CodeMethodNotFound {
				return &ListenUnsupportedError{Reason: "the server does not implement subscriptions/listen (-32601)"}
			}
			return m.protocolError(methodListen, resp.StatusCode)
		}
		return &HTTPError{Method: methodListen, Status: resp.StatusCode}
	}
	return readNotifications(ctx, t, resp.Body, methodListen, req.ID, onChange)
}

func (r *run) listenLegacy(ctx context.Context, t *httpTransport, onChange func()) error {
	if t.sessionID == "" {
		return &ListenUnsupportedError{Reason: "the legacy server gave no session, so it has no GET stream"}
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return err
	}
	for k, vs := range t.cfg.Headers {
		hr.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	t.cfg.setUserAgent(hr.Header)
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set(mcpwire.HeaderSessionID, t.sessionID)
	if t.headerVersion != "" {
		hr.Header.Set(mcpwire.HeaderProtocolVersion, t.headerVersion)
	}
	resp, cancel, err := openStream(ctx, t, hr, "GET")
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return &ListenUnsupportedError{Reason: "the server refuses GET (HTTP 405): it sends no notifications outside requests"}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &HTTPError{Method: "GET", Status: resp.StatusCode, WWWAuthenticate: safetext.Clip(strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), maxWWWAuthenticate)}
	case resp.StatusCode != http.StatusOK || mt != "text/event-stream":
		return &HTTPError{Method: "GET", Status: resp.StatusCode}
	}
	return readNotifications(ctx, t, resp.Body, "GET", 0, onChange)
}

// readNotifications reads a stream of server messages, calling onChange
// for each list_changed, until it ends. Each event is bounded by
// MaxResponseBytes, the stream by MaxSSEEvents events. A legacy GET stream
// may carry server requests: they are refused as on a response stream. id
// is the listen request's (0 for GET): its response ends the stream.
func readNotifications(ctx context.Context, t *httpTransport, body io.Reader, method string, id int64, onChange func()) error {
	sr := newSSEStream(body, method, t.cfg.MaxResponseBytes, t.cfg.MaxSSEEvents, true)
	for {
		ev, err := sr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var le *LimitError
			if errors.As(err, &le) {
				return le
			}
			return &UnreachableError{Target: t.url, Err: err}
		}
		if len(frame.TrimSpace(ev.Data)) == 0 || (ev.Type != "" && ev.Type != "message") {
			continue
		}
		msg, perr := parseMessage(ev.Data)
		if perr != nil {
			continue // one unreadable event does not end the stream
		}
		switch msg.kind {
		case kindNotification:
			switch msg.method {
			case methodListChanged:
				onChange()
			case methodAcknowledged:
				if !acknowledgesTools(ev.Data) {
					return &ListenUnsupportedError{Reason: "the server did not honour toolsListChanged in its acknowledgement"}
				}
			}
		case kindRequest:
			if t.legacy {
				t.refuse(ctx, msg, method)
			}
		case kindResponse:
			if id != 0 && msg.answers(id) {
				if msg.isErr {
					if msg.code == mcpwire.CodeMethodNotFound {
						return &ListenUnsupportedError{Reason: "the server does not implement subscriptions/listen (-32601)"}
					}
					return msg.protocolError(method, http.StatusOK)
				}
				return nil // the server ended the subscription
			}
		}
	}
}

// acknowledgesTools reports whether a notifications/subscriptions/acknowledged
// message honours toolsListChanged.
func acknowledgesTools(data []byte) bool {
	doc, err := jcs.Parse(data)
	if err != nil {
		return false
	}
	p, ok := doc.Root().Get("params")
	if !ok {
		return false
	}
	n, ok := p.Get("notifications")
	if !ok || n.Kind() != jcs.Object {
		return false
	}
	v, ok := n.Get("toolsListChanged")
	return ok && v.Kind() == jcs.True
}

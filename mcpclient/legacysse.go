package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// methodSSEStream names the GET of the HTTP+SSE transport in errors.
const methodSSEStream = "GET (HTTP+SSE stream)"

// maxEndpointLen bounds the URI of an endpoint event.
const maxEndpointLen = 2048

// sseTransport speaks the deprecated HTTP+SSE transport of 2024-11-05: one
// GET opens an event stream whose first event, "endpoint", names the URL
// to POST messages to; every server message (responses included) arrives
// as a "message" event on that stream. The stream lives for the whole run
// and is closed by close.
//
// Bounds: the GET's answer and the endpoint event come within
// RequestTimeout; each request's response within RequestTimeout of its
// POST; what is read while waiting for one response (its event, and
// everything before it) is at most MaxResponseBytes and MaxSSEEvents
// events, and so is each single event. The endpoint must have the origin
// (scheme, host, port) of BaseURL: a server cannot send the client, its
// headers or its credentials anywhere else.
type sseTransport struct {
	cfg  *Config
	obs  *Observation
	http *httpTransport // the client, error classification
	base *url.URL

	endpoint      *url.URL // from the endpoint event; same origin as base
	headerVersion string

	cancel     context.CancelFunc // ends the stream
	streamCtx  context.Context
	body       io.ReadCloser
	items      chan sseItem // from readLoop; closed after its error
	done       chan struct{}
	readerDone chan struct{} // nil until readLoop runs
	closeOnce  sync.Once
	refusals   atomic.Int32
	wg         sync.WaitGroup // refusals in flight
	mu         sync.Mutex
	late       []string // warnings from refusals, added to obs by close
}

// sseItem is one event read from the stream, or the error that ended it.
type sseItem struct {
	ev    frame.Event
	bytes int64 // read for this event, what preceded it included
	err   error
}

// notSSEError is a GET that did not open an event stream (a status other
// than 200, 401 and 403, or another Content-Type): with Transport auto the
// Streamable HTTP error stands instead.
type notSSEError struct {
	reason string
	err    error
}

func (e *notSSEError) Error() string { return e.err.Error() }
func (e *notSSEError) Unwrap() error { return e.err }

// openSSE opens the stream and waits for its endpoint event.
func openSSE(ctx context.Context, cfg *Config, obs *Observation) (*sseTransport, error) {
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, &ConfigError{Msg: "BaseURL is not a URL"}
	}
	ht := &httpTransport{cfg: cfg, obs: obs, url: cfg.BaseURL}
	ht.client, ht.owned = httpClient(cfg)
	t := &sseTransport{cfg: cfg, obs: obs, http: ht, base: base,
		items: make(chan sseItem), done: make(chan struct{})}
	t.streamCtx, t.cancel = context.WithCancel(ctx)
	fail := func(err error) (*sseTransport, error) {
		t.close(obs)
		return nil, err
	}
	// One timer bounds the GET's answer and the endpoint event: when it
	// fires the stream is cancelled, which ends the wait below.
	var timedOut atomic.Bool
	timer := time.AfterFunc(cfg.RequestTimeout, func() { timedOut.Store(true); t.cancel() })
	defer timer.Stop()
	timeout := func() error {
		return &LimitError{Method: methodSSEStream, Kind: LimitRequestTime, Max: cfg.RequestTimeout.Milliseconds()}
	}

	hr, err := http.NewRequestWithContext(t.streamCtx, http.MethodGet, cfg.BaseURL, nil)
	if err != nil {
		return fail(&ConfigError{Msg: "BaseURL: " + safetext.Inert(err.Error())})
	}
	t.setHeaders(hr.Header)
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Cache-Control", "no-cache")
	resp, err := ht.client.Do(hr)
	if err != nil {
		if timedOut.Load() {
			return fail(timeout())
		}
		return fail(ht.failure(ctx, t.streamCtx, methodSSEStream, err))
	}
	t.body = resp.Body
	wwwAuth := safetext.Clip(strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), maxWWWAuthenticate)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fail(&HTTPError{Method: methodSSEStream, Status: resp.StatusCode, WWWAuthenticate: wwwAuth})
	case resp.StatusCode != http.StatusOK:
		return fail(&notSSEError{reason: fmt.Sprintf("HTTP %d", resp.StatusCode), err: &HTTPError{Method: methodSSEStream, Status: resp.StatusCode, WWWAuthenticate: wwwAuth}})
	case mt != "text/event-stream":
		ct := quote(resp.Header.Get("Content-Type"))
		return fail(&notSSEError{reason: "Content-Type " + ct, err: &ResponseError{Method: methodSSEStream, HTTPStatus: resp.StatusCode, Reason: "the answer has Content-Type " + ct + ", not text/event-stream"}})
	}
	streamURL := resp.Request.URL // after redirects, which stay within the origin
	sr := newSSEStream(resp.Body, methodSSEStream, cfg.MaxResponseBytes, cfg.MaxSSEEvents, true)
	t.readerDone = make(chan struct{})
	go t.readLoop(sr)

	events, ignored := 0, 0
	for {
		var it sseItem
		var ok bool
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("mcpclient: %s: %w", methodSSEStream, ctx.Err()))
		case it, ok = <-t.items:
		}
		switch {
		case !ok || errors.Is(it.err, io.EOF):
			return fail(&ResponseError{Method: methodSSEStream, HTTPStatus: resp.StatusCode, Reason: "the event stream ended before its endpoint event"})
		case timedOut.Load():
			return fail(&LimitError{Method: methodSSEStream, Kind: LimitRequestTime, Max: cfg.RequestTimeout.Milliseconds()})
		case it.err != nil:
			return fail(t.streamError(ctx, methodSSEStream, it.err))
		}
		if events++; events > cfg.MaxSSEEvents {
			return fail(&LimitError{Method: methodSSEStream, Kind: LimitSSEEvents, Max: int64(cfg.MaxSSEEvents)})
		}
		if it.ev.Type != "endpoint" {
			if ignored++; ignored == 1 && len(frame.TrimSpace(it.ev.Data)) > 0 {
				obs.warn("the HTTP+SSE stream sent an event before its endpoint event; it was ignored")
			}
			continue
		}
		u, err := resolveEndpoint(streamURL, base, it.ev.Data)
		if err != nil {
			return fail(&ResponseError{Method: methodSSEStream, HTTPStatus: resp.StatusCode, Reason: "refused the endpoint event: " + err.Error()})
		}
		if !timer.Stop() {
			return fail(timeout())
		}
		t.endpoint = u
		return t, nil
	}
}

// resolveEndpoint reads the data of an endpoint event: a URI reference,
// resolved against the stream's URL, that must be an http(s) URL of the
// origin of base (scheme, host and port compared as origin does), without
// user info; a fragment is dropped. Errors are messages for people, with
// the server's text quoted.
func resolveEndpoint(stream, base *url.URL, data []byte) (*url.URL, error) {
	d := string(data)
	switch {
	case len(d) == 0:
		return nil, errors.New("it is empty")
	case len(d) > maxEndpointLen:
		return nil, errors.New("it is longer than " + strconv.Itoa(maxEndpointLen) + " bytes")
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; c < 0x21 || c > 0x7e {
			return nil, errors.New(quote(d) + " is not a URI (it has a byte outside visible ASCII)")
		}
	}
	ref, err := url.Parse(d)
	if err != nil {
		return nil, errors.New(quote(d) + " is not a URI")
	}
	u := stream.ResolveReference(ref)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New(quote(d) + " is not an http or https URL")
	case u.Opaque != "" || u.Host == "":
		return nil, errors.New(quote(d) + " has no host")
	case u.User != nil:
		return nil, errors.New(quote(d) + " carries user info")
	case origin(u) != origin(base):
		return nil, errors.New(quote(d) + " points at another origin (" + quote(origin(u)) + ") than the server's (" + origin(base) + "); the client posts only to the origin it was given")
	}
	u.Fragment, u.RawFragment = "", ""
	// What is sent is the URL re-read from its text: check that too.
	again, err := url.Parse(u.String())
	if err != nil || again.User != nil || origin(again) != origin(base) {
		return nil, errors.New(quote(d) + " does not survive a round trip as the same-origin URL")
	}
	return again, nil
}

// readLoop delivers the stream's events until it ends or close is called.
func (t *sseTransport) readLoop(sr *sseStream) {
	defer close(t.readerDone)
	defer close(t.items)
	for {
		ev, err := sr.next()
		select {
		case t.items <- sseItem{ev: ev, bytes: sr.Consumed(), err: err}:
		case <-t.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// streamError converts the error that ended the stream (io.EOF is the
// server closing it).
func (t *sseTransport) streamError(ctx context.Context, method string, err error) error {
	var le *LimitError
	switch {
	case errors.Is(err, io.EOF):
		return &ResponseError{Method: method, Reason: "the HTTP+SSE stream ended before the response"}
	case errors.As(err, &le):
		c := *le
		c.Method = method
		return &c
	case ctx.Err() != nil:
		return fmt.Errorf("mcpclient: %s: %w", method, ctx.Err())
	}
	return &UnreachableError{Target: t.http.url, Err: fmt.Errorf("the HTTP+SSE stream broke: %w", err)}
}

func (t *sseTransport) setHeaders(h http.Header) {
	for k, vs := range t.cfg.Headers {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	t.cfg.setUserAgent(h)
}

type postResult struct {
	status  int
	wwwAuth string
	err     error
}

// post sends one message to the endpoint; the answer's body is discarded
// (responses arrive on the stream).
func (t *sseTransport) post(ctx, reqCtx context.Context, method string, body []byte) postResult {
	hr, err := http.NewRequestWithContext(reqCtx, http.MethodPost, t.endpoint.String(), bytes.NewReader(body))
	if err != nil || origin(hr.URL) != origin(t.base) {
		return postResult{err: &ResponseError{Method: method, Reason: "the endpoint URL cannot be used"}}
	}
	t.setHeaders(hr.Header)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	if t.headerVersion != "" {
		hr.Header.Set("Mcp-Protocol-Version", t.headerVersion)
	}
	resp, err := t.http.client.Do(hr)
	if err != nil {
		return postResult{err: t.http.failure(ctx, reqCtx, method, err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return postResult{status: resp.StatusCode, wwwAuth: safetext.Clip(strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), maxWWWAuthenticate)}
}

func (t *sseTransport) legacySession(version string) { t.headerVersion = legacyHeaderVersion(version) }

// roundTrip POSTs req and reads the stream until its response, at the same
// time: a server may hold the POST's answer until it has written the
// response event.
func (t *sseTransport) roundTrip(ctx context.Context, req *rpcRequest, _ bool) (*reply, error) {
	reqCtx, cancel := context.WithTimeout(ctx, t.cfg.RequestTimeout)
	defer cancel()
	posted := make(chan postResult, 1)
	go func() { posted <- t.post(ctx, reqCtx, req.Method, req.Body) }()
	rep := &reply{}
	items := t.items
	postDone := false
	events := 0
	var read int64
	for rep.msg == nil || !postDone {
		var it sseItem
		var ok bool
		select {
		case pr := <-posted:
			if pr.err != nil {
				return nil, pr.err
			}
			postDone = true
			rep.status, rep.wwwAuth = pr.status, pr.wwwAuth
			if !okStatus(pr.status) {
				rep.msg = nil
				return rep, nil // expect reports the HTTP error
			}
			continue
		case <-reqCtx.Done():
			if ctx.Err() != nil {
				return nil, fmt.Errorf("mcpclient: %s: %w", req.Method, ctx.Err())
			}
			return nil, &LimitError{Method: req.Method, Kind: LimitRequestTime, Max: t.cfg.RequestTimeout.Milliseconds()}
		case it, ok = <-items:
		}
		if !ok {
			return nil, &ResponseError{Method: req.Method, Reason: "the HTTP+SSE stream has ended"}
		}
		if it.err != nil {
			return nil, t.streamError(ctx, req.Method, it.err)
		}
		events++
		read += it.bytes
		switch {
		case events > t.cfg.MaxSSEEvents:
			return nil, &LimitError{Method: req.Method, Kind: LimitSSEEvents, Max: int64(t.cfg.MaxSSEEvents)}
		case read > t.cfg.MaxResponseBytes:
			return nil, &LimitError{Method: req.Method, Kind: LimitResponseBytes, Max: t.cfg.MaxResponseBytes}
		}
		msg, err := t.event(it.ev, req)
		if err != nil {
			return nil, err
		}
		if msg != nil {
			rep.msg = msg
			items = nil // the rest of the stream waits for the next request
		}
	}
	return rep, nil
}

// event handles one event while req waits: its response, or nil for an
// event to skip. A server request is refused (asynchronously, bounded).
func (t *sseTransport) event(ev frame.Event, req *rpcRequest) (*message, error) {
	if ev.Type == "endpoint" {
		t.obs.warn("the server sent another endpoint event; it was ignored (the POST URL stays the first one)")
		return nil, nil
	}
	if len(frame.TrimSpace(ev.Data)) == 0 || (ev.Type != "" && ev.Type != "message") {
		return nil, nil
	}
	msg, perr := parseMessage(ev.Data)
	if perr != nil {
		return nil, &ResponseError{Method: req.Method, Reason: "an event whose data is " + perr.Error()}
	}
	switch msg.kind {
	case kindNotification:
		return nil, nil
	case kindRequest:
		t.refuse(msg, req.Method)
		return nil, nil
	}
	if !msg.answers(req.ID) {
		return nil, &ResponseError{Method: req.Method, Reason: "the event stream carried a response with id " + msg.idText() + " to the request with id " + strconv.FormatInt(req.ID, 10)}
	}
	return msg, nil
}

// refuse POSTs the refusal of a server request without holding up the
// wait for the response (at most maxRefusals per run).
func (t *sseTransport) refuse(msg *message, during string) {
	if t.refusals.Add(1) > maxRefusals {
		return
	}
	noteRefusal(t.obs, msg, during)
	body := refusal(msg)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		ctx, cancel := context.WithTimeout(t.streamCtx, t.cfg.RequestTimeout)
		defer cancel()
		if pr := t.post(ctx, ctx, "a refusal of "+msg.method, body); pr.err == nil && !okStatus(pr.status) {
			t.mu.Lock()
			t.late = append(t.late, fmt.Sprintf("the refusal of %s was answered with HTTP %d", quote(msg.method), pr.status))
			t.mu.Unlock()
		}
	}()
}

// notify POSTs a notification (202 Accepted expected).
func (t *sseTransport) notify(ctx context.Context, req *rpcRequest) error {
	reqCtx, cancel := context.WithTimeout(ctx, t.cfg.RequestTimeout)
	defer cancel()
	pr := t.post(ctx, reqCtx, req.Method, req.Body)
	switch {
	case pr.err != nil:
		return pr.err
	case pr.status == http.StatusAccepted:
	case okStatus(pr.status):
		t.obs.warn(fmt.Sprintf("%s was answered with HTTP %d instead of 202", req.Method, pr.status))
	default:
		return &HTTPError{Method: req.Method, Status: pr.status, WWWAuthenticate: pr.wwwAuth}
	}
	return nil
}

// close ends the stream (the connection is closed, not reused) and waits
// for the reader and any refusal in flight.
func (t *sseTransport) close(obs *Observation) {
	t.closeOnce.Do(func() {
		t.wg.Wait() // refusals in flight are delivered (each within RequestTimeout)
		t.cancel()
		close(t.done)
		if t.body != nil {
			t.body.Close()
		}
		if t.readerDone != nil {
			<-t.readerDone
		}
		for _, w := range t.late {
			obs.warn(w)
		}
		if t.http.owned != nil {
			t.http.owned.CloseIdleConnections()
		}
	})
}

// closedTransport stands in after a transport was closed and no other
// could be opened.
type closedTransport struct{}

var errClosed = errors.New("mcpclient: the transport is closed")

func (closedTransport) roundTrip(context.Context, *rpcRequest, bool) (*reply, error) {
	return nil, errClosed
}
func (closedTransport) notify(context.Context, *rpcRequest) error { return errClosed }
func (closedTransport) legacySession(string)                      {}
func (closedTransport) close(*Observation)                        {}

package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// maxRedirects is the most redirects followed in a row.
const maxRedirects = 5

// maxWWWAuthenticate bounds the recorded WWW-Authenticate value.
const maxWWWAuthenticate = 4 << 10

// reply is what came back for one request.
type reply struct {
	msg     *message // the response; nil when the body held none
	status  int      // HTTP status; 0 on stdio
	wwwAuth string
	problem string // why msg is nil, for people (escaped)
}

// transport carries JSON-RPC messages to one server.
type transport interface {
	// roundTrip sends req and returns the response that answers it. A
	// response with another id is a *ResponseError. startup marks requests
	// sent before the server first answered (stdio: StartupTimeout).
	roundTrip(ctx context.Context, req *rpcRequest, startup bool) (*reply, error)
	// notify sends a notification.
	notify(ctx context.Context, req *rpcRequest) error
	// legacySession switches to a legacy session at the negotiated version.
	legacySession(version string)
	// close ends the session or the child and completes obs (Stderr).
	close(obs *Observation)
}

type httpTransport struct {
	cfg    *Config
	obs    *Observation
	client *http.Client
	owned  *http.Transport // closed at the end when created here
	url    string

	headerVersion string // legacy: the negotiated version for Mcp-Protocol-Version
	sessionID     string
	legacy        bool // in a legacy session: server requests are refused by POST
	refusals      int
	sse           sseBuffers // the response streams' read buffers, reused
}

func newHTTPTransport(cfg *Config, obs *Observation) (*httpTransport, error) {
	t := &httpTransport{cfg: cfg, obs: obs, url: cfg.BaseURL}
	t.client, t.owned = httpClient(cfg)
	return t, nil
}

// httpClient is the client of cfg: its HTTPClient (a copy) or a default
// one, with the RootCAs and the same-origin redirect rule; owned is the
// transport created here (closed by the caller at the end), or nil.
func httpClient(cfg *Config) (client *http.Client, owned *http.Transport) {
	var c http.Client
	if cfg.HTTPClient != nil {
		c = *cfg.HTTPClient
		if cfg.RootCAs != nil {
			base, _ := c.Transport.(*http.Transport)
			if base == nil {
				base = defaultTransport(cfg)
			} else {
				base = base.Clone()
			}
			tc := cfg.tlsConfig()
			if base.TLSClientConfig != nil {
				tc = base.TLSClientConfig.Clone()
				tc.RootCAs = cfg.RootCAs
			}
			base.TLSClientConfig = tc
			c.Transport, owned = base, base
		}
	} else {
		owned = defaultTransport(cfg)
		c.Transport = owned
	}
	c.CheckRedirect = checkRedirect
	if cfg.Auth != nil {
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c.Transport = authTransport{base: base, auth: cfg.Auth}
	}
	return &c, owned
}

func defaultTransport(cfg *Config) *http.Transport {
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           4,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		TLSClientConfig:        cfg.tlsConfig(),
	}
}

// origin is scheme://host:port with the default port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// checkRedirect follows redirects within the origin of the first request,
// without a method change, at most maxRedirects.
func checkRedirect(req *http.Request, via []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	fail := func(reason string) error {
		return &RedirectError{Status: status, Location: req.URL.String(), Reason: reason}
	}
	switch {
	case len(via) > maxRedirects:
		return fail("more than " + strconv.Itoa(maxRedirects) + " redirects")
	case origin(req.URL) != origin(via[0].URL):
		return fail("another origin than " + origin(via[0].URL))
	case req.Method != via[len(via)-1].Method:
		return fail("it turns the " + via[len(via)-1].Method + " into a " + req.Method)
	}
	return nil
}

func (t *httpTransport) legacySession(version string) {
	t.legacy = true
	t.headerVersion = legacyHeaderVersion(version)
}

// legacyHeaderVersion is the MCP-Protocol-Version of a legacy session: the
// header exists from 2025-06-18 on ("" before).
func legacyHeaderVersion(version string) string {
	if version == mcpwire.Rev20250326 || version == mcpwire.Rev20241105 {
		return ""
	}
	return version
}

// newHTTPRequest builds a POST of body with the configured headers and the
// MCP headers derived from the body.
func (t *httpTransport) newHTTPRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	mh, err := requestHeaders(body, t.headerVersion)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, method, t.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range t.cfg.Headers {
		hr.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	t.cfg.setUserAgent(hr.Header)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range mh {
		hr.Header[k] = vs
	}
	if t.sessionID != "" {
		hr.Header.Set(mcpwire.HeaderSessionID, t.sessionID)
	}
	return hr, nil
}

// failure classifies an error from Do or from reading a body.
func (t *httpTransport) failure(ctx, reqCtx context.Context, method string, err error) error {
	var re *RedirectError
	var le *LimitError
	var ae *AuthError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &re):
		return re
	case errors.As(err, &le):
		return le
	case ctx.Err() != nil:
		return fmt.Errorf("mcpclient: %s: %w", method, ctx.Err())
	case reqCtx.Err() != nil:
		return &LimitError{Method: method, Kind: LimitRequestTime, Max: t.cfg.RequestTimeout.Milliseconds()}
	}
	// The server answered, but not with HTTP: a malformed status line or
	// header is an unusable answer, not an unreachable server.
	var pe textproto.ProtocolError
	if errors.As(err, &pe) {
		return &ResponseError{Method: method, Reason: "the server's HTTP response is malformed: " + unquoteGo(string(pe))}
	}
	if msg := err.Error(); strings.Contains(msg, "malformed HTTP") {
		return &ResponseError{Method: method, Reason: "the server's HTTP response is malformed: " + unquoteGo(msg[strings.Index(msg, "malformed HTTP"):])}
	}
	return &UnreachableError{Target: t.url, Err: err}
}

func (t *httpTransport) roundTrip(ctx context.Context, req *rpcRequest, _ bool) (*reply, error) {
	reqCtx, cancel := context.WithTimeout(ctx, t.cfg.RequestTimeout)
	defer cancel()
	hr, err := t.newHTTPRequest(reqCtx, http.MethodPost, req.Body)
	if err != nil {
		return nil, err
	}
	for _, ph := range req.params {
		hr.Header.Set(ph.Name, ph.Value)
	}
	resp, err := t.client.Do(hr)
	if err != nil {
		return nil, t.failure(ctx, reqCtx, req.Method, err)
	}
	defer resp.Body.Close()
	rep := &reply{status: resp.StatusCode, wwwAuth: safetext.Clip(strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), maxWWWAuthenticate)}
	if rep.status == http.StatusUnauthorized || rep.status == http.StatusForbidden {
		return rep, nil // the caller reports the HTTP error; the body is not read
	}
	if req.Method == methodInitialize {
		if sid := resp.Header.Get(mcpwire.HeaderSessionID); sid != "" {
			if !validSessionID(sid) {
				return nil, &ResponseError{Method: req.Method, HTTPStatus: rep.status, Reason: "the " + mcpwire.HeaderSessionID + " header is not 1-1024 visible ASCII characters"}
			}
			t.sessionID = sid
		}
	}
	max := t.cfg.MaxResponseBytes
	if resp.ContentLength > max {
		return nil, &LimitError{Method: req.Method, Kind: LimitResponseBytes, Max: max}
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt == "text/event-stream" {
		msg, problem, err := t.readSSE(reqCtx, resp.Body, req)
		if err != nil {
			return nil, t.failure(ctx, reqCtx, req.Method, err)
		}
		rep.msg, rep.problem = msg, problem
		return rep, nil
	}
	body, err := readBounded(resp.Body, max, resp.ContentLength)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, &LimitError{Method: req.Method, Kind: LimitResponseBytes, Max: max}
		}
		return nil, t.failure(ctx, reqCtx, req.Method, err)
	}
	isJSON := mt == "application/json" || strings.HasSuffix(mt, "+json")
	if !isJSON {
		// Error bodies are often sent without a JSON Content-Type; a 2xx
		// answer to a request must say what it is.
		tb := frame.TrimSpace(body)
		if rep.status < 300 || len(tb) == 0 || tb[0] != '{' {
			rep.problem = "a body of Content-Type " + quote(ct) + " (" + strconv.Itoa(len(body)) + " bytes)"
			return rep, nil
		}
	}
	msg, perr := parseMessage(body)
	switch {
	case perr != nil:
		rep.problem = perr.Error()
	case msg.kind != kindResponse:
		rep.problem = "a JSON-RPC request or notification where the response was expected"
	case !msg.answers(req.ID):
		return nil, &ResponseError{Method: req.Method, HTTPStatus: rep.status, Reason: "a response with id " + msg.idText() + " to the request with id " + strconv.FormatInt(req.ID, 10)}
	default:
		rep.msg = msg
	}
	return rep, nil
}

// readSSE reads events until the response to req. Priming events (empty
// data), events of other types and server notifications are skipped. A
// server request is refused in a legacy session (a JSON-RPC error POSTed
// back, see refusal; at most maxRefusals) and ignored in the modern era,
// where servers must not send requests on a response stream and clients
// must not POST responses.
func (t *httpTransport) readSSE(ctx context.Context, body io.Reader, req *rpcRequest) (*message, string, error) {
	sr, done := t.sse.stream(body, req.Method, t.cfg.MaxResponseBytes, t.cfg.MaxSSEEvents)
	defer done()
	var resume *resumption // made when the stream first ends early
	defer func() { resume.close() }()
	ignoredRequests := 0
	for {
		// The event's data is the stream's buffer: a large event is
		// parsed in that buffer, given to it (Detach), and a small one
		// copied: a message keeps what it was parsed from.
		ev, err := sr.nextShared()
		if err != nil && t.resumes(ctx, err) {
			if resume == nil {
				resume = t.newResumption()
			}
			next, problem, rerr := resume.next(ctx, sr, err)
			if next == nil {
				return nil, problem, rerr
			}
			sr = next
			continue
		}
		if err == io.EOF {
			return nil, "the event stream ended without the response", nil
		}
		if err != nil {
			return nil, "", err
		}
		if len(frame.TrimSpace(ev.Data)) == 0 || (ev.Type != "" && ev.Type != "message") {
			continue
		}
		data := ev.Data
		if len(data) >= detachAt && cap(data) <= 2*len(data) {
			sr.Detach() // a page: held once, as the message's own
		} else {
			// Small, or in a buffer much larger than itself (made for a
			// larger event before it): a copy, so that what keeps the
			// message keeps no more than its bytes.
			data = bytes.Clone(data)
		}
		msg, perr := parseMessage(data)
		if perr != nil {
			return nil, "an event whose data is " + perr.Error(), nil
		}
		switch msg.kind {
		case kindNotification:
			continue
		case kindRequest:
			if t.legacy {
				t.refuse(ctx, msg, req.Method)
				continue
			}
			if ignoredRequests++; ignoredRequests == 1 {
				t.obs.warn("the server sent a request (" + quote(msg.method) + ") on the " + req.Method + " response stream, which a 2026-07-28 server must not do; it was not answered")
			}
			continue
		}
		if !msg.answers(req.ID) {
			return nil, "", &ResponseError{Method: req.Method, Reason: "the event stream carried a response with id " + msg.idText() + " to the request with id " + strconv.FormatInt(req.ID, 10)}
		}
		return msg, "", nil
	}
}

// refuse POSTs the refusal of a server request in the legacy session (202
// expected). Failures are warnings: the run goes on waiting for its
// response.
func (t *httpTransport) refuse(ctx context.Context, msg *message, during string) {
	if t.refusals++; t.refusals > maxRefusals {
		return
	}
	noteRefusal(t.obs, msg, during)
	hr, err := t.newHTTPRequest(ctx, http.MethodPost, refusal(msg))
	if err != nil {
		return
	}
	resp, err := t.client.Do(hr)
	if err != nil {
		t.obs.warn("POSTing the refusal of " + quote(msg.method) + " failed: " + t.failure(ctx, ctx, "a refusal", err).Error())
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		t.obs.warn(fmt.Sprintf("the refusal of %s was answered with HTTP %d", quote(msg.method), resp.StatusCode))
	}
}

// noteRefusal records, once per method, that a server request was refused.
func noteRefusal(obs *Observation, msg *message, during string) {
	if msg.method == methodPing {
		return
	}
	obs.warn("the server sent a " + quote(msg.method) + " request (during " + during + "); it was refused with a JSON-RPC error: mcpdrift declares client capabilities only so that the list is the one such clients see, and answers no server request with content")
}

var errTooLarge = errors.New("body too large")

// readBounded reads all of r, failing with errTooLarge past max bytes.
func readBounded(r io.Reader, max, hint int64) ([]byte, error) {
	if hint > 0 && hint <= max {
		// The length is known: read it into a slice of exactly that size
		// (a bytes.Buffer would keep up to twice it, and the tools parsed
		// from the body keep the body).
		body := make([]byte, hint)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	// Of unknown length: read into a pooled buffer, then copied at its
	// size (a buffer grown from nothing for each page of a listing was
	// most of what a listing allocated).
	buf := bodyBufs.Get().(*bytes.Buffer)
	defer putBodyBuf(buf)
	n, err := buf.ReadFrom(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, errTooLarge
	}
	return bytes.Clone(buf.Bytes()), nil
}

// bodyBufs are the buffers of readBounded.
var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBodyBuf returns a buffer to bodyBufs, unless a large body grew it
// (one large response does not pin its size for the life of the process).
func putBodyBuf(b *bytes.Buffer) {
	if b.Cap() <= 4<<20 {
		b.Reset()
		bodyBufs.Put(b)
	}
}

func validSessionID(s string) bool {
	if len(s) > 1024 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// notify POSTs a notification and expects 202 Accepted.
func (t *httpTransport) notify(ctx context.Context, req *rpcRequest) error {
	reqCtx, cancel := context.WithTimeout(ctx, t.cfg.RequestTimeout)
	defer cancel()
	hr, err := t.newHTTPRequest(reqCtx, http.MethodPost, req.Body)
	if err != nil {
		return err
	}
	resp, err := t.client.Do(hr)
	if err != nil {
		return t.failure(ctx, reqCtx, req.Method, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode == http.StatusAccepted:
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		t.obs.warn(fmt.Sprintf("%s was answered with HTTP %d instead of 202", req.Method, resp.StatusCode))
	default:
		return &HTTPError{Method: req.Method, Status: resp.StatusCode, WWWAuthenticate: safetext.Clip(strings.Join(resp.Header.Values("WWW-Authenticate"), ", "), maxWWWAuthenticate)}
	}
	return nil
}

// close ends a legacy session with DELETE (405 means the server does not
// allow that) and releases connections.
func (t *httpTransport) close(*Observation) {
	if t.owned != nil {
		defer t.owned.CloseIdleConnections()
	}
	if t.sessionID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(t.cfg.RequestTimeout, 5*time.Second))
	defer cancel()
	hr, err := t.newSessionRequest(ctx, http.MethodDelete)
	if err != nil {
		return
	}
	resp, err := t.client.Do(hr)
	if err != nil {
		t.obs.warn("ending the session with DELETE failed: " + t.failure(ctx, ctx, "DELETE", err).Error())
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		t.obs.warn(fmt.Sprintf("ending the session with DELETE was answered with HTTP %d", resp.StatusCode))
	}
}

// unquoteGo turns a net/http message that ends in a Go-quoted value
// (`malformed MIME header: missing colon: "Bad \"line"`) into the message
// with the value quoted once, by quote: one level of escaping, not two.
func unquoteGo(msg string) string {
	if i := strings.IndexByte(msg, '"'); i >= 0 {
		if raw, err := strconv.Unquote(msg[i:]); err == nil {
			return safetext.Escape(strings.TrimSpace(msg[:i])) + " " + quote(raw)
		}
	}
	return quote(msg)
}

package proxy

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// maxInFlight bounds the requests of one stdio downstream handled at once.
const maxInFlight = 64

// stdioDrain is how long requests still in flight when a stdio downstream
// ends may take to finish before they are cancelled.
const stdioDrain = 2 * time.Second

// out is every byte the gateway sends downstream: the secrets it knows
// (the credentials it holds for the upstream, and the downstream
// credentials it has seen) are redacted, so an upstream that reflects a
// credential into a result, an error or a notification cannot hand it to
// an agent — in the bytes, and where JSON escapes spell it
// (redact.Set.JSON). It is the one place downstream bytes may differ from
// the upstream's, and only where a secret stood.
func (g *Gateway) out(b []byte) []byte { return g.cfg.Secrets.JSON(b) }

// dial opens an upstream link for a new session.
func (g *Gateway) dial(ctx context.Context) (upstream, error) {
	if g.cfg.Upstream.URL != "" {
		return g.traced(newHTTPUpstream(g)), nil
	}
	up, err := newStdioUpstream(ctx, g)
	if err != nil {
		return nil, err
	}
	return g.traced(up), nil
}

// ServeStdio serves one downstream over newline-delimited JSON-RPC on r
// and w (the drop-in form: a client configuration whose command is the
// gateway). It returns when r ends (the downstream is gone), after ending
// the upstream; or with an error when a write to w fails, or a fault
// ended the session (fault.go) — a panic of w's, say: the session ends,
// not the process. Nothing is written to w after it returns.
func (g *Gateway) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) (err error) {
	up, err := g.dial(ctx)
	if err != nil {
		return err
	}
	out := &stdioOut{g: g, w: w, broken: make(chan struct{})}
	write := out.write
	s := newSession(g, "", up, write)
	defer func() {
		if v := recover(); v != nil {
			s.fault("serving the stdio downstream", v)
		}
		if where := s.failedReason(); where != "" {
			err = errors.New("proxy: the session was ended after a fault while " + where)
		} else if werr := out.failed(); werr != nil && err == nil {
			err = errors.New("proxy: writing to the downstream: " + mcpwire.ErrorText(werr, 300))
		}
	}()
	defer s.close()
	defer out.end()
	stop := make(chan struct{})
	defer close(stop)
	lines := readLines(s, r, g.cfg.MaxMessageBytes, stop)
	ws := newStdioWorkers(ctx, s, write)
	defer ws.drain()
	dispatch := ws.dispatch
	for {
		var lm lineMsg
		select {
		case <-ctx.Done():
			return nil
		case <-s.dead:
			return nil // the deferred function says why
		case <-out.broken:
			return nil
		case lm = <-lines:
		}
		if lm.tooLong {
			write(frame.AppendError(nil, nil, &frame.Error{Code: mcpwire.CodeInvalidRequest, Message: "Invalid Request: the message is larger than the gateway accepts"}))
		} else if b := frame.TrimSpace(lm.b); len(b) > 0 {
			m, ferr := frame.FromClient(b)
			if ferr != nil {
				var id []byte
				if m != nil {
					id = m.IDRaw()
				}
				write(frame.AppendError(nil, id, g.refusedFrame(m, ferr)))
			} else if m.Kind != frame.Request {
				// Notifications and responses are forwarded in order,
				// before any later request: notifications/initialized must
				// reach the upstream before the requests that follow it.
				s.handle(ctx, m, nil, write)
			} else if m.Method == "initialize" {
				// Answered before the next line is read: nothing is decided
				// before the upstream has said who it is (a client that
				// pipelines initialize and tools/list would otherwise have
				// its list gated against an unknown name), and
				// notifications/initialized never overtakes it.
				ws.serve(m)
			} else {
				dispatch(m)
			}
		}
		if lm.err != nil {
			return nil
		}
	}
}

// stdioOut is a stdio downstream's output: one line per message, one
// write at a time. After a write failed or panicked, or once ServeStdio
// has returned, nothing more is written: a re-observation or a server
// message that comes later finds the output ended.
type stdioOut struct {
	g      *Gateway
	w      io.Writer
	mu     sync.Mutex
	err    error
	ended  bool
	broken chan struct{} // closed when a write failed
}

func (o *stdioOut) write(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended || o.err != nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			o.err = errors.New("the downstream's writer panicked")
			close(o.broken)
			panic(v) // the goroutine's guard ends the session and says where
		}
	}()
	if _, err := o.w.Write(frame.AppendLine(nil, o.g.out(b))); err != nil {
		o.err = err
		close(o.broken)
	}
}

func (o *stdioOut) end() {
	o.mu.Lock()
	o.ended = true
	o.mu.Unlock()
}

func (o *stdioOut) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

type lineMsg struct {
	b       []byte
	tooLong bool
	err     error
}

// readLines reads a stdio downstream's lines on a goroutine of their own
// until r ends or stop is closed. The read blocks until r has a line
// (os.Stdin cannot be interrupted); ServeStdio does not wait for it to
// end.
func readLines(s *session, r io.Reader, max int64, stop chan struct{}) <-chan lineMsg {
	lines := make(chan lineMsg)
	go func() {
		defer s.guard("reading the stdio downstream")
		lr := frame.NewLineReader(r, max)
		for {
			line, err := lr.Next()
			lm := lineMsg{b: line, err: err}
			if frame.IsLineTooLong(err) {
				lm.tooLong, lm.err = true, lr.Skip()
			}
			select {
			case lines <- lm:
			case <-stop:
				return
			}
			if lm.err != nil {
				return
			}
		}
	}()
	return lines
}

// stdioWorkers answer a stdio downstream's requests concurrently: up to
// maxInFlight workers, started as needed and kept for the session (a
// goroutine per request would start on a small stack and grow it again
// for every call: the argument validation recurses).
type stdioWorkers struct {
	s     *session
	write func([]byte)
	work  chan *frame.Message
	n     int
	wg    sync.WaitGroup
	// When the downstream is gone (r ended) or ctx ends, what is still in
	// flight must not keep the session and its upstream alive: a
	// subscriptions/listen stream, which never ends by itself, is
	// cancelled at once; other requests get stdioDrain to finish (a
	// request piped in just before the end is still answered), then are
	// cancelled.
	reqCtx, streamCtx         context.Context
	cancelReqs, cancelStreams context.CancelFunc
}

func newStdioWorkers(ctx context.Context, s *session, write func([]byte)) *stdioWorkers {
	ws := &stdioWorkers{s: s, write: write, work: make(chan *frame.Message)}
	ws.reqCtx, ws.cancelReqs = context.WithCancel(ctx)
	ws.streamCtx, ws.cancelStreams = context.WithCancel(ws.reqCtx)
	return ws
}

func (ws *stdioWorkers) serve(m *frame.Message) {
	hctx := ws.reqCtx
	if m.Method == "subscriptions/listen" {
		hctx = ws.streamCtx
	}
	rep := ws.s.handle(hctx, m, nil, ws.write)
	switch {
	case rep.err != nil:
		ws.write(errorBody(m, mcpwire.CodeInternalError, rep.err.Error(), "upstream_refused", nil))
	case rep.body != nil:
		ws.write(rep.body)
	}
}

// dispatch hands m to an idle worker, or a new one, or waits for one; a
// session a fault ended takes no more.
func (ws *stdioWorkers) dispatch(m *frame.Message) {
	select {
	case ws.work <- m: // an idle worker
		return
	default:
	}
	if ws.n == maxInFlight {
		select {
		case ws.work <- m: // wait for one
		case <-ws.s.dead:
		}
		return
	}
	ws.n++
	ws.wg.Add(1)
	go func() {
		defer ws.wg.Done()
		defer ws.s.guard("answering a request of the stdio downstream")
		for ; m != nil; m = <-ws.work {
			ws.serve(m)
		}
	}()
}

// drain ends the workers: listen streams at once, other requests after
// stdioDrain.
func (ws *stdioWorkers) drain() {
	defer ws.cancelReqs()
	close(ws.work)
	ws.cancelStreams()
	done := make(chan struct{})
	go func() { ws.wg.Wait(); close(done) }()
	t := time.NewTimer(stdioDrain)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		ws.cancelReqs()
		<-done
	}
}

// HTTPOptions tune the downstream HTTP side.
type HTTPOptions struct {
	// Token, when set, is the bearer token every downstream request must
	// carry (Authorization: Bearer TOKEN). The gateway then consumes the
	// Authorization header: it is never forwarded.
	Token string

	// Bounds on what a downstream may hold (zero: the default). The first
	// three are the http.Server's (Server sets them).
	ReadHeaderTimeout time.Duration // the request line and headers (10 s): a slowloris client is cut off
	IdleTimeout       time.Duration // a kept-alive connection between requests (2 min)
	MaxHeaderBytes    int           // the request headers (64 KiB)
	// BodyTimeout bounds the reading of one POST body (60 s): a body
	// trickled in, or sent slowly forever, is refused with 408. A body's
	// size is bounded by Config.MaxMessageBytes (413).
	BodyTimeout time.Duration
	// StreamWriteTimeout bounds each write to a GET stream (30 s): a
	// downstream that stops reading its stream loses it (its session
	// stays).
	StreamWriteTimeout time.Duration

	// ResourceMetadata, when set, is served at the well-known URLs and
	// named by the upstream's challenges the gateway relays (oauth.go).
	ResourceMetadata *ResourceMetadata
}

// WithDefaults returns o with every zero bound set to its default.
func (o HTTPOptions) WithDefaults() HTTPOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ReadHeaderTimeout, 10*time.Second)
	def(&o.IdleTimeout, 2*time.Minute)
	def(&o.BodyTimeout, 60*time.Second)
	def(&o.StreamWriteTimeout, 30*time.Second)
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	return o
}

// Server returns the http.Server that serves Handler(opt) with opt's
// bounds (what mcpdrift proxy --listen runs; call Serve with a listener).
// There is no ReadTimeout or WriteTimeout: they would also end GET streams
// and long tool calls; the body and each stream write have their own
// deadlines instead.
func (g *Gateway) Server(opt HTTPOptions) *http.Server {
	opt = opt.WithDefaults()
	return &http.Server{Handler: g.Handler(opt), ReadHeaderTimeout: opt.ReadHeaderTimeout,
		IdleTimeout: opt.IdleTimeout, MaxHeaderBytes: opt.MaxHeaderBytes}
}

// Handler serves the downstream over Streamable HTTP at /mcp, and
// /healthz (200 when the upstream was observed and the baseline is valid,
// 503 otherwise — and then the gateway observes the upstream itself, in
// the background: see Observe).
func (g *Gateway) Handler(opt HTTPOptions) http.Handler {
	opt = opt.WithDefaults()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if g.Ready() {
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "ready\n")
			return
		}
		// Not ready: observe the upstream in the background, so that a
		// replica no agent can reach yet (a readiness probe keeps it out
		// of its Service) becomes ready by itself.
		g.kickObserve()
		w.WriteHeader(http.StatusServiceUnavailable)
		if why := g.BaselineInvalid(); why != "" {
			_, _ = w.Write(g.out([]byte("not ready: the server is withheld: the baseline is not valid: " + why + "\n")))
			return
		}
		_, _ = io.WriteString(w, "not ready: the upstream has not been observed and gated, or the baseline is not valid\n")
	})
	g.serveResourceMetadata(mux, opt.ResourceMetadata)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w = withChallenge(w, r, opt.ResourceMetadata)
		if why := rebinding(r); why != "" {
			http.Error(w, why, http.StatusForbidden)
			return
		}
		if opt.Token != "" && !bearerOK(r, opt.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpdrift-proxy"`)
			http.Error(w, "this gateway needs its bearer token", http.StatusUnauthorized)
			return
		}
		switch r.Method {
		case http.MethodPost:
			g.post(w, r, opt)
		case http.MethodGet:
			g.stream(w, r, opt)
		case http.MethodDelete:
			g.endSession(w, r)
		default:
			w.Header().Set("Allow", "POST, GET, DELETE")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
	go g.reapIdle()
	return mux
}

// rebinding refuses a request that reached the gateway on a loopback
// address but names another host: its Host header, or an Origin header,
// that is not a loopback name (403, as the go-sdk server does). That is
// DNS rebinding — a web page whose name resolves to 127.0.0.1 makes the
// browser post to the gateway, which would relay it upstream, past the
// upstream's own check of the Host and with the gateway's credentials.
func rebinding(r *http.Request) string {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil || !loopbackHost(la.String()) {
		return ""
	}
	if !loopbackHost(r.Host) {
		return "Forbidden: the Host header names no loopback host (the gateway listens on loopback)"
	}
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || u.Host == "" || !loopbackHost(u.Host) {
			return "Forbidden: the Origin is not a loopback origin (the gateway listens on loopback)"
		}
	}
	return ""
}

// loopbackHost: HOST or HOST:PORT is localhost or a loopback address.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func bearerOK(r *http.Request, token string) bool {
	a := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(a) <= len(p) || !strings.EqualFold(a[:len(p)], p) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(a[len(p):]), []byte(token)) == 1
}

// httpSession is a legacy HTTP session's server→client queue, bounded in
// messages and in bytes (max: the messages waiting hold at most
// MaxMessageBytes), so a downstream that does not read its stream cannot
// make the gateway hold what the upstream keeps sending.
type httpSession struct {
	s      *session
	queue  chan []byte
	queued atomic.Int64 // bytes in queue
	max    int64
	done   chan struct{} // closed when the session ends: its stream ends
	end    sync.Once
	mu     sync.Mutex
	open   bool // a GET stream is open
}

// ended closes the session's stream.
func (hs *httpSession) ended() { hs.end.Do(func() { close(hs.done) }) }

// forwardHeaders is what a downstream request may send upstream.
func (g *Gateway) forwardHeaders(r *http.Request) http.Header {
	h := http.Header{}
	if g.cfg.Upstream.ForwardAuthorization {
		if a := r.Header.Get("Authorization"); a != "" {
			h.Set("Authorization", a)
		}
	}
	return h
}

// paramHeadersOf returns a downstream request's Mcp-Param-* headers, for
// its tools/call: all of them (MaxHeaderBytes bounds them), since each
// annotated argument's header is checked against the body, however many
// the tool annotates (at most 64 were kept, and a tool with more had its
// later arguments refused as missing their headers).
func paramHeadersOf(h http.Header) http.Header {
	out := http.Header{}
	for k, vs := range h {
		if len(k) > len(mcpwire.HeaderParamPrefix) && strings.EqualFold(k[:len(mcpwire.HeaderParamPrefix)], mcpwire.HeaderParamPrefix) {
			out[k] = vs
		}
	}
	return out
}

// refusedFrame is the answer to a message the framing refused. A message
// that decoders read differently (frame.ReasonAmbiguous) is the gateway's
// decision: logged, counted and answered with the gateway's data; other
// framing errors are answered as they are.
func (g *Gateway) refusedFrame(m *frame.Message, e *frame.Error) *frame.Error {
	if e.Reason == "" {
		return e
	}
	method := ""
	if m != nil {
		method = m.Method
	}
	g.cfg.Metrics.request(method, "refused")
	g.cfg.Log.write(g.cfg.Secrets, Record{Time: g.cfg.Now(), ServerID: g.cfg.ServerID, Mode: string(g.cfg.Mode),
		Method: method, Decision: "deny", Reasons: []string{e.Reason}})
	out := *e
	out.Data = errorData(e.Reason, nil)
	return &out
}

func writeRPCError(w http.ResponseWriter, status int, id []byte, e *frame.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(frame.AppendError(nil, id, e))
}

func (g *Gateway) post(w http.ResponseWriter, r *http.Request, opt HTTPOptions) {
	// The body within its deadline (a body trickled in holds a connection
	// and a goroutine no longer), then no deadline: an expired one would
	// cancel the request while the upstream answers. A body refused keeps
	// its expired deadline, so the server's drain of the rest of it after
	// the answer ends at once too.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(opt.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxMessageBytes))
	if err == nil {
		_ = rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, &frame.Error{Code: mcpwire.CodeInvalidRequest, Message: "Invalid Request: the body is larger than the gateway accepts"})
			return
		}
		w.Header().Set("Connection", "close")
		writeRPCError(w, http.StatusRequestTimeout, nil, &frame.Error{Code: mcpwire.CodeInvalidRequest, Message: "Invalid Request: the body did not arrive whole in time"})
		return
	}
	m, ferr := frame.FromClient(body)
	if ferr != nil {
		var id []byte
		if m != nil {
			id = m.IDRaw()
		}
		status := ferr.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		writeRPCError(w, status, id, g.refusedFrame(m, ferr))
		return
	}
	s, hs, status, e := g.route(r, m)
	if e != nil {
		writeRPCError(w, status, m.IDRaw(), e)
		return
	}
	defer s.guardHTTP("answering a POST of the downstream")
	if hs != nil {
		w.Header().Set(mcpwire.HeaderSessionID, hs.sidFor())
	}
	ps := &postStream{g: g, s: s, hs: hs, w: w, wantsSSE: acceptsSSE(r)}
	if m.Method == "tools/call" {
		ps.params = paramHeadersOf(r.Header)
	}
	ctx := context.WithValue(r.Context(), downstreamKey{}, ps)
	rep := s.handle(ctx, m, g.forwardHeaders(r), ps.msg)
	ps.answer(m, rep)
	if hs != nil && m.Method == "initialize" && !initialized(rep) {
		// The upstream did not accept the session: the gateway keeps none.
		g.dropSession(hs.s.id)
	}
}

// postStream is the answer to one downstream POST: the server's messages
// that come while the request is answered (an event stream, or the
// session's GET stream when the downstream accepts no event stream),
// then the answer. Once the answer is written the handler returns, and
// what comes later — a list_changed whose re-observation ended after the
// answer, a stream's notification already on its way — goes to the
// session's own stream or is dropped (session.late): the response is
// finished, and writing to it would write to a connection that serves
// another request, or panic.
//
// It is in the request's context (downstreamKey) for what the upstream
// link needs of it: the Mcp-Param-* headers of a tools/call, and
// holdFlushes.
type postStream struct {
	g        *Gateway
	s        *session
	hs       *httpSession
	w        http.ResponseWriter
	wantsSSE bool
	params   http.Header // a tools/call's Mcp-Param-* headers (nil for another method)

	mu       sync.Mutex
	sse      *frame.SSEWriter
	finished bool
	held     bool // the events written wait for the next one (holdFlushes)
}

// downstreamKey is the context key of an HTTP downstream request's
// *postStream.
type downstreamKey struct{}

// holdFlushes is called by the upstream link around a message it hands
// on while more of the upstream's stream has already arrived: the event
// it makes waits in the buffer, and goes out in one write with the next
// (a notification just before the response, as servers send them,
// reaches the downstream with it, not in a write and a wake-up of its
// own). The next message handed on without a hold, or the answer,
// flushes it; a message that comes from elsewhere meanwhile waits with
// it.
func (ps *postStream) holdFlushes(on bool) {
	ps.mu.Lock()
	ps.held = on
	ps.mu.Unlock()
}

// msg carries one server message that came while the request is
// answered.
func (ps *postStream) msg(b []byte) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch {
	case ps.finished:
		ps.s.late(b)
		return
	case !ps.wantsSSE:
		if ps.hs != nil {
			ps.hs.push(b) // to the session's GET stream instead
		}
		return
	}
	if ps.sse == nil {
		ps.w.Header().Set("Content-Type", "text/event-stream")
		ps.w.Header().Set("Cache-Control", "no-cache")
		ps.w.WriteHeader(http.StatusOK)
		ps.sse = frame.NewSSEWriter(ps.w)
	}
	ps.sse.Event(frame.Event{Data: ps.g.out(b)})
	if !ps.held {
		_ = ps.sse.Flush()
	}
}

// answer writes the reply to m and finishes the stream.
func (ps *postStream) answer(m *frame.Message, rep reply) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.finished = true
	g, w, sse := ps.g, ps.w, ps.sse
	wantsSSE := ps.wantsSSE
	switch {
	case rep.err != nil && sse == nil:
		// The upstream's own refusal, relayed as it came (an OAuth
		// challenge must reach the client).
		if rep.err.WWWAuthenticate != "" {
			// The upstream's words: a challenge may quote the credential
			// it refused (error_description), which the agent must not get.
			w.Header().Set("WWW-Authenticate", g.cfg.Secrets.String(rep.err.WWWAuthenticate))
		}
		writeRPCError(w, rep.err.Status, m.IDRaw(), &frame.Error{Code: mcpwire.CodeInternalError, Message: "the upstream refused the request", Data: []byte(`{"source":"mcpdrift-proxy","reason":"upstream_refused"}`)})
	case rep.err != nil:
		sse.Event(frame.Event{Data: errorBody(m, mcpwire.CodeInternalError, "the upstream refused the request", "upstream_refused", nil)})
		_ = sse.Flush()
	case rep.body == nil:
		if sse == nil {
			w.WriteHeader(http.StatusAccepted)
		}
	case sse != nil:
		sse.Event(frame.Event{Data: g.out(rep.body)})
		_ = sse.Flush()
	case rep.sse && wantsSSE && rep.status == 0:
		// The upstream answered on an event stream: so does the gateway.
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		sw := frame.NewSSEWriter(w)
		sw.Event(frame.Event{Data: g.out(rep.body)})
		_ = sw.Flush()
	default:
		// An error response keeps the status it came with (2026-07-28: 404
		// for -32601, 400 for -32602, -32020, -32021 and -32022).
		status := http.StatusOK
		if rep.status != 0 {
			status = rep.status
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(g.out(rep.body))
	}
}

// initialized reports whether an initialize reply is a result.
func initialized(rep reply) bool {
	if rep.err != nil || rep.body == nil {
		return false
	}
	m, err := frame.Parse(rep.body)
	return err == nil && m.Kind == frame.Response
}

func acceptsSSE(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if !strings.Contains(part, ";") {
				// A bare media type: what ParseMediaType would read, without
				// its map of parameters.
				if strings.EqualFold(part, "text/event-stream") {
					return true
				}
				continue
			}
			if mt, _, err := mime.ParseMediaType(part); err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}

// route finds the session of a POST: initialize starts a legacy session;
// a request with Mcp-Session-Id belongs to one this gateway knows (a
// session another replica holds is refused, never forwarded blind); any
// other request is 2026-07-28 stateless traffic, whose headers must agree
// with its body (-32020).
func (g *Gateway) route(r *http.Request, m *frame.Message) (*session, *httpSession, int, *frame.Error) {
	if sid := r.Header.Get(mcpwire.HeaderSessionID); sid != "" {
		g.mu.Lock()
		s := g.sessions[sid]
		g.mu.Unlock()
		if s == nil {
			return nil, nil, http.StatusNotFound, &frame.Error{Code: mcpwire.CodeInvalidRequest,
				Message: "Session not found: this gateway does not know the session (legacy sessions need session affinity to one replica); initialize again"}
		}
		return s, s.http, 0, nil
	}
	if m.Method == "initialize" {
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return nil, nil, http.StatusServiceUnavailable, &frame.Error{Code: mcpwire.CodeInternalError, Message: "the gateway is shutting down"}
		}
		// The place is taken before the upstream is dialled (a stdio
		// upstream is a process to start): initializes that race each
		// other cannot open more than MaxSessions.
		if len(g.sessions)+g.opening >= g.cfg.MaxSessions {
			g.mu.Unlock()
			return nil, nil, http.StatusServiceUnavailable, &frame.Error{Code: mcpwire.CodeInternalError, Message: "the gateway holds as many sessions as it may"}
		}
		g.opening++
		g.mu.Unlock()
		up, err := g.dial(r.Context())
		if err != nil {
			g.mu.Lock()
			g.opening--
			g.mu.Unlock()
			return nil, nil, http.StatusBadGateway, &frame.Error{Code: mcpwire.CodeInternalError, Message: "the upstream cannot be reached"}
		}
		hs := &httpSession{queue: make(chan []byte, 256), done: make(chan struct{}), max: g.cfg.MaxMessageBytes}
		s := newSession(g, newSessionID(), up, hs.push)
		s.http = hs
		hs.s = s
		g.mu.Lock()
		g.opening--
		g.sessions[s.id] = s
		g.mu.Unlock()
		return s, hs, 0, nil
	}
	if _, ok := metaVersion(m); m.Kind == frame.Request && !ok {
		// Neither a legacy session's nor a 2026-07-28 request: its
		// _meta lacks the protocol version, which the revision answers
		// with -32602 (400) before any header is compared.
		return nil, nil, http.StatusBadRequest, &frame.Error{Code: mcpwire.CodeInvalidParams,
			Message: "Invalid params: missing or invalid _meta field \"" + mcpwire.MetaProtocolVersion + "\" (a request without a session must carry it)"}
	}
	if e := frame.CheckHeaders(r.Header, m, nil); e != nil {
		status := e.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		return nil, nil, status, e
	}
	if v, ok := metaVersion(m); ok && m.Kind == frame.Request && !mcpwire.IsModern(v) {
		// A revision the gateway does not speak: answered as a server
		// would (-32022, 400), before its _meta could become the shared
		// session's and fail the gateway's own listing for every client.
		return nil, nil, http.StatusBadRequest, &frame.Error{Code: mcpwire.CodeUnsupportedProtocolVersion,
			Message: "Unsupported protocol version: " + safetext.Quote(safetext.Clip(v, 64)) + " (supported without a session: " + strings.Join(mcpwire.ModernRevisions, ", ") + ")",
			Data:    unsupportedData(v)}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shared == nil || !g.shared.up.alive() {
		up, err := g.dial(r.Context())
		if err != nil {
			return nil, nil, http.StatusBadGateway, &frame.Error{Code: mcpwire.CodeInternalError, Message: "the upstream cannot be reached"}
		}
		g.shared = newSession(g, "", up, nil)
	}
	return g.shared, nil, 0, nil
}

func (hs *httpSession) sidFor() string { return hs.s.id }

// push queues a server message for the session's GET stream (dropped when
// the queue is full: a client that never listens cannot grow it).
func (hs *httpSession) push(b []byte) {
	n := int64(len(b))
	if hs.queued.Add(n) > hs.max {
		hs.queued.Add(-n)
		return
	}
	select {
	case hs.queue <- b:
	default:
		hs.queued.Add(-n)
	}
}

// unsupportedData is the data of a -32022 answer: the revisions the
// gateway speaks without a session, and the one requested (as the
// revision's error says).
func unsupportedData(requested string) []byte {
	b, _ := json.Marshal(map[string]any{"supported": mcpwire.ModernRevisions, "requested": requested})
	return b
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stream serves a legacy session's GET stream: the server's messages that
// arrive outside requests (list_changed after its list is gated).
func (g *Gateway) stream(w http.ResponseWriter, r *http.Request, opt HTTPOptions) {
	sid := r.Header.Get(mcpwire.HeaderSessionID)
	g.mu.Lock()
	s := g.sessions[sid]
	g.mu.Unlock()
	if sid == "" || s == nil {
		http.Error(w, unknownSession, http.StatusNotFound)
		return
	}
	defer s.guardHTTP("writing the downstream's GET stream")
	hs := s.http
	hs.mu.Lock()
	if hs.open {
		hs.mu.Unlock()
		http.Error(w, "a stream is already open for this session", http.StatusConflict)
		return
	}
	hs.open = true
	hs.mu.Unlock()
	defer func() { hs.mu.Lock(); hs.open = false; hs.mu.Unlock() }()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	// Every write within its deadline: a downstream that stops reading
	// loses its stream (the connection is closed), not the session.
	rc := http.NewResponseController(w)
	sse := frame.NewSSEWriter(w)
	flush := func() error {
		_ = rc.SetWriteDeadline(time.Now().Add(opt.StreamWriteTimeout))
		return sse.Flush()
	}
	sse.Comment("mcpdrift-proxy")
	if flush() != nil {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-hs.done:
			return
		case b := <-hs.queue:
			hs.queued.Add(-int64(len(b)))
			sse.Event(frame.Event{Data: g.out(b)})
		case <-keep.C:
			sse.Comment("keep-alive")
		}
		if flush() != nil {
			return
		}
	}
}

// unknownSession answers a GET or DELETE for a session this gateway does
// not hold (as route answers a POST).
const unknownSession = "Session not found: this gateway does not know the session (legacy sessions need session affinity to one replica); initialize again"

func (g *Gateway) endSession(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(mcpwire.HeaderSessionID)
	if sid == "" || !g.dropSession(sid) {
		http.Error(w, unknownSession, http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (g *Gateway) dropSession(sid string) bool {
	g.mu.Lock()
	s := g.sessions[sid]
	delete(g.sessions, sid)
	g.mu.Unlock()
	if s == nil {
		return false
	}
	s.close()
	if s.http != nil {
		s.http.ended()
	}
	return true
}

// reapIdle ends legacy sessions idle longer than SessionIdle.
func (g *Gateway) reapIdle() {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for range t.C {
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return
		}
		var idle []string
		now := g.cfg.Now()
		for id, s := range g.sessions {
			s.mu.Lock()
			if now.Sub(s.lastUsed) > g.cfg.SessionIdle {
				idle = append(idle, id)
			}
			s.mu.Unlock()
		}
		g.mu.Unlock()
		for _, id := range idle {
			g.dropSession(id)
		}
	}
}

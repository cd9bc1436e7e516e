package mockserver

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// ServeHTTP serves the MCP endpoint (Streamable HTTP, both eras), at
// whatever path the handler is mounted.
//
// Order of checks: RedirectTo (307); Origin (403); auth (401, or the
// anonymous list); HTTP method (405); Content-Type (415); Accept (406);
// body size (413); JSON and JSON-RPC shape (400, -32700/-32600); then the
// era's rules (see the package documentation of the validation table).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	entry := LogEntry{Time: time.Now(), Transport: "http", HTTPMethod: r.Method, Headers: interestingHeaders(r.Header)}
	defer func() { s.record(entry) }()
	entry.Conn = s.connNumber(r)

	if s.cfg.RedirectTo != "" {
		w.Header().Set("Location", s.cfg.RedirectTo)
		w.WriteHeader(http.StatusTemporaryRedirect)
		entry.Status = http.StatusTemporaryRedirect
		return
	}
	if o := r.Header.Values("Origin"); len(o) > 0 && !s.cfg.AllowAnyOrigin && (len(o) > 1 || !loopbackOrigin(o[0])) {
		s.writeJSONError(w, &entry, nil, frame.Errorf(http.StatusForbidden, mcpwire.CodeInvalidRequest, "Forbidden: Origin not allowed"))
		return
	}
	anonymous, ok := s.authorize(w, r, &entry)
	if !ok {
		return
	}
	entry.Anonymous = anonymous

	switch r.Method {
	case http.MethodPost:
		s.handlePost(w, r, &entry, anonymous)
	case http.MethodDelete:
		if len(s.legacyVersions) == 0 {
			s.methodNotAllowed(w, &entry)
			return
		}
		s.handleDelete(w, r, &entry)
	case http.MethodGet:
		if s.cfg.PollCalls && len(s.legacyVersions) > 0 && r.Header.Get("Last-Event-ID") != "" {
			s.handleResume(w, r, &entry)
			return
		}
		if !s.cfg.ListChanged || len(s.legacyVersions) == 0 {
			s.methodNotAllowed(w, &entry)
			return
		}
		s.handleGet(w, r, &entry)
	default:
		s.methodNotAllowed(w, &entry)
	}
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, entry *LogEntry) {
	allow := "POST"
	if len(s.legacyVersions) > 0 {
		allow = "POST, DELETE"
	}
	w.Header().Set("Allow", allow)
	s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusMethodNotAllowed, mcpwire.CodeInvalidRequest, "Method Not Allowed: this endpoint accepts %s", allow))
}

func loopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authorize checks the bearer token. It writes the 401 itself.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, entry *LogEntry) (anonymous, ok bool) {
	if s.cfg.RequireAuth == "" {
		return false, true
	}
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		if s.anon != nil {
			return true, true
		}
		s.unauthorized(w, r, entry, false)
		return false, false
	}
	if len(vals) == 1 {
		scheme, tok, found := strings.Cut(vals[0], " ")
		tok = strings.TrimLeft(tok, " ")
		if found && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.RequireAuth)) == 1 {
			return false, true
		}
	}
	s.unauthorized(w, r, entry, true)
	return false, false
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, entry *LogEntry, invalid bool) {
	if !s.cfg.NoChallenge {
		c := s.cfg.Challenge
		if c == "" {
			scheme := "http"
			if r.TLS != nil {
				scheme = "https"
			}
			prm := scheme + "://" + r.Host + "/.well-known/oauth-protected-resource" + r.URL.EscapedPath()
			if invalid {
				c = `Bearer error="invalid_token", resource_metadata="` + prm + `"`
			} else {
				c = `Bearer resource_metadata="` + prm + `"`
			}
		}
		w.Header().Set("WWW-Authenticate", c)
	}
	s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusUnauthorized, codeBadRequest, "Unauthorized"))
}

func acceptsBoth(vals []string) bool {
	var j, e bool
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			switch mt {
			case "application/json":
				j = true
			case "text/event-stream":
				e = true
			}
		}
	}
	return j && e
}

func (s *Server) handlePost(w http.ResponseWriter, r *http.Request, entry *LogEntry, anonymous bool) {
	cts := r.Header.Values("Content-Type")
	if len(cts) != 1 {
		s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusUnsupportedMediaType, mcpwire.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json"))
		return
	}
	if mt, _, err := mime.ParseMediaType(cts[0]); err != nil || mt != "application/json" {
		s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusUnsupportedMediaType, mcpwire.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json"))
		return
	}
	if !acceptsBoth(r.Header.Values("Accept")) {
		s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusNotAcceptable, mcpwire.CodeInvalidRequest, "Not Acceptable: Accept must list both application/json and text/event-stream"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusRequestEntityTooLarge, mcpwire.CodeInvalidRequest, "Request body larger than %d bytes", s.cfg.MaxBodyBytes))
		} else {
			s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "cannot read the request body"))
		}
		return
	}
	m, perr := frame.FromClient(body)
	if m != nil {
		entry.Method = m.Method
		entry.ID = string(m.IDRaw())
	}
	if perr != nil {
		var id []byte
		if m != nil {
			id = m.IDRaw()
		}
		s.writeJSONError(w, entry, id, perr)
		return
	}
	if s.routeModern(r, m) {
		s.handleModern(w, r, entry, m, anonymous)
		return
	}
	s.handleLegacy(w, r, entry, m, anonymous)
}

// routeModern decides the era of a POST (see DualEra).
func (s *Server) routeModern(r *http.Request, m *message) bool {
	if len(s.modernVersions) == 0 {
		return false
	}
	if len(s.legacyVersions) == 0 || modernIntent(m) {
		return true
	}
	if m.Method == "initialize" || len(r.Header.Values(mcpwire.HeaderSessionID)) > 0 {
		return false
	}
	if len(r.Header.Values(mcpwire.HeaderMethod)) > 0 {
		return true
	}
	for _, v := range r.Header.Values(mcpwire.HeaderProtocolVersion) {
		if isModernRev(strings.TrimSpace(v)) {
			return true
		}
	}
	return false
}

func (s *Server) handleModern(w http.ResponseWriter, r *http.Request, entry *LogEntry, m *message, anonymous bool) {
	entry.Era = "modern"
	if m.Method == "initialize" && len(s.legacyVersions) == 0 && !modernIntent(m) {
		// A modern-only server names its versions in the error it returns
		// to initialize (§5.4).
		e := frame.Errorf(http.StatusNotFound, mcpwire.CodeMethodNotFound, "Method not found: initialize (this server speaks only stateless revisions)")
		e.Data = s.unsupportedVersion(initializeVersion(m)).Data
		s.writeJSONError(w, entry, m.IDRaw(), e)
		return
	}
	if m.Kind == frame.Notification {
		if e := s.checkModernNotification(r.Header, m, entry); e != nil {
			s.writeJSONError(w, entry, nil, e)
			return
		}
		entry.Passed = true
		w.WriteHeader(http.StatusAccepted)
		entry.Status = http.StatusAccepted
		return
	}
	x := &exchange{modern: true, conn: entry.Conn, anonymous: anonymous, header: r.Header, entry: entry}
	if e := s.checkModernRequest(r.Header, m, x); e != nil {
		s.reply(w, r, entry, x, m, nil, e)
		return
	}
	x.tools = s.toolsFor(x.conn, anonymous, x.caps)
	entry.Passed = true
	if m.Method == "subscriptions/listen" && s.cfg.ListChanged {
		s.listen(w, r, entry, m)
		return
	}
	res, e := s.dispatch(x, m)
	s.reply(w, r, entry, x, m, res, e)
}

// checkModernNotification: a notification POST needs a supported
// MCP-Protocol-Version header (equal to _meta's when present) and, when
// sent, an Mcp-Method equal to the method (frame.CheckHeaders).
func (s *Server) checkModernNotification(h http.Header, m *message, entry *LogEntry) *frame.Error {
	e := frame.CheckHeaders(h, m, s.checkModernVersion)
	if vs := h.Values(mcpwire.HeaderProtocolVersion); len(vs) == 1 {
		entry.ProtocolVersion = strings.Trim(vs[0], " \t")
	}
	return e
}

func (s *Server) handleLegacy(w http.ResponseWriter, r *http.Request, entry *LogEntry, m *message, anonymous bool) {
	entry.Era = "legacy"
	if m.Method == "initialize" {
		if len(r.Header.Values(mcpwire.HeaderSessionID)) > 0 {
			s.writeJSONError(w, entry, m.IDRaw(), frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Bad Request: initialize must not carry Mcp-Session-Id"))
			return
		}
		version, e := s.checkInitialize(m, entry)
		if e != nil {
			s.writeJSONError(w, entry, m.IDRaw(), e)
			return
		}
		ss := s.newSession(version, initializeCaps(m, entry))
		entry.Session, entry.Conn, entry.ProtocolVersion, entry.Passed = ss.id, ss.conn, version, true
		w.Header().Set(mcpwire.HeaderSessionID, ss.id)
		x := &exchange{version: version, conn: ss.conn, anonymous: anonymous, entry: entry}
		s.reply(w, r, entry, x, m, s.initializeResult(version), nil)
		return
	}
	ss, e := s.legacySession(r, entry)
	if e != nil {
		s.writeJSONError(w, entry, m.IDRaw(), e)
		return
	}
	if m.Kind.IsResponse() {
		if s.cfg.ServerRequest == "" {
			s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Bad Request: this server sent no request to respond to"))
			return
		}
		entry.Reason, entry.Passed = answerReason(m), true
		w.WriteHeader(http.StatusAccepted)
		entry.Status = http.StatusAccepted
		return
	}
	if m.Kind == frame.Notification {
		if m.Method == "notifications/initialized" {
			s.markInitialized(ss.id)
		}
		entry.Passed = true
		w.WriteHeader(http.StatusAccepted)
		entry.Status = http.StatusAccepted
		return
	}
	if !ss.initialized && m.Method != "ping" {
		s.writeJSONError(w, entry, m.IDRaw(), frame.Errorf(http.StatusBadRequest, codeBadRequest, "Bad Request: notifications/initialized has not been received"))
		return
	}
	x := &exchange{version: ss.version, conn: ss.conn, anonymous: anonymous, tools: s.toolsFor(ss.conn, anonymous, ss.caps), entry: entry, caps: ss.caps}
	entry.Passed = true
	res, err := s.dispatch(x, m)
	s.reply(w, r, entry, x, m, res, err)
}

// legacySession finds the session of a post-initialize request and checks
// its MCP-Protocol-Version header.
func (s *Server) legacySession(r *http.Request, entry *LogEntry) (session, *frame.Error) {
	sids := r.Header.Values(mcpwire.HeaderSessionID)
	switch len(sids) {
	case 0:
		return session{}, frame.Errorf(http.StatusBadRequest, codeBadRequest, "Bad Request: Server not initialized")
	case 1:
	default:
		return session{}, frame.Errorf(http.StatusBadRequest, codeBadRequest, "Bad Request: Mcp-Session-Id repeated")
	}
	entry.Session = sids[0]
	ss, ok := s.session(strings.TrimSpace(sids[0]))
	if !ok {
		return session{}, frame.Errorf(http.StatusNotFound, codeSessionNotFound, "Session not found")
	}
	entry.Conn, entry.ProtocolVersion = ss.conn, ss.version
	vs := r.Header.Values(mcpwire.HeaderProtocolVersion)
	switch {
	case len(vs) > 1:
		return session{}, frame.Errorf(http.StatusBadRequest, codeBadRequest, "Bad Request: MCP-Protocol-Version repeated")
	case len(vs) == 0:
		if ss.version >= mcpwire.Rev20250618 {
			return session{}, frame.Errorf(http.StatusBadRequest, codeBadRequest, "Bad Request: missing MCP-Protocol-Version header (negotiated %s)", ss.version)
		}
	case strings.TrimSpace(vs[0]) != ss.version:
		return session{}, frame.Errorf(http.StatusBadRequest, codeBadRequest, "Bad Request: MCP-Protocol-Version %q does not match the negotiated version %s", safetext.Clip(vs[0], 64), ss.version)
	}
	return ss, nil
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, entry *LogEntry) {
	entry.Era = "legacy"
	ss, e := s.legacySession(r, entry)
	if e != nil {
		s.writeJSONError(w, entry, nil, e)
		return
	}
	s.endSession(ss.id)
	entry.Passed = true
	w.WriteHeader(http.StatusOK)
	entry.Status = http.StatusOK
}

// Writing.

func (s *Server) writeJSONError(w http.ResponseWriter, entry *LogEntry, id []byte, e *frame.Error) {
	status := httpStatus(e, entry.Era == "modern")
	entry.Status, entry.Code, entry.Reason = status, e.Code, e.Message
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(frame.AppendError(nil, id, e))
}

// reply writes the answer to a request: an error or a result, as JSON or
// SSE, with Slow and the hostile knobs applied.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, entry *LogEntry, x *exchange, m *message, result []byte, e *frame.Error) {
	s.sleep(r.Context(), s.cfg.Slow)
	var body []byte
	status := http.StatusOK
	if e != nil {
		status = httpStatus(e, x.modern)
		entry.Code, entry.Reason = e.Code, e.Message
		body = frame.AppendError(nil, m.IDRaw(), e)
	} else {
		if s.hostile[m.Method] {
			if s.cfg.NeverEndingSSE {
				s.neverEnding(w, r, entry, x)
				return
			}
			if s.cfg.Oversized != 0 {
				s.oversized(w, r, entry, x, m)
				return
			}
		}
		if hb, ok := s.hostileBody(m.IDRaw(), m.Method); ok {
			body = hb
		} else {
			body = responseBytes(s.respID(m.IDRaw(), m.Method), result)
		}
	}
	entry.Status = status
	if e == nil && s.hostile[m.Method] && (s.cfg.StreamEndsEarly || s.cfg.PollCalls && !x.modern) {
		s.endEarly(w, entry, x, m, body)
		return
	}
	if status != http.StatusOK || s.cfg.Response != SSEResponses {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	sw := s.startSSE(w, x)
	for _, n := range s.notificationsFor(x, m) {
		sw.event(n)
	}
	if e == nil && s.wantsServerRequest(m) {
		sw.event(s.serverRequestBytes())
		sw.flush()
	}
	sw.event(body)
	sw.flush()
}

// sseWriter writes an event stream (frame.SSEWriter); legacy streams
// negotiated at 2025-11-25 or later get event ids and a priming event.
type sseWriter struct {
	*frame.SSEWriter
	stream string
	seq    int
	ids    bool
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	return &sseWriter{SSEWriter: frame.NewSSEWriter(w)}
}

func (s *Server) startSSE(w http.ResponseWriter, x *exchange) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := newSSEWriter(w)
	if !x.modern && x.version >= mcpwire.Rev20251125 {
		sw.withIDs()
		// The priming event (SEP-1699): an id and empty data.
		sw.Event(frame.Event{ID: sw.nextID()})
		sw.flush()
	}
	return sw
}

// withIDs gives the stream's events ids: a random stream name and a
// sequence number.
func (sw *sseWriter) withIDs() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	sw.ids, sw.stream = true, hex.EncodeToString(b[:])
}

func (sw *sseWriter) nextID() string {
	id := sw.stream + "-" + strconv.Itoa(sw.seq)
	sw.seq++
	return id
}

// event buffers one "message" event, compacted to one data: line (see
// frame.SSEWriter.Event): tool bytes from a pretty-printed manifest lose
// the whitespace between their tokens, line breaks included, and nothing
// else, so every tool's canonical form, and so its digest, is the one of
// the bytes loaded. The official conformance suite reads one data: line
// per event (a body that is not JSON — a hostile knob's — is still split
// into several).
func (sw *sseWriter) event(data []byte) {
	ev := frame.Event{Type: "message", Data: data}
	if sw.ids {
		ev.ID = sw.nextID()
	}
	sw.Event(ev)
}

// flush writes what is buffered; false when the client has gone.
func (sw *sseWriter) flush() bool { return sw.Flush() == nil }

// notificationsFor: the events sent before a response on an SSE stream.
func (s *Server) notificationsFor(x *exchange, m *message) [][]byte {
	if m.Method == "initialize" {
		return nil
	}
	var out [][]byte
	token := progressToken(m)
	if token == nil && x.modern && s.cfg.SSEProgress {
		token = []byte(`"mock-progress"`)
	}
	if !x.modern {
		p := []byte(`{"level":"info","logger":"mockserver","data":`)
		p = appendJSONString(p, "handling "+m.Method)
		out = append(out, frame.AppendNotification(nil, "notifications/message", append(p, '}')))
	}
	if token != nil {
		p := []byte(`{"progressToken":`)
		p = append(p, token...)
		p = append(p, `,"progress":1,"total":2,"message":"mock progress"}`...)
		out = append(out, frame.AppendNotification(nil, "notifications/progress", p))
	}
	return out
}

func progressToken(m *message) []byte {
	meta, ok := m.Meta()
	if !ok {
		return nil
	}
	t, ok := meta.Get("progressToken")
	if !ok || (t.Kind() != jcs.String && t.Kind() != jcs.Number) {
		return nil
	}
	return t.Raw()
}

// neverEnding streams keep-alive comments until the client or the server
// goes away, and never the response.
func (s *Server) neverEnding(w http.ResponseWriter, r *http.Request, entry *LogEntry, x *exchange) {
	entry.Status = http.StatusOK
	entry.Reason = "never-ending SSE"
	sw := s.startSSE(w, x)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		sw.Comment("keep-alive")
		if !sw.flush() {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-tick.C:
		}
	}
}

// oversized streams a tools/list-shaped result of repeated tool objects:
// up to Oversized bytes and then a proper end, or forever when negative.
func (s *Server) oversized(w http.ResponseWriter, r *http.Request, entry *LogEntry, x *exchange, m *message) {
	entry.Status = http.StatusOK
	entry.Reason = "oversized"
	sse := s.cfg.Response == SSEResponses
	var sw *sseWriter
	if sse {
		sw = s.startSSE(w, x)
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
	}
	write := func(b []byte) bool {
		if sw != nil {
			sw.Raw(b)
			return sw.flush()
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		_ = http.NewResponseController(w).Flush()
		return true
	}
	head, chunk, tail := s.oversizedParts(x, m)
	if sse {
		head = append([]byte("event: message\ndata: "), head...)
		tail = append(tail, "\n\n"...)
	}
	if !write(head) {
		return
	}
	written := int64(len(head))
	for s.cfg.Oversized < 0 || written < s.cfg.Oversized {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		default:
		}
		if !write(chunk) {
			return
		}
		written += int64(len(chunk))
	}
	write(tail)
}

func (s *Server) oversizedParts(x *exchange, m *message) (head, chunk, tail []byte) {
	head = []byte(`{"jsonrpc":"2.0","id":`)
	head = append(head, s.respID(m.IDRaw(), m.Method)...)
	head = append(head, `,"result":{`...)
	if x.modern {
		head = append(head, `"resultType":"complete",`...)
	}
	head = append(head, `"tools":[`...)
	for len(chunk) < 32<<10 {
		chunk = append(chunk, oversizedChunk...)
	}
	tail = []byte(`{"name":"pad-end","inputSchema":{"type":"object"}}]`)
	if x.modern {
		full := s.modernResult(nil, true) // {"resultType":"complete",...,"_meta":{...}}
		tail = append(tail, full[len(`{"resultType":"complete"`):len(full)-1]...)
	}
	tail = append(tail, "}}"...)
	return head, chunk, tail
}

// handleGet serves a legacy session's server→client stream
// (Config.ListChanged): notifications/tools/list_changed whenever the
// tools are swapped, until the client goes away or the server closes.
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, entry *LogEntry) {
	entry.Era = "legacy"
	if _, e := s.legacySession(r, entry); e != nil {
		s.writeJSONError(w, entry, nil, e)
		return
	}
	id, ch := s.subscribe()
	defer s.unsubscribe(id)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	entry.Status = http.StatusOK
	sw := frame.NewSSEWriter(w)
	sw.Comment("mock stream")
	if sw.Flush() != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case b := <-ch:
			sw.Event(frame.Event{Data: b})
			if sw.Flush() != nil {
				return
			}
		}
	}
}

package mockserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// sseSession is one HTTP+SSE stream and the state of its legacy session.
type sseSession struct {
	id   string
	conn int // the session number (as for Streamable HTTP sessions)
	jobs chan sseJob
	done chan struct{} // closed when the stream has ended

	mu          sync.Mutex
	initialized bool // initialize answered
	ready       bool // notifications/initialized received
	version     string
	caps        []string
}

// sseJob writes to the stream of a session; false stops the stream.
type sseJob func(ctx context.Context, sw *sseWriter) bool

// LegacySSEHandler serves the deprecated HTTP+SSE transport of 2024-11-05
// at whatever path it is mounted (mcpdrift mock-server: /sse):
//
//   - GET (Accept: text/event-stream) opens a stream whose first event,
//     "endpoint", is the handler's path with ?sessionId=ID (SSEEndpoint
//     replaces it); every message of the session is then a "message" event
//     on it, one compacted data: line each;
//   - POST ?sessionId=ID carries one JSON-RPC message (Content-Type
//     application/json) and is answered 202 Accepted; the response goes
//     to the stream.
//
// The session follows the legacy rules of ServeStdio (initialize, then
// notifications/initialized, then tools/list; ping always; -32601 for
// unknown methods), at the server's legacy versions (2024-11-05 when
// SupportedVersions names it). Origin, RedirectTo and RequireAuth are
// checked on both methods as on the MCP endpoint; an unknown session is
// 404. A modern-only server has no HTTP+SSE transport (405).
func (s *Server) LegacySSEHandler() http.Handler { return http.HandlerFunc(s.serveLegacySSE) }

// SSEStreams reports HTTP+SSE streams: opened so far, and open now.
func (s *Server) SSEStreams() (opened, open int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sseTotal, s.sseOpen
}

func (s *Server) serveLegacySSE(w http.ResponseWriter, r *http.Request) {
	entry := LogEntry{Time: time.Now(), Transport: "sse", HTTPMethod: r.Method, Headers: interestingHeaders(r.Header), Era: "legacy"}
	defer func() { s.record(entry) }()
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
	if len(s.legacyVersions) == 0 {
		s.writeJSONError(w, &entry, nil, frame.Errorf(http.StatusMethodNotAllowed, mcpwire.CodeInvalidRequest, "Method Not Allowed: this server speaks only stateless revisions, which have no HTTP+SSE transport"))
		return
	}
	switch r.Method {
	case http.MethodGet:
		s.sseStream(w, r, &entry, anonymous)
	case http.MethodPost:
		s.ssePost(w, r, &entry, anonymous)
	default:
		w.Header().Set("Allow", "GET, POST")
		s.writeJSONError(w, &entry, nil, frame.Errorf(http.StatusMethodNotAllowed, mcpwire.CodeInvalidRequest, "Method Not Allowed: this endpoint accepts GET, POST"))
	}
}

func acceptsEventStream(vals []string) bool {
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && (mt == "text/event-stream" || mt == "*/*" || mt == "text/*") {
				return true
			}
		}
	}
	return false
}

// sseStream serves the GET: the stream of a new session, until the client
// goes away or the server is closed.
func (s *Server) sseStream(w http.ResponseWriter, r *http.Request, entry *LogEntry, anonymous bool) {
	if !acceptsEventStream(r.Header.Values("Accept")) {
		s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusNotAcceptable, mcpwire.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream"))
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	ss := &sseSession{id: "sse-" + hex.EncodeToString(b[:]), conn: int(s.sessionSeq.Add(1)), jobs: make(chan sseJob, 64), done: make(chan struct{})}
	s.mu.Lock()
	for len(s.sse) >= s.cfg.MaxSessions {
		for id := range s.sse {
			delete(s.sse, id)
			break
		}
	}
	s.sse[ss.id] = ss
	s.sseOpen++
	s.sseTotal++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sse, ss.id)
		s.sseOpen--
		s.mu.Unlock()
		close(ss.done)
	}()
	entry.Session, entry.Conn, entry.Status, entry.Passed = ss.id, ss.conn, http.StatusOK, true
	// Recorded now: the stream's entry would otherwise appear only when
	// the stream ends.
	s.record(*entry)
	*entry = LogEntry{Time: time.Now(), Transport: "sse", HTTPMethod: r.Method, Era: "legacy", Session: ss.id, Conn: ss.conn, Reason: "stream closed"}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := newSSEWriter(w)
	ctx := r.Context()
	switch {
	case s.cfg.SSEOmitEndpoint && s.cfg.SSEFlood:
		s.flood(ctx, sw)
		return
	case s.cfg.SSEOmitEndpoint:
		sw.Comment("no endpoint event")
	default:
		ep := r.URL.EscapedPath() + "?sessionId=" + ss.id
		if s.cfg.SSEEndpoint != "" {
			ep = strings.ReplaceAll(s.cfg.SSEEndpoint, "{session}", ss.id)
		}
		// Raw, not an Event: SSEEndpoint is a hostile knob, and its value
		// goes out as it is (an Event would compact or split it).
		sw.Raw([]byte("event: endpoint\ndata: " + ep + "\n\n"))
	}
	if !sw.flush() {
		return
	}
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			entry.Reason = "stream closed by the client"
			return
		case <-s.done:
			entry.Reason = "stream closed: server closed"
			return
		case <-keepAlive.C:
			sw.Comment("keep-alive")
			if !sw.flush() {
				return
			}
		case job := <-ss.jobs:
			if !job(ctx, sw) {
				return
			}
		}
	}
}

// flood writes notifications until the client or the server goes away.
func (s *Server) flood(ctx context.Context, sw *sseWriter) bool {
	ev := frame.AppendNotification(nil, "notifications/message", []byte(`{"level":"info","logger":"mockserver","data":"flood"}`))
	for {
		for range 64 {
			sw.event(ev)
		}
		if !sw.flush() {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		default:
		}
	}
}

// send queues events for the session's stream; false when the stream has
// ended.
func (ss *sseSession) send(events ...[]byte) bool {
	return ss.queue(func(_ context.Context, sw *sseWriter) bool {
		for _, e := range events {
			sw.event(e)
		}
		return sw.flush()
	})
}

func (ss *sseSession) queue(job sseJob) bool {
	select {
	case ss.jobs <- job:
		return true
	case <-ss.done:
		return false
	}
}

// ssePost serves a POST ?sessionId=ID.
func (s *Server) ssePost(w http.ResponseWriter, r *http.Request, entry *LogEntry, anonymous bool) {
	id := r.URL.Query().Get("sessionId")
	entry.Session = id
	if !r.URL.Query().Has("sessionId") {
		// Not the endpoint of a session: a Streamable HTTP client POSTing
		// here learns that it must GET (2024-11-05 backwards compatibility).
		w.Header().Set("Allow", "GET")
		s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusMethodNotAllowed, mcpwire.CodeInvalidRequest, "Method Not Allowed: GET opens the HTTP+SSE stream; POST to the endpoint it names"))
		return
	}
	s.mu.Lock()
	ss := s.sse[id]
	s.mu.Unlock()
	if ss == nil {
		s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusNotFound, codeSessionNotFound, "Session not found"))
		return
	}
	entry.Conn = ss.conn
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" || len(r.Header.Values("Content-Type")) != 1 {
		s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusUnsupportedMediaType, mcpwire.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json"))
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
		entry.Method, entry.ID = m.Method, string(m.IDRaw())
	}
	if perr != nil {
		s.writeJSONError(w, entry, nil, perr)
		return
	}
	accepted := func() {
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "Accepted")
		entry.Status = http.StatusAccepted
	}
	if m.Kind.IsResponse() {
		entry.Reason = "ignored: a response (this server sends no requests)"
		if s.cfg.ServerRequest != "" {
			entry.Reason, entry.Passed = answerReason(m), true
		}
		accepted()
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	entry.ProtocolVersion = ss.version
	if m.Kind == frame.Notification {
		if m.Method == "notifications/initialized" && ss.initialized {
			ss.ready = true
			entry.Passed = true
		}
		accepted()
		return
	}
	x := &exchange{version: ss.version, conn: ss.conn, anonymous: anonymous, entry: entry, caps: ss.caps}
	var res []byte
	var e *frame.Error
	switch {
	case m.Method == "initialize" && ss.initialized:
		e = frame.Errorf(0, mcpwire.CodeInvalidRequest, "Invalid Request: already initialized")
	case m.Method == "initialize":
		version, ierr := s.checkInitialize(m, entry)
		if ierr != nil {
			e = ierr
			break
		}
		ss.initialized, ss.version, ss.caps = true, version, initializeCaps(m, entry)
		x.version, entry.ProtocolVersion, entry.Passed = version, version, true
		res = s.initializeResult(version)
	case m.Method == "ping":
		entry.Passed, res = true, []byte(`{}`)
	case m.Method != "tools/list" && m.Method != "tools/call" && !surfaceMethods[m.Method]:
		e = frame.Errorf(0, mcpwire.CodeMethodNotFound, "Method not found: %s", m.Method)
	case !ss.ready:
		e = frame.Errorf(0, codeBadRequest, "Server not initialized")
	default:
		x.tools = s.toolsFor(x.conn, anonymous, ss.caps)
		entry.Passed = true
		res, e = s.dispatch(x, m)
	}
	if e != nil {
		entry.Code, entry.Reason = e.Code, e.Message
	}
	s.sleep(r.Context(), s.cfg.Slow)
	if !s.sseAnswer(ss, x, m, res, e) {
		s.writeJSONError(w, entry, m.IDRaw(), frame.Errorf(http.StatusGone, codeBadRequest, "the session's stream has ended"))
		return
	}
	accepted()
}

// sseAnswer queues the answer to m on the stream, with the hostile knobs.
func (s *Server) sseAnswer(ss *sseSession, x *exchange, m *message, result []byte, e *frame.Error) bool {
	if e != nil {
		return ss.send(frame.AppendError(nil, m.IDRaw(), e))
	}
	var pre [][]byte
	if s.wantsServerRequest(m) {
		pre = append(pre, s.serverRequestBytes())
	}
	if s.hostile[m.Method] {
		switch {
		case s.cfg.SSEFlood:
			x.entry.Reason = "flood"
			return ss.queue(func(ctx context.Context, sw *sseWriter) bool {
				for _, p := range pre {
					sw.event(p)
				}
				return s.flood(ctx, sw)
			})
		case s.cfg.NeverEndingSSE:
			x.entry.Reason = "never answered (NeverEndingSSE)"
			return pre == nil || ss.send(pre...)
		case s.cfg.Oversized > 0:
			x.entry.Reason = "oversized"
			head, chunk, tail := s.oversizedParts(x, m)
			return ss.queue(func(ctx context.Context, sw *sseWriter) bool {
				for _, p := range pre {
					sw.event(p)
				}
				sw.Raw([]byte("event: message\ndata: "))
				sw.Raw(head)
				written := int64(len(head))
				for written < s.cfg.Oversized {
					if ctx.Err() != nil {
						return false
					}
					sw.Raw(chunk)
					written += int64(len(chunk))
					if !sw.flush() {
						return false
					}
				}
				sw.Raw(tail)
				sw.Raw([]byte("\n\n"))
				return sw.flush()
			})
		}
	}
	body, ok := s.hostileBody(m.IDRaw(), m.Method)
	if !ok {
		body = responseBytes(s.respID(m.IDRaw(), m.Method), result)
	}
	return ss.send(append(pre, body)...)
}

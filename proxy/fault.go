package proxy

import (
	"fmt"
	"net/http"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Faults. Work the gateway does on behalf of a session — answering its
// requests, reading its upstream, writing to its downstream, re-observing
// after a list_changed — runs on goroutines of the gateway's: a panic
// there (a downstream writer that panics, a response written after its
// handler returned, a bug an upstream's bytes reach) would end the whole
// process, and every other session with it. Each such goroutine recovers
// (guard), and the fault ends that session only, failing closed: its
// upstream link is closed, it is taken out of the gateway (a legacy
// session's later requests get 404, stateless traffic gets a new shared
// session, which lists and gates again), requests still being answered
// on it are answered with session_failed, a stdio downstream's ServeStdio
// returns an error, and the decision log says where it happened. net/http
// recovers a handler's panic itself, but would leave the session open;
// the handlers recover first, end the session the same way, and abort the
// response (http.ErrAbortHandler), since what was written of it is not a
// whole answer.

// reasonSessionFailed is the reason of the error that answers a request
// of a session a fault ended.
const reasonSessionFailed = "session_failed"

// guard, deferred at the top of a goroutine working for s, recovers a
// panic and ends s (fault). It must be the deferred function itself (a
// recover only stops a panic there).
func (s *session) guard(where string) {
	if v := recover(); v != nil {
		s.fault(where, v)
	}
}

// guardHTTP is guard for a downstream HTTP handler: after ending s it
// aborts the response, which net/http recovers quietly.
func (s *session) guardHTTP(where string) {
	v := recover()
	if v == nil {
		return
	}
	if v != http.ErrAbortHandler {
		s.fault(where, v)
	}
	panic(http.ErrAbortHandler)
}

// fault ends s after a panic in work done on its behalf: once; the
// upstream link is closed on a goroutine of its own (the fault may be on
// the link's reader, which closing waits for).
func (s *session) fault(where string, v any) {
	s.mu.Lock()
	if s.failed != "" {
		s.mu.Unlock()
		return
	}
	s.failed = where
	s.mu.Unlock()
	close(s.dead)
	s.g.forget(s)
	if s.g.cfg.Log != nil {
		s.g.cfg.Log.write(s.g.cfg.Secrets, Record{Time: s.g.cfg.Now(), ServerID: s.g.cfg.ServerID, Session: s.id, Mode: string(s.g.cfg.Mode),
			Event: reasonSessionFailed, Reasons: []string{reasonSessionFailed},
			Note: "the session was ended after a panic while " + where + ": " + safetext.Quote(safetext.Clip(fmt.Sprint(v), 512))})
	}
	go func() {
		defer func() { _ = recover() }() // closing a link that faulted must not fault the process
		s.close()
		if s.http != nil {
			s.http.ended()
		}
	}()
}

// failedReason is where the fault that ended s happened ("" while it
// has none).
func (s *session) failedReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// failedReply answers m on a session a fault ended: a request gets
// -32603 session_failed, a notification or a response nothing.
func (s *session) failedReply(m *frame.Message, where string) reply {
	if m.Kind != frame.Request {
		return reply{}
	}
	s.g.cfg.Metrics.request(m.Method, reasonSessionFailed)
	return ownError(m, mcpwire.CodeInternalError, "the session was ended after a fault in the gateway (while "+where+"): start a new session", reasonSessionFailed, nil)
}

// succeeded reports whether a reply is a result (or nothing to send).
func succeeded(rep reply) bool {
	if rep.err != nil {
		return false
	}
	if rep.body == nil {
		return true
	}
	m, err := frame.Parse(rep.body)
	return err == nil && m.Kind == frame.Response
}

// forget takes s out of the gateway: a legacy session is no longer found
// by its id, and the shared stateless session is replaced at the next
// request.
func (g *Gateway) forget(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.id != "" && g.sessions[s.id] == s {
		delete(g.sessions, s.id)
	}
	if g.shared == s {
		g.shared = nil
	}
}

// late delivers a server message that arrives for a request whose
// downstream stream has ended (its handler returned): on the session's
// own stream — a stdio downstream, a legacy session's GET stream — or,
// when it has none (stateless traffic), nowhere: it is dropped and the
// decision log says so. Never to the finished response.
func (s *session) late(b []byte) {
	if s.emit != nil {
		s.emit(b)
		return
	}
	if s.g.cfg.Log == nil {
		return
	}
	method := ""
	if m, err := frame.Parse(b); err == nil {
		method = safetext.Escape(safetext.Clip(m.Method, 128))
	}
	s.g.cfg.Log.write(s.g.cfg.Secrets, Record{Time: s.g.cfg.Now(), ServerID: s.g.cfg.ServerID, Session: s.id, Mode: string(s.g.cfg.Mode),
		Event: "dropped", Method: method,
		Note: "a server message arrived after the downstream's request was answered, and the session has no stream of its own to carry it"})
}

package mockserver

import (
	"net/http"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// maxPolled bounds the responses PollCalls keeps for a resumption.
const maxPolled = 64

// polledResponse is a response kept for the GET that resumes its stream.
type polledResponse struct {
	session string
	next    string // the id of the event that carries it
	body    []byte
}

// endEarly answers on an event stream that ends before the response
// (Config.StreamEndsEarly), or, with PollCalls in a legacy session, that
// ends after an event with an id and a retry, the response kept for the
// GET that resumes from that id (SEP-1699 polling).
func (s *Server) endEarly(w http.ResponseWriter, entry *LogEntry, x *exchange, m *message, body []byte) {
	poll := s.cfg.PollCalls && !x.modern
	sw := s.startSSE(w, x)
	if poll && !sw.ids {
		sw.withIDs() // resumption exists from 2025-03-26 on; the priming event from 2025-11-25
	}
	for _, n := range s.notificationsFor(x, m) {
		sw.event(n)
	}
	entry.Reason = "the stream ended before the response"
	if poll {
		retry := s.cfg.PollRetry
		if retry <= 0 {
			retry = 50 * time.Millisecond
		}
		id := sw.nextID()
		s.keepPolled(id, polledResponse{session: entry.Session, next: sw.nextID(), body: body})
		sw.Event(frame.Event{ID: id, Retry: retry})
		entry.Reason = "the stream closed for polling (SEP-1699); the response waits for a GET with Last-Event-ID"
	}
	sw.flush()
}

func (s *Server) keepPolled(id string, p polledResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.polled == nil {
		s.polled = map[string]polledResponse{}
	}
	if len(s.polledOrder) >= maxPolled {
		delete(s.polled, s.polledOrder[0])
		s.polledOrder = s.polledOrder[1:]
	}
	s.polled[id] = p
	s.polledOrder = append(s.polledOrder, id)
}

// handleResume serves the GET that resumes a polled stream: the response
// kept for its Last-Event-ID, as the one event of the stream, which then
// ends. An id it does not know is 400.
func (s *Server) handleResume(w http.ResponseWriter, r *http.Request, entry *LogEntry) {
	entry.Era = "legacy"
	if _, e := s.legacySession(r, entry); e != nil {
		s.writeJSONError(w, entry, nil, e)
		return
	}
	id := r.Header.Get("Last-Event-ID")
	s.mu.Lock()
	p, ok := s.polled[id]
	if ok && p.session == entry.Session {
		delete(s.polled, id)
	}
	s.mu.Unlock()
	if !ok || p.session != entry.Session {
		s.writeJSONError(w, entry, nil, frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Bad Request: no stream to resume from this Last-Event-ID"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	entry.Status, entry.Passed, entry.Reason = http.StatusOK, true, "resumed a polled stream"
	sw := frame.NewSSEWriter(w)
	sw.Event(frame.Event{Type: "message", ID: p.next, Data: p.body})
	_ = sw.Flush()
}

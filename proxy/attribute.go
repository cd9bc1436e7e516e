package proxy

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Answers a stdio link cannot attribute. The link gives each request an
// id of its own and waits for the line that answers it. Two kinds of line
// cannot be handed to their request: one longer than the gateway accepts
// (frame.LineReader skips it without holding it), and a response whose id
// is no request's in flight. Left alone, the request that line answered
// would wait out its deadline and then fail without saying why. So:
//
//   - An oversized line's id is read from its ends (a server writes the
//     id first, as the Go SDKs do, or last, as the TypeScript SDK does;
//     the link's ids are short integers). Its request is answered at once
//     with an error saying its answer was too large. A line whose start
//     names a method is the server's request or notification: nothing
//     waits for it, and it is dropped.
//   - An answer whose id is a request's the link gave up on (its deadline
//     passed, or it was failed as below) is late, and dropped.
//   - Any other answer — an oversized one whose id cannot be read, one
//     with an id the link never sent or already answered, an error with a
//     null id — answers one of the requests in flight, but which cannot be
//     known, and handing it to any of them could give one caller another's
//     result. Every request then in flight on the link is failed at once
//     with an error saying why (upstream_unattributable): the one it
//     answered hears promptly, and the others, which a server that
//     mislabels one answer may mislabel too, fail closed rather than risk
//     a wrong answer; their callers may retry. Their late answers are
//     dropped (abandoned), so one bad line fails one round of requests,
//     not every later one.

// reasonUnattributable is the reason of the error that answers the
// requests in flight when the link got an answer it cannot attribute.
const reasonUnattributable = "upstream_unattributable"

// lineEnds is how much of each end of an oversized line is read for its
// id.
const lineEnds = 512

// maxAbandoned bounds the ids of requests given up on that the link
// remembers.
const maxAbandoned = 4096

// waiter is a request in flight on a stdio link: its answer, or, closed
// without one, why it failed (nil: the link is gone).
type waiter struct {
	ch  chan *frame.Message
	why *upstreamError
}

// answered hands a response to its request.
func (s *stdioUpstream) answered(m *frame.Message) {
	id, ok := m.IDInt()
	s.mu.Lock()
	if w := s.pending[id]; ok && w != nil {
		delete(s.pending, id)
		s.mu.Unlock()
		w.ch <- m
		return
	}
	late := ok && s.abandoned[id]
	s.mu.Unlock()
	if late {
		return
	}
	what := "an error without an id"
	if m.ID.Valid() && len(m.IDRaw()) > 0 && string(m.IDRaw()) != "null" {
		what = "a response whose id, " + safetext.Quote(safetext.Clip(string(m.IDRaw()), 64)) + ", is no request's in flight"
	}
	s.failInFlight(what)
}

// oversized handles a line longer than the gateway accepts, from its
// ends.
func (s *stdioUpstream) oversized(head, tail []byte) {
	id, method, found := oversizedID(head, tail)
	if method {
		return
	}
	too := fmt.Sprintf("larger than the gateway accepts (%d bytes)", s.g.cfg.MaxMessageBytes)
	if found {
		s.mu.Lock()
		w := s.pending[id]
		if w != nil {
			delete(s.pending, id)
			s.abandon(id)
		}
		late := s.abandoned[id]
		s.mu.Unlock()
		if w != nil {
			w.why = &upstreamError{Msg: "its answer is " + too}
			close(w.ch)
			return
		}
		if late {
			return
		}
	}
	s.failInFlight("a message " + too + " whose id could not be read")
}

// failInFlight fails every request in flight on the link: the link got
// what, an answer it cannot attribute.
func (s *stdioUpstream) failInFlight(what string) {
	s.g.cfg.Metrics.upstreamError("unattributable")
	why := &upstreamError{Reason: reasonUnattributable,
		Msg: "it sent " + what + ", which the gateway cannot attribute to one request: every request then in flight on the link was failed"}
	s.mu.Lock()
	failed := make([]*waiter, 0, len(s.pending))
	for id, w := range s.pending {
		delete(s.pending, id)
		s.abandon(id)
		failed = append(failed, w)
	}
	s.mu.Unlock()
	for _, w := range failed {
		w.why = why
		close(w.ch)
	}
}

// abandon remembers an id the link gave up on (s.mu held).
func (s *stdioUpstream) abandon(id int64) {
	if s.abandoned[id] {
		return
	}
	if len(s.gaveUp) == maxAbandoned {
		delete(s.abandoned, s.gaveUp[0])
		s.gaveUp = s.gaveUp[1:]
	}
	s.abandoned[id] = true
	s.gaveUp = append(s.gaveUp, id)
}

// oversizedID reads the ends of an oversized line: the integer id of a
// response, written among its first members (before any object or array)
// or as its last; or that its start names a method (a request or a
// notification of the server's).
func oversizedID(head, tail []byte) (id int64, method, found bool) {
	if id, method, found = headID(head); method || found {
		return id, method, found
	}
	id, found = tailID(tail)
	return id, false, found
}

// headID scans the first members of the object at the start of b while
// they are whole scalars.
func headID(b []byte) (id int64, method, found bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return 0, false, false
	}
	i++
	for {
		i = skipSpace(b, i)
		key, j, ok := scanString(b, i)
		if !ok {
			return id, false, found
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return id, false, found
		}
		i = skipSpace(b, i+1)
		switch key {
		case `"method"`:
			return 0, true, false
		case `"result"`, `"error"`:
			return id, false, found
		}
		j = scalarEnd(b, i)
		if j < 0 {
			return id, false, found
		}
		if key == `"id"` {
			id, found = parseID(b[i:j])
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ',' {
			return id, false, found
		}
		i++
	}
}

// tailID reads `"id":N}` at the very end of b: the last member of the
// top-level object (a nested object's would be followed by its parent's
// end).
func tailID(b []byte) (int64, bool) {
	b = frame.TrimSpace(b)
	if len(b) == 0 || b[len(b)-1] != '}' {
		return 0, false
	}
	b = frame.TrimSpace(b[:len(b)-1])
	i := len(b)
	for i > 0 && (b[i-1] >= '0' && b[i-1] <= '9' || b[i-1] == '-') {
		i--
	}
	id, ok := parseID(b[i:])
	if !ok {
		return 0, false
	}
	b = frame.TrimSpace(b[:i])
	if !bytes.HasSuffix(b, []byte(":")) {
		return 0, false
	}
	b = frame.TrimSpace(b[:len(b)-1])
	if !bytes.HasSuffix(b, []byte(`"id"`)) {
		return 0, false
	}
	b = frame.TrimSpace(b[:len(b)-len(`"id"`)])
	if len(b) == 0 || b[len(b)-1] != ',' && b[len(b)-1] != '{' {
		return 0, false
	}
	return id, true
}

func parseID(b []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the JSON string at b[i:] as written (quotes and
// escapes kept) and the index after it.
func scanString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return string(b[i : j+1]), j + 1, true
		}
	}
	return "", 0, false
}

// scalarEnd is the index after the whole scalar (string, number, true,
// false, null) at b[i:], or -1 (an object, an array, or cut short).
func scalarEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	if b[i] == '"' {
		_, j, ok := scanString(b, i)
		if !ok {
			return -1
		}
		return j
	}
	if b[i] == '{' || b[i] == '[' {
		return -1
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(" \t\r\n,}"), b[j]) < 0 {
		j++
	}
	if j == len(b) || j == i {
		return -1 // cut short: the scalar may go on
	}
	return j
}

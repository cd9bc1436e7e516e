package proxy

import (
	"errors"
	"strconv"
	"sync"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// Link ids. A link sends a request under an id of its own instead of the
// downstream's, and gives the downstream its own id bytes back in the
// answer (withID): a stdio link for every request, since it multiplexes
// several callers over one pipe; an HTTP link for a request whose id is a
// number the upstream could not echo exactly (ownIDNeeded). The ids are
// still compared exactly, as JSON values (sameID).

// maxSafeInteger is the largest integer a float64 holds with every
// integer below it (2^53 - 1).
const maxSafeInteger = 1<<53 - 1

// ownIDNeeded reports whether an HTTP link sends a request under its own
// id: its id is a number that is not an integer within ±(2^53 - 1). The
// servers most in use read a JSON number as a float64 (Go's encoding/json
// into an interface, JavaScript's JSON.parse) and echo it as one:
// 9007199254740993 comes back 9007199254740992, which is not the
// request's id, and the call, which the upstream ran, was answered with
// an error.
func ownIDNeeded(id jcs.Value) bool {
	if !id.Valid() || id.Kind() != jcs.Number {
		return false
	}
	n, ok := frame.Int64(id)
	return !ok || n > maxSafeInteger || n < -maxSafeInteger
}

// withID returns m with its id replaced by id (raw JSON), parsed as a
// server's message: an answer given back its caller's id.
func withID(m *frame.Message, id []byte) (*frame.Message, error) {
	b, err := replaceValue(m.Raw, m, m.ID, id)
	if err != nil {
		return nil, err
	}
	return frame.FromServer(b)
}

// replaceID returns m's raw bytes with its id replaced by id (raw JSON).
// m must have been parsed from raw (its values are spans of raw).
func replaceID(raw []byte, m *frame.Message, id []byte) ([]byte, error) {
	return replaceValue(raw, m, m.ID, id)
}

// replaceValue returns raw with the value v of m (a span of raw) replaced
// by with (raw JSON).
func replaceValue(raw []byte, m *frame.Message, v jcs.Value, with []byte) ([]byte, error) {
	if !v.Valid() {
		return nil, errors.New("a message without an id")
	}
	off := v.Offset() - m.Root.Offset()
	old := v.Raw()
	if off < 0 || off+len(old) > len(raw) || string(raw[off:off+len(old)]) != string(old) {
		return nil, errors.New("the message id could not be located")
	}
	out := make([]byte, 0, len(raw)-len(old)+len(with))
	out = append(out, raw[:off]...)
	out = append(out, with...)
	return append(out, raw[off+len(old):]...), nil
}

// linkIDs are the requests in flight a link sent under an id of its own,
// by the downstream's id: a notifications/cancelled names a request by
// the downstream's id, and reaches the upstream under the link's.
type linkIDs struct {
	mu   sync.Mutex
	next int
	in   map[int]linkID
}

type linkID struct {
	down jcs.Value // the caller's id (a span of its request, held while in flight)
	up   []byte    // the link's, raw JSON
}

// add records a request in flight; the function returned forgets it.
func (l *linkIDs) add(down jcs.Value, up []byte) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.in == nil {
		l.in = map[int]linkID{}
	}
	l.next++
	k := l.next
	l.in[k] = linkID{down: down, up: up}
	return func() { l.mu.Lock(); delete(l.in, k); l.mu.Unlock() }
}

// upID is the link's id of the one request in flight whose caller's id
// is down; n says how many there are (a stateless session's callers may
// use the same id).
func (l *linkIDs) upID(down jcs.Value) (up []byte, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.in {
		if sameID(e.down, down) {
			up = e.up
			n++
		}
	}
	return up, n
}

// cancelled rewrites a notifications/cancelled for a link: its requestId,
// the downstream's id of a request the link sent under an id of its own,
// becomes the link's. ok is false when it must not be sent: its request
// is not the one request in flight under that id, and every id on the
// link is its own (all, a stdio link: sent as it came, it would name
// another request — the upstream knows none by the downstream's id), or
// more than one request in flight has it. Any other message, or a
// requestId no request of the link's own ids has on an HTTP link, is
// returned as it came.
func (l *linkIDs) cancelled(raw []byte, m *frame.Message, all bool) ([]byte, *frame.Message, bool) {
	if m == nil || m.Method != "notifications/cancelled" || m.Kind != frame.Notification {
		return raw, m, true
	}
	rid, ok := m.Param("requestId")
	if !ok {
		return raw, m, !all
	}
	up, n := l.upID(rid)
	switch {
	case n > 1, n == 0 && all:
		return nil, nil, false
	case n == 0:
		return raw, m, true
	}
	b, err := replaceValue(raw, m, rid, up)
	if err != nil {
		return nil, nil, false
	}
	nm, err := frame.Parse(b)
	if err != nil {
		return nil, nil, false
	}
	return b, nm, true
}

// linkIDString is the id an HTTP link sends a request under in place of
// the downstream's: a string in the gateway's own namespace, so that it
// is echoed exactly and meets no integer id of the downstream's.
func linkIDString(n uint64) []byte {
	return strconv.AppendQuote(nil, "mcpdrift-proxy-id-"+strconv.FormatUint(n, 10))
}

// subscriptionID is the subscription id in a notification's _meta: the
// id of the subscriptions/listen request whose stream it belongs to.
func subscriptionID(m *frame.Message) (jcs.Value, bool) {
	meta, ok := m.Meta()
	if !ok {
		return jcs.Value{}, false
	}
	return meta.Get("io.modelcontextprotocol/subscriptionId")
}

// withSubscriptionID returns m with its subscription id sub replaced by
// id (the caller's id of the listen request, raw JSON).
func withSubscriptionID(m *frame.Message, sub jcs.Value, id []byte) (*frame.Message, error) {
	b, err := replaceValue(m.Raw, m, sub, id)
	if err != nil {
		return nil, err
	}
	return frame.FromServer(b)
}

package proxy

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// stdioUpstream speaks newline-delimited JSON-RPC to a contained child.
// Several callers share one pipe (the downstream and the gateway's own
// listing), so every request gets an id of the link's and the response
// gets the caller's id back: the only bytes the gateway changes.
type stdioUpstream struct {
	faultHook
	g    *Gateway
	proc *mcpclient.Process

	wmu sync.Mutex // one line at a time

	mu      sync.Mutex
	next    int64
	pending map[int64]*waiter
	// abandoned are ids of requests that ended without their answer (a
	// timeout, a failure of the link's requests): an answer that comes
	// for one later is dropped, not taken as unattributable. Bounded.
	abandoned map[int64]bool
	gaveUp    []int64
	ids       linkIDs
	// streams are the open long-lived requests (subscriptions/listen) by
	// the link's id: their notifications, tagged with that id as the
	// subscription id, go to the request's caller with its own id back.
	streams map[int64]stream
	onMsg   func(*frame.Message)
	early   []*frame.Message // server messages before listen (bounded)
	dead    bool
	done    chan struct{}
}

const maxEarly = 256

type stream struct {
	onMsg func(*frame.Message)
	id    []byte // the caller's id
}

func newStdioUpstream(ctx context.Context, g *Gateway) (*stdioUpstream, error) {
	u := g.cfg.Upstream
	p, err := mcpclient.StartProcess(ctx, mcpclient.Config{Command: u.Command, PassEnv: u.PassEnv, Env: u.Env})
	if err != nil {
		return nil, &upstreamError{Msg: safetext.Inert(err.Error())}
	}
	s := &stdioUpstream{g: g, proc: p, pending: map[int64]*waiter{}, abandoned: map[int64]bool{}, streams: map[int64]stream{}, done: make(chan struct{})}
	go s.readLoop()
	return s, nil
}

func (s *stdioUpstream) readLoop() {
	defer s.fail()
	defer func() {
		if v := recover(); v != nil {
			s.faulted("reading the stdio upstream", v)
		}
	}()
	lr := frame.NewLineReader(s.proc.Stdout, s.g.cfg.MaxMessageBytes)
	for {
		line, err := lr.Next()
		if frame.IsLineTooLong(err) {
			s.g.cfg.Metrics.upstreamError("oversized")
			head, tail, serr := lr.SkipEnds(lineEnds)
			s.oversized(head, tail)
			if serr != nil {
				return
			}
			continue
		}
		if b := frame.TrimSpace(line); len(b) > 0 {
			if m, perr := frame.FromServer(b); perr == nil {
				s.dispatch(m)
			}
			// A line that is not JSON-RPC (a server's log on stdout) is
			// not forwarded.
		}
		if err != nil {
			return
		}
	}
}

func (s *stdioUpstream) dispatch(m *frame.Message) {
	if m.Kind.IsResponse() {
		s.answered(m)
		return
	}
	if st, back := s.streamOf(m); st.onMsg != nil {
		st.onMsg(back)
		return
	}
	s.mu.Lock()
	on := s.onMsg
	if on == nil && len(s.early) < maxEarly {
		s.early = append(s.early, m)
	}
	s.mu.Unlock()
	if on != nil {
		on(m)
	}
}

// fail marks the link dead and wakes every waiter.
func (s *stdioUpstream) fail() {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return
	}
	s.dead = true
	for id, w := range s.pending {
		close(w.ch)
		delete(s.pending, id)
	}
	s.mu.Unlock()
	close(s.done)
}

func (s *stdioUpstream) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.dead
}

func (s *stdioUpstream) negotiated(string) {}

func (s *stdioUpstream) write(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.proc.Stdin.Write(frame.AppendLine(nil, b)); err != nil {
		return &upstreamError{Msg: "the server process is gone: " + safetext.Inert(err.Error())}
	}
	return nil
}

func (s *stdioUpstream) request(ctx context.Context, raw []byte, m *frame.Message, _ http.Header, onMsg func(*frame.Message)) (*answer, error) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return nil, &upstreamError{Msg: "the server process is gone"}
	}
	s.next++
	id := s.next
	w := &waiter{ch: make(chan *frame.Message, 1)}
	s.pending[id] = w
	s.mu.Unlock()
	upID := []byte(strconv.FormatInt(id, 10))
	defer s.ids.add(m.ID, upID)()
	out, err := replaceID(raw, m, upID)
	if err != nil {
		s.forget(id, false)
		return nil, &upstreamError{Msg: err.Error()}
	}
	if longLived(m) && onMsg != nil {
		s.mu.Lock()
		s.streams[id] = stream{onMsg: onMsg, id: m.IDRaw()}
		s.mu.Unlock()
		defer func() { s.mu.Lock(); delete(s.streams, id); s.mu.Unlock() }()
	}
	ctx, cancel := requestContext(ctx, s.g, m)
	defer cancel()
	start := s.g.cfg.Now()
	if err := s.write(out); err != nil {
		s.forget(id, false)
		return nil, err
	}
	select {
	case resp, ok := <-w.ch:
		s.g.cfg.Metrics.upstreamLatency(m.Method, s.g.cfg.Now().Sub(start))
		if !ok {
			if w.why != nil {
				return nil, w.why
			}
			return nil, &upstreamError{Msg: "the server process exited before it answered"}
		}
		// The caller's id back, byte for byte.
		msg, err := withID(resp, m.IDRaw())
		if err != nil {
			return nil, &upstreamError{Msg: err.Error()}
		}
		return &answer{Message: msg}, nil
	case <-ctx.Done():
		s.forget(id, true)
		s.g.cfg.Metrics.upstreamError("timeout")
		return nil, &upstreamError{Msg: "no answer in time"}
	}
}

// forget ends a request's wait without its answer; abandoned: it was
// sent, so an answer may still come.
func (s *stdioUpstream) forget(id int64, abandoned bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, id)
	if abandoned {
		s.abandon(id)
	}
}

func (s *stdioUpstream) send(_ context.Context, raw []byte, m *frame.Message, _ http.Header) error {
	if !s.alive() {
		return &upstreamError{Msg: "the server process is gone"}
	}
	raw, _, ok := s.ids.cancelled(raw, m, true)
	if !ok {
		return nil // a cancellation of no request in flight under that id: nothing to cancel
	}
	return s.write(raw)
}

func (s *stdioUpstream) listen(onMsg func(*frame.Message)) {
	s.mu.Lock()
	s.onMsg = onMsg
	early := s.early
	s.early = nil
	s.mu.Unlock()
	for _, m := range early {
		onMsg(m)
	}
}

func (s *stdioUpstream) close() {
	_ = s.proc.Close()
	<-s.done
}

// streamOf finds the open stream a notification belongs to (its
// _meta subscription id is the link's id of the listen request) and
// returns the notification with the caller's id as the subscription id.
func (s *stdioUpstream) streamOf(m *frame.Message) (stream, *frame.Message) {
	sub, ok := subscriptionID(m)
	if !ok {
		return stream{}, nil
	}
	id, ok := frame.Int64(sub)
	if !ok {
		return stream{}, nil
	}
	s.mu.Lock()
	st, ok := s.streams[id]
	s.mu.Unlock()
	if !ok {
		return stream{}, nil
	}
	back, err := withSubscriptionID(m, sub, st.id)
	if err != nil {
		return stream{}, nil
	}
	return st, back
}

package proxy

import (
	"context"
	"net/http"

	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// resumingStream reads an upstream's response stream and, in a legacy
// session (2025-03-26 to 2025-11-25; 2026-07-28 has no resumption),
// resumes it when it ends or is lost before the response (frame.Resumer:
// a GET with Last-Event-ID after the upstream's retry, bounded in
// reconnections, waits, bytes and the request's deadline), so that a call
// the upstream answers after closing the stream on purpose (SEP-1699
// polling) is answered downstream on the stream it was asked on. The
// caller marks the response found with Answered: a stream that ends after
// it is not resumed.
type resumingStream struct {
	*frame.SSEReader
	ctx  context.Context
	res  *frame.Resumer // nil: not resumed (a modern upstream)
	done bool           // the response was read
}

// responseStream is the reader of resp's event stream within lim: the
// one place the gateway's upstream resumes a stream.
func (u *httpUpstream) responseStream(resp *http.Response, lim frame.SSELimits) *resumingStream {
	s := &resumingStream{SSEReader: frame.NewSSEReader(resp.Body, lim), ctx: resp.Request.Context()}
	u.mu.Lock()
	legacy := u.version != "" // negotiated records a legacy session's revision only
	u.mu.Unlock()
	if legacy {
		auth := resp.Request.Header.Get("Authorization") // forwarded from the downstream, or configured
		s.res = &frame.Resumer{Do: u.client.Do, NewGET: func(ctx context.Context) (*http.Request, error) {
			hr, err := u.newRequest(ctx, http.MethodGet, nil, nil, nil)
			if err == nil && auth != "" && hr.Header.Get("Authorization") == "" {
				hr.Header.Set("Authorization", auth)
			}
			return hr, err
		}}
	}
	return s
}

// Next is the next event of the stream, across resumptions; at the end,
// the error that ended the last stream read.
func (s *resumingStream) Next() (frame.Event, error) {
	for {
		ev, err := s.SSEReader.Next()
		if err == nil || s.res == nil || s.done || !frame.Resumable(s.ctx, err) {
			return ev, err
		}
		next, body, rerr := s.res.Resume(s.ctx, s.SSEReader)
		if rerr != nil {
			return ev, err
		}
		context.AfterFunc(s.ctx, func() { body.Close() })
		s.SSEReader = next
	}
}

// Answered records that the response was read: the stream is not resumed
// after it.
func (s *resumingStream) Answered() { s.done = true }

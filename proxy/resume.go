package proxy

import (
	"context"
	"net/http"
	"sync"

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
	u    *httpUpstream
	auth string         // the Authorization the request carried (forwarded from the downstream, or configured)
	res  *frame.Resumer // made at the first resumption
	// legacy: the stream is resumed (a legacy session's; a modern
	// upstream's is not).
	legacy bool
	done   bool // the response was read
	bufs   *frame.SSEBuffers
}

// sseBuffers keeps the buffers of response streams that were read to
// their end, for the next: every call answered on an event stream would
// otherwise make a reader's 32 KiB buffer of its own.
var sseBuffers = sync.Pool{New: func() any { return new(frame.SSEBuffers) }}

// maxPooledData bounds the data buffer a finished stream gives back to
// sseBuffers: one large event (a page of a tool list) does not keep its
// buffer alive in the pool.
const maxPooledData = 64 << 10

// responseStream is the reader of resp's event stream within lim: the
// one place the gateway's upstream resumes a stream. Its buffers come
// from sseBuffers; release gives them back.
func (u *httpUpstream) responseStream(resp *http.Response, lim frame.SSELimits) *resumingStream {
	bufs := sseBuffers.Get().(*frame.SSEBuffers)
	s := &resumingStream{SSEReader: frame.NewSSEReaderBuffers(resp.Body, lim, bufs), ctx: resp.Request.Context(), u: u, bufs: bufs}
	u.mu.Lock()
	s.legacy = u.version != "" // negotiated records a legacy session's revision only
	u.mu.Unlock()
	if s.legacy {
		s.auth = resp.Request.Header.Get("Authorization")
	}
	return s
}

// resumer is the stream's frame.Resumer, made when it is first needed.
func (s *resumingStream) resumer() *frame.Resumer {
	if s.res == nil {
		u, auth := s.u, s.auth
		s.res = &frame.Resumer{Do: u.client.Do, NewGET: func(ctx context.Context) (*http.Request, error) {
			hr, err := u.newRequest(ctx, http.MethodGet, nil, nil, nil)
			if err == nil && auth != "" && hr.Header.Get("Authorization") == "" {
				hr.Header.Set("Authorization", auth)
			}
			return hr, err
		}}
	}
	return s.res
}

// release gives the stream's buffers back to sseBuffers; nothing is read
// from s after.
func (s *resumingStream) release() {
	if s.bufs == nil {
		return
	}
	s.SSEReader.Release(s.bufs, maxPooledData)
	sseBuffers.Put(s.bufs)
	s.bufs = nil
}

// Next is the next event of the stream, across resumptions; at the end,
// the error that ended the last stream read.
func (s *resumingStream) Next() (frame.Event, error) {
	for {
		ev, err := s.SSEReader.Next()
		if err == nil || !s.legacy || s.done || !frame.Resumable(s.ctx, err) {
			return ev, err
		}
		next, body, rerr := s.resumer().Resume(s.ctx, s.SSEReader)
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

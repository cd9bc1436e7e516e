package mcpclient

import (
	"io"
	"math"
	"sync"

	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// sseStream reads a text/event-stream (frame.SSEReader) within the
// client's bounds: maxBytes for the whole stream, or with perEvent for
// each event (the HTTP+SSE transport's one stream carries every response
// of a run, and its reader bounds each); a line within maxBytes; maxEvents
// blocks. Its limit errors are *LimitError of method.
type sseStream struct {
	*frame.SSEReader
	method string
}

func newSSEStream(r io.Reader, method string, maxBytes int64, maxEvents int, perEvent bool) *sseStream {
	return &sseStream{SSEReader: frame.NewSSEReader(r, sseLimits(maxBytes, maxEvents, perEvent)), method: method}
}

func sseLimits(maxBytes int64, maxEvents int, perEvent bool) frame.SSELimits {
	return frame.SSELimits{MaxBytes: maxBytes, MaxLine: int(min(maxBytes, math.MaxInt)), MaxEvents: maxEvents, PerEvent: perEvent}
}

// sseBuffers hold the buffers of a transport's last response stream for
// its next one (frame.SSEBuffers): a listing of many large pages grows
// them once. Taken by one reader at a time; another reader meanwhile gets
// fresh ones.
type sseBuffers struct {
	mu   sync.Mutex
	bufs frame.SSEBuffers
	busy bool
}

// stream is newSSEStream reusing b's buffers; done gives them back.
func (b *sseBuffers) stream(r io.Reader, method string, maxBytes int64, maxEvents int) (s *sseStream, done func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.busy {
		return newSSEStream(r, method, maxBytes, maxEvents, false), func() {}
	}
	b.busy = true
	sr := frame.NewSSEReaderBuffers(r, sseLimits(maxBytes, maxEvents, false), &b.bufs)
	return &sseStream{SSEReader: sr, method: method}, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		sr.Release(&b.bufs, maxSSEBuffer)
		b.busy = false
	}
}

// maxSSEBuffer is the largest read buffer a transport keeps between
// responses.
const maxSSEBuffer = 64 << 20

// detachAt is the size from which an event that is parsed keeps the
// stream's buffer (frame.SSEReader.Detach) rather than a copy: below it a
// copy costs less than a new buffer of the last one's size.
const detachAt = 64 << 10

// next returns the next event, or io.EOF at the end of the stream, a
// *LimitError, or the underlying read error.
func (s *sseStream) next() (frame.Event, error) {
	ev, err := s.Next()
	return ev, limitError(s.method, err)
}

// nextShared is next whose event's Data is the reader's buffer, valid
// until the stream is read again or done (frame.SSEReader.NextShared).
func (s *sseStream) nextShared() (frame.Event, error) {
	ev, err := s.NextShared()
	return ev, limitError(s.method, err)
}

// limitError converts a bound the framing reached: the bytes of a stream
// and the length of a line are LimitResponseBytes, the events
// LimitSSEEvents. Other errors are returned as they are.
func limitError(method string, err error) error {
	fe, ok := err.(*frame.LimitError) // as the reader returns it, unwrapped
	if !ok {
		return err
	}
	kind := LimitResponseBytes
	if fe.Limit == frame.LimitEvents {
		kind = LimitSSEEvents
	}
	return &LimitError{Method: method, Kind: kind, Max: fe.Max}
}

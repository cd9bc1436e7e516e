package mcpclient

import (
	"io"
	"math"

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
	lim := frame.SSELimits{MaxBytes: maxBytes, MaxLine: int(min(maxBytes, math.MaxInt)), MaxEvents: maxEvents, PerEvent: perEvent}
	return &sseStream{SSEReader: frame.NewSSEReader(r, lim), method: method}
}

// next returns the next event, or io.EOF at the end of the stream, a
// *LimitError, or the underlying read error.
func (s *sseStream) next() (frame.Event, error) {
	ev, err := s.Next()
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

package mcpclient

import (
	"bufio"
	"bytes"
	"io"
)

// sseReader reads a text/event-stream (the WHATWG event stream format) with
// bounds: the whole stream (maxBytes), one line (maxLine) and the number of
// events (maxEvents). Lines end with LF, CRLF or CR; comment lines (":"
// keep-alives) are ignored; id and retry fields are ignored (this client
// never resumes a stream). A block without data lines is not an event; an
// event whose data is empty (a 2025-11-25 "priming" event) is returned with
// empty data and left to the caller to skip. A stream that ends inside an
// event discards it, as the format says.
type sseReader struct {
	r         *bufio.Reader
	method    string // for LimitError
	maxBytes  int64
	maxLine   int
	maxEvents int
	// perEvent makes maxBytes and maxEvents bound what is read for one
	// dispatched event (the comments and empty blocks before it included)
	// instead of the whole stream: the HTTP+SSE transport's one stream
	// carries every response of a run, and its reader bounds each.
	perEvent bool

	n      int64 // bytes consumed
	events int   // blocks with at least one field
	skipLF bool  // the last line ended with CR: a following LF belongs to it
	line   []byte
	data   []byte
}

// sseEvent is one dispatched event. data is a fresh slice.
type sseEvent struct {
	typ  string
	data []byte
}

func newSSEReader(r io.Reader, method string, maxBytes int64, maxLine, maxEvents int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), method: method, maxBytes: maxBytes, maxLine: maxLine, maxEvents: maxEvents}
}

// next returns the next event, or io.EOF at the end of the stream, a
// *LimitError, or the underlying read error.
func (s *sseReader) next() (sseEvent, error) {
	if s.perEvent {
		s.n, s.events = 0, 0
	}
	s.data = s.data[:0]
	typ := ""
	fields, hasData := false, false
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if !fields {
				continue
			}
			s.events++
			if s.events > s.maxEvents {
				return sseEvent{}, &LimitError{Method: s.method, Kind: LimitSSEEvents, Max: int64(s.maxEvents)}
			}
			if hasData {
				d := s.data
				if len(d) > 0 && d[len(d)-1] == '\n' {
					d = d[:len(d)-1]
				}
				return sseEvent{typ: typ, data: bytes.Clone(d)}, nil
			}
			s.data = s.data[:0]
			typ, fields = "", false
			continue
		}
		if line[0] == ':' {
			continue // comment, e.g. a keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		fields = true
		switch string(field) {
		case "data":
			s.data = append(append(s.data, value...), '\n')
			hasData = true
		case "event":
			typ = string(value)
		}
	}
}

// readLine returns the next line without its terminator; the slice is
// reused by the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	if s.skipLF {
		s.skipLF = false
		if b, err := s.r.Peek(1); err == nil && b[0] == '\n' {
			if err := s.consume(1); err != nil {
				return nil, err
			}
		}
	}
	for {
		if _, err := s.r.Peek(1); err != nil {
			return nil, err // io.EOF inside a line ends the stream: the line is incomplete
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		i := indexEOL(buf)
		take := len(buf)
		if i >= 0 {
			take = i
		}
		if len(s.line)+take > s.maxLine {
			return nil, &LimitError{Method: s.method, Kind: LimitResponseBytes, Max: int64(s.maxLine)}
		}
		s.line = append(s.line, buf[:take]...)
		if i < 0 {
			if err := s.consume(take); err != nil {
				return nil, err
			}
			continue
		}
		s.skipLF = buf[i] == '\r'
		if err := s.consume(take + 1); err != nil {
			return nil, err
		}
		return s.line, nil
	}
}

func (s *sseReader) consume(n int) error {
	s.n += int64(n)
	if s.n > s.maxBytes {
		return &LimitError{Method: s.method, Kind: LimitResponseBytes, Max: s.maxBytes}
	}
	_, err := s.r.Discard(n)
	return err
}

// indexEOL returns the index of the first CR or LF in b, or -1.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

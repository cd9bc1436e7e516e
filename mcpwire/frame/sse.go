package frame

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Event is one server-sent event.
type Event struct {
	// Type is the event field ("" when absent, which means "message").
	Type string
	// ID is the id field of the event's block ("" when it has none; see
	// SSEReader.LastEventID for the id a reconnection would resume from).
	ID string
	// Retry is the retry field of the event's block (0 when it has none).
	Retry time.Duration
	// Data is the data, its lines joined with LF: a fresh slice for each
	// event from Next, the reader's buffer from NextShared.
	Data []byte
}

// SSELimits bound an SSEReader. Each must be positive: a zero bound admits
// nothing (there is no "unlimited").
type SSELimits struct {
	// MaxBytes bounds the bytes read: in all, or with PerEvent for each
	// event (the comments and data-less blocks before it included).
	MaxBytes int64
	// MaxLine bounds one line, its terminator not counted.
	MaxLine int
	// MaxEvents bounds the blocks of fields read (data-less blocks count):
	// in all, or with PerEvent for each event.
	MaxEvents int
	// PerEvent makes MaxBytes and MaxEvents bound what is read for one
	// event instead of the whole stream (a stream that lives for a whole
	// session, as HTTP+SSE's, bounds each of its messages).
	PerEvent bool
}

// SSEReader reads a text/event-stream (the WHATWG event stream format)
// within its SSELimits. Lines end with LF, CRLF or CR; comment lines (":"
// keep-alives) are skipped, and so are fields it does not know. A block
// without data lines is not an event (its id and retry still count, as the
// format says); an event whose data is empty (a 2025-11-25 "priming"
// event) is returned with empty Data, for the caller to skip. A stream
// that ends inside an event discards it, as the format says. A leading
// byte order mark is not stripped (it makes the first field unknown).
type SSEReader struct {
	r   *bufio.Reader
	lim SSELimits

	n      int64 // bytes consumed (for the current event when PerEvent)
	events int   // blocks with at least one field
	skipLF bool  // the last line ended with CR: a following LF belongs to it
	// data is the event's data so far, and past it the line being read:
	// a data line is read straight into its place (no copy of its own,
	// so a page of a tool list in one line is held once while read).
	data []byte
	// hint is the size of the data Detach last gave away: the next
	// buffer, once past 4 KiB, is made that large at once, not grown to it.
	hint int
	// idBuf is the last id field read (the format's "last event ID
	// buffer"); lastID is what it was at the last blank line (the "last
	// event ID string"): an id read in an event the stream ended inside
	// is not one a reconnection resumes from.
	idBuf    string
	lastID   string
	retry    time.Duration
	hasRetry bool
}

// NewSSEReader returns a reader of r within lim.
func NewSSEReader(r io.Reader, lim SSELimits) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, 32<<10), lim: lim}
}

// SSEBuffers are the buffers of a reader that is done, for the next reader
// of the same client: a client reading one large event per response (a
// page of a tool list) then grows its line and data buffers once, not for
// every response. The zero value is empty.
type SSEBuffers struct {
	r    *bufio.Reader
	data []byte
	hint int // the size of the data buffer a Detach gave away
}

// NewSSEReaderBuffers is NewSSEReader reusing b's buffers (b is left
// empty); Release gives them back. Events are the same: each Data from
// Next is a fresh slice.
func NewSSEReaderBuffers(r io.Reader, lim SSELimits, b *SSEBuffers) *SSEReader {
	s := &SSEReader{lim: lim, data: b.data[:0], hint: b.hint}
	if b.r != nil {
		b.r.Reset(r)
		s.r = b.r
	} else {
		s.r = bufio.NewReaderSize(r, 32<<10)
	}
	*b = SSEBuffers{}
	return s
}

// Release gives the reader's buffers to b, for a later reader; s must not
// be read after. Buffers larger than max are dropped, not kept.
func (s *SSEReader) Release(b *SSEBuffers, max int) {
	s.r.Reset(nil)
	*b = SSEBuffers{r: s.r}
	if cap(s.data) <= max {
		b.data = s.data[:0]
	}
	if s.hint <= max {
		b.hint = s.hint
	}
	s.r, s.data = nil, nil
}

// Buffered returns the number of bytes read from the stream and not yet
// consumed: more of it already arrived.
func (s *SSEReader) Buffered() int { return s.r.Buffered() }

// Consumed returns the bytes read so far: for the event last returned (and
// what preceded it) with PerEvent, else for the whole stream.
func (s *SSEReader) Consumed() int64 { return s.n }

// LastEventID returns the stream's last event ID, the one a reconnection
// resumes from (Last-Event-ID): the value of the last id field read in a
// block that ended (a field whose value holds NUL is ignored, and an id in
// an event the stream ended inside does not count, as the format says).
func (s *SSEReader) LastEventID() string { return s.lastID }

// Retry returns the last valid retry field read (ASCII digits: a
// reconnection time in milliseconds), and whether there was one.
func (s *SSEReader) Retry() (time.Duration, bool) { return s.retry, s.hasRetry }

// Next returns the next event; io.EOF at the end of the stream; a
// *LimitError when a bound is reached; or the underlying read error.
func (s *SSEReader) Next() (Event, error) {
	ev, err := s.NextShared()
	if err == nil {
		ev.Data = bytes.Clone(ev.Data)
	}
	return ev, err
}

// NextShared is Next whose event's Data is the reader's own buffer, valid
// until the reader is read again or released: for a caller that looks at
// an event's bytes (and copies what it keeps, or Detaches them) before it
// reads on.
func (s *SSEReader) NextShared() (Event, error) {
	if s.lim.PerEvent {
		s.n, s.events = 0, 0
	}
	s.data = s.data[:0]
	var ev Event
	fields, hasData := false, false
	for {
		// The line is read onto the end of the data: a data line's value
		// is moved into place, any other line is dropped once read.
		start := len(s.data)
		if err := s.readLine(); err != nil {
			return Event{}, err
		}
		line := s.data[start:]
		if len(line) == 0 {
			s.lastID = s.idBuf
			if !fields {
				continue
			}
			s.events++
			if s.events > s.lim.MaxEvents {
				return Event{}, &LimitError{Limit: LimitEvents, Max: int64(s.lim.MaxEvents)}
			}
			if hasData {
				d := s.data
				if len(d) > 0 && d[len(d)-1] == '\n' {
					d = d[:len(d)-1]
				}
				ev.Data = d
				return ev, nil
			}
			s.data = s.data[:0]
			ev, fields = Event{}, false
			continue
		}
		if line[0] == ':' {
			s.data = s.data[:start]
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
			n := copy(s.data[start:], value) // overlapping: a move to the left
			s.data = append(s.data[:start+n], '\n')
			hasData = true
			continue
		case "event":
			ev.Type = eventType(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				if string(value) != s.idBuf {
					s.idBuf = string(value)
				}
				ev.ID = s.idBuf
			}
		case "retry":
			if d, ok := retryValue(value); ok {
				s.retry, s.hasRetry, ev.Retry = d, true, d
			}
		}
		s.data = s.data[:start]
	}
}

// eventType returns the event field's value, without allocating for the
// common ones.
func eventType(v []byte) string {
	switch string(v) {
	case "message":
		return "message"
	case "endpoint":
		return "endpoint"
	}
	return string(v)
}

// retryValue reads a retry field: ASCII digits only, in milliseconds.
func retryValue(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || ms > math.MaxInt64/int64(time.Millisecond) {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// readLine appends the next line, without its terminator, to s.data.
func (s *SSEReader) readLine() error {
	start := len(s.data)
	if s.skipLF {
		s.skipLF = false
		if b, err := s.r.Peek(1); err == nil && b[0] == '\n' {
			if err := s.consume(1); err != nil {
				return err
			}
		}
	}
	for {
		if _, err := s.r.Peek(1); err != nil {
			return err // io.EOF inside a line ends the stream: the line is incomplete
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		i := indexEOL(buf)
		take := len(buf)
		if i >= 0 {
			take = i
		}
		if len(s.data)-start+take > s.lim.MaxLine {
			return &LimitError{Limit: LimitLine, Max: int64(s.lim.MaxLine)}
		}
		if need := len(s.data) + take; need > cap(s.data) {
			s.data = s.grow(need)
		}
		s.data = append(s.data, buf[:take]...)
		if i < 0 {
			if err := s.consume(take); err != nil {
				return err
			}
			continue
		}
		s.skipLF = buf[i] == '\r'
		return s.consume(take + 1)
	}
}

// Detach makes the data of the event NextShared last returned the
// caller's: the reader reads on into a new buffer, made at once as large
// as that event and an eighth more when the next event is not small. For
// a caller that keeps a large event (a page of a tool list that is
// parsed): its bytes are then held once, not in a copy beside the
// reader's buffer.
func (s *SSEReader) Detach() {
	// The last detached event's size, not the largest ever: one large
	// event must not make every later one's buffer (and what keeps it)
	// that large.
	s.hint = len(s.data)
	s.data = nil
}

// testHookSSEGrow, when set (by a test), is told each array grow makes.
var testHookSSEGrow func(size int)

// grow returns s.data in a new array with room for need bytes: twice its
// capacity (append grows by a quarter past 256 bytes, which reads a long
// line, one page of a tool list, through several times as many arrays and
// bytes), but not past what the bounds let an event's data reach.
func (s *SSEReader) grow(need int) []byte {
	next := max(2*cap(s.data), 4<<10)
	if need > 4<<10 && cap(s.data) < s.hint {
		// As large as the event Detach gave away, and an eighth more: the
		// pages of one listing differ in size by a few percent, and a
		// page a little larger than the last one would otherwise be read
		// through a second array twice that size.
		next = s.hint + s.hint/8
	}
	c := max(need, min(next, int(min(s.lim.MaxBytes, math.MaxInt32))))
	if testHookSSEGrow != nil {
		testHookSSEGrow(c)
	}
	g := make([]byte, len(s.data), c)
	copy(g, s.data)
	return g
}

func (s *SSEReader) consume(n int) error {
	s.n += int64(n)
	if s.n > s.lim.MaxBytes {
		return &LimitError{Limit: LimitBytes, Max: s.lim.MaxBytes}
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

// SSEWriter writes a text/event-stream. Events, comments and raw bytes
// are buffered until Flush, which writes them in one Write and flushes w
// when it can (an http.ResponseWriter through http.ResponseController, or
// anything with a Flush method).
type SSEWriter struct {
	w   io.Writer
	buf []byte
}

// NewSSEWriter returns a writer to w. It writes no header: an HTTP handler
// sets Content-Type text/event-stream (and, for proxies, Cache-Control
// no-cache and X-Accel-Buffering no) itself.
func NewSSEWriter(w io.Writer) *SSEWriter { return &SSEWriter{w: w} }

// Event buffers one event: an event: line when Type is set, an id: line
// when ID is, a retry: line (milliseconds) when Retry is positive, then
// the data, and the blank line that dispatches it. CR and LF in Type and
// ID are dropped (they would end the field).
//
// Data that is valid JSON is compacted first and goes on one data: line:
// the whitespace between its tokens (line breaks included, which a
// pretty-printed message carries) is dropped and nothing else changes — not
// a byte inside a string, not a number's spelling, not member order — so
// the message's canonical form, and any digest of it, is unchanged. Other
// data is split at its line breaks (LF, CR, CRLF) into one data: line
// each, which a reader joins back with LF. Empty data is one empty data:
// line (a priming event, when it has an ID).
func (sw *SSEWriter) Event(ev Event) {
	if ev.Type != "" {
		sw.buf = appendField(append(sw.buf, "event: "...), ev.Type)
	}
	if ev.ID != "" {
		sw.buf = appendField(append(sw.buf, "id: "...), ev.ID)
	}
	if ev.Retry > 0 {
		sw.buf = strconv.AppendInt(append(sw.buf, "retry: "...), ev.Retry.Milliseconds(), 10)
		sw.buf = append(sw.buf, '\n')
	}
	data := ev.Data
	if c, ok := compactJSON(data); ok {
		data = c
	}
	sw.buf = appendLines(sw.buf, "data: ", data)
	sw.buf = append(sw.buf, '\n')
}

// Comment buffers a comment (one ": " line per line of text) and a blank
// line, as keep-alives are written.
func (sw *SSEWriter) Comment(text string) {
	sw.buf = appendLines(sw.buf, ": ", []byte(text))
	sw.buf = append(sw.buf, '\n')
}

// Raw buffers b as it is: for a stream that must carry bytes no event
// shape gives (a test server's hostile streams, an event written in parts).
func (sw *SSEWriter) Raw(b []byte) { sw.buf = append(sw.buf, b...) }

// Buffered returns the number of bytes buffered.
func (sw *SSEWriter) Buffered() int { return len(sw.buf) }

// Flush writes what is buffered and flushes w when it can. The error is
// the write's: a failed flush shows in the next write.
func (sw *SSEWriter) Flush() error {
	if len(sw.buf) > 0 {
		if _, err := sw.w.Write(sw.buf); err != nil {
			return err
		}
		sw.buf = sw.buf[:0]
	}
	switch f := sw.w.(type) {
	case http.ResponseWriter:
		_ = http.NewResponseController(f).Flush()
	case interface{ Flush() error }:
		_ = f.Flush()
	case interface{ Flush() }:
		f.Flush()
	}
	return nil
}

// appendField appends a field value without CR and LF, and the LF that
// ends the field.
func appendField(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\r' && c != '\n' {
			b = append(b, c)
		}
	}
	return append(b, '\n')
}

// appendLines appends one prefixed line per line of data (split at LF, CR
// and CRLF).
func appendLines(b []byte, prefix string, data []byte) []byte {
	for {
		i := indexEOL(data)
		b = append(b, prefix...)
		if i < 0 {
			b = append(b, data...)
			return append(b, '\n')
		}
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

// compactJSON drops the insignificant whitespace of valid JSON (and only
// that: encoding/json.Compact escapes nothing); ok is false for invalid
// JSON. Data without whitespace outside its strings, and without a line
// break anywhere, is returned as it is, valid or not: compacting valid
// JSON would not change it, and invalid JSON would be written as it is,
// on its one line.
func compactJSON(b []byte) ([]byte, bool) {
	if !spaceOutsideStrings(b) {
		return b, true
	}
	var out bytes.Buffer
	out.Grow(len(b))
	if err := json.Compact(&out, b); err != nil {
		return nil, false
	}
	return out.Bytes(), true
}

// spaceOutsideStrings reports whether b has a line break anywhere, or a
// space or tab outside what reads as its JSON strings: what compacting
// could drop (the whitespace inside a valid string is part of its value).
func spaceOutsideStrings(b []byte) bool {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '\n' || c == '\r':
			return true
		case inString && c == '\\':
			if i+1 < len(b) && (b[i+1] == '\n' || b[i+1] == '\r') {
				return true
			}
			i++ // the escaped byte, a quote among them
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t'):
			return true
		}
	}
	return false
}

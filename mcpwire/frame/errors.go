package frame

import (
	"errors"
	"fmt"
	"strconv"
)

// Limit names the bound a reader reached.
type Limit uint8

// The bounds of the readers.
const (
	// LimitBytes: the bytes an SSEReader read, in all or (PerEvent) for one
	// event.
	LimitBytes Limit = iota + 1
	// LimitLine: the length of one line (SSE or stdio).
	LimitLine
	// LimitEvents: the SSE blocks (events, data-less blocks included) read,
	// in all or (PerEvent) before one event.
	LimitEvents
)

func (l Limit) String() string {
	switch l {
	case LimitBytes:
		return "bytes"
	case LimitLine:
		return "line length"
	case LimitEvents:
		return "events"
	}
	return "limit " + strconv.Itoa(int(l))
}

// LimitError reports that a reader reached one of its bounds. The reader
// stops there: what it has not read is left unread.
type LimitError struct {
	Limit Limit
	Max   int64
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case LimitBytes:
		return fmt.Sprintf("frame: more than %d bytes", e.Max)
	case LimitLine:
		return fmt.Sprintf("frame: a line longer than %d bytes", e.Max)
	case LimitEvents:
		return fmt.Sprintf("frame: more than %d events", e.Max)
	}
	return fmt.Sprintf("frame: %s: more than %d", e.Limit, e.Max)
}

// Error is a JSON-RPC error to answer with, and the HTTP status to answer
// it with (0: the caller chooses, usually by the era).
type Error struct {
	Status  int
	Code    int
	Message string
	Data    []byte // raw JSON; optional
	// Reason is a reason code a caller may put in the answer's data (""
	// for a plain framing error).
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(status, code int, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// IsLineTooLong reports whether err is a line beyond a reader's bound.
func IsLineTooLong(err error) bool {
	var le *LimitError
	return errors.As(err, &le) && le.Limit == LimitLine
}

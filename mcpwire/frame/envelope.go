package frame

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// Kind is what a JSON-RPC message is.
type Kind uint8

// The kinds of message.
const (
	Invalid       Kind = iota // not a JSON-RPC 2.0 message (or not yet known to be one)
	Request                   // a method and an id
	Notification              // a method and no id
	Response                  // a result and an id
	ErrorResponse             // an error (with an id, or a null or absent one)
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Response:
		return "response"
	case ErrorResponse:
		return "error response"
	}
	return "invalid"
}

// IsResponse reports whether k is a response, a result or an error.
func (k Kind) IsResponse() bool { return k == Response || k == ErrorResponse }

// Message is one JSON-RPC message as received. Its jcs.Values are spans of
// the received bytes (Value.Raw), never re-encoded; the zero Value stands
// for an absent member.
type Message struct {
	Raw    []byte    // the message, JSON whitespace around it trimmed
	Root   jcs.Value // the parsed message
	Kind   Kind
	Method string    // requests and notifications
	ID     jcs.Value // as sent: a string, a number, or null (error responses)
	Params jcs.Value
	Result jcs.Value
	Error  jcs.Value
	Code   int // error responses: error.code
}

// IDRaw returns the id's bytes as received, or nil when there is none.
func (m *Message) IDRaw() []byte {
	if !m.ID.Valid() {
		return nil
	}
	return m.ID.Raw()
}

// IDInt returns the id when it is an integral number.
func (m *Message) IDInt() (int64, bool) { return Int64(m.ID) }

// Param returns params[key] when params is an object that has it.
func (m *Message) Param(key string) (jcs.Value, bool) {
	if !m.Params.Valid() || m.Params.Kind() != jcs.Object {
		return jcs.Value{}, false
	}
	return m.Params.Get(key)
}

// Meta returns params._meta when it is an object.
func (m *Message) Meta() (jcs.Value, bool) {
	v, ok := m.Param("_meta")
	if !ok || v.Kind() != jcs.Object {
		return jcs.Value{}, false
	}
	return v, true
}

// ErrorMessage returns error.message when it is a string.
func (m *Message) ErrorMessage() string {
	if !m.Error.Valid() {
		return ""
	}
	if v, ok := m.Error.Get("message"); ok && v.Kind() == jcs.String {
		return v.Str()
	}
	return ""
}

// ErrorData returns error.data (the zero Value when absent).
func (m *Message) ErrorData() jcs.Value {
	if !m.Error.Valid() {
		return jcs.Value{}
	}
	v, _ := m.Error.Get("data")
	return v
}

// Int64 returns an integral JSON number as int64: written as an integer,
// or with a fraction or exponent whose value is integral (1.0, 1e0).
func Int64(v jcs.Value) (int64, bool) {
	if !v.Valid() || v.Kind() != jcs.Number {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(v.Raw()), 10, 64); err == nil {
		return n, true
	}
	f := v.Float()
	if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// Parse parses one JSON text strictly and classifies it as a JSON-RPC 2.0
// message by the rules FromServer applies. It fails only when b is not
// strict JSON (the *jcs.Error, offsets in b); anything else, a batch
// array included, is a Message whose Kind says what it is (Invalid when it
// is not one JSON-RPC message). b is retained, not copied.
func Parse(b []byte) (*Message, error) {
	doc, err := jcs.Parse(b)
	if err != nil {
		return nil, err
	}
	m := &Message{Root: doc.Root()}
	m.Raw = m.Root.Raw()
	m.classify()
	return m, nil
}

// ParseBatch parses one JSON text strictly: a JSON array is a batch (the
// 2025-03-26 revision's; later ones have none) and gives one Message per
// element, each classified as Parse does, its Raw the element's bytes; an
// empty array is an error. Any other text gives one Message, and batch is
// false.
func ParseBatch(b []byte) (msgs []*Message, batch bool, err error) {
	doc, err := jcs.Parse(b)
	if err != nil {
		return nil, false, err
	}
	root := doc.Root()
	if root.Kind() != jcs.Array {
		m := &Message{Root: root, Raw: root.Raw()}
		m.classify()
		return []*Message{m}, false, nil
	}
	if root.Len() == 0 {
		return nil, true, errors.New("an empty JSON-RPC batch")
	}
	msgs = make([]*Message, root.Len())
	for i := range msgs {
		e := root.Index(i)
		m := &Message{Root: e, Raw: e.Raw()}
		m.classify()
		msgs[i] = m
	}
	return msgs, true, nil
}

// FromServer parses one JSON-RPC message as an observing client accepts
// it from a server: JSON whitespace around it is trimmed (Raw is the rest,
// and what jcs parses); it must be one strict JSON object (a batch is
// refused before parsing), with "jsonrpc": "2.0" and an id, when present,
// that is a string, a number (any spelling: 1, 1.0 and 1e0 are one id) or
// null. With a string method it is a request, or a notification when its
// id is absent or null (such a message can be answered by nothing).
// Otherwise it is a response with exactly one of result and error: a
// result needs a non-null id; an error is an object whose code is a
// 32-bit integer (its id may be null or absent: the request's id could not
// be read). The error is a message for people, already escaped.
func FromServer(b []byte) (*Message, error) {
	b = TrimSpace(b)
	if len(b) == 0 {
		return nil, errors.New("an empty body where a JSON-RPC message was expected")
	}
	if b[0] == '[' {
		return nil, errors.New("a JSON array (a batch) where a single JSON-RPC message was expected")
	}
	doc, err := jcs.Parse(b)
	if err != nil {
		return nil, errors.New("not strict JSON: " + safetext.Inert(safetext.ClipEscaped(err.Error(), 300)))
	}
	m := &Message{Raw: b, Root: doc.Root()}
	if problem := m.classify(); problem != "" {
		return nil, errors.New(problem)
	}
	return m, nil
}

// classify sets Kind and the members by FromServer's rules, and returns
// the first rule broken ("" for none).
func (m *Message) classify() string {
	root := m.Root
	if root.Kind() != jcs.Object {
		return "a JSON " + root.Kind().String() + " where a JSON-RPC message (an object) was expected"
	}
	if v, ok := root.Get("jsonrpc"); !ok || !v.StrEqual("2.0") {
		return `not a JSON-RPC 2.0 message ("jsonrpc" is not "2.0")`
	}
	id, hasID := root.Get("id")
	if hasID {
		if k := id.Kind(); k != jcs.String && k != jcs.Number && k != jcs.Null {
			return "the message id is a JSON " + k.String()
		}
	}
	params, _ := root.Get("params")
	if mv, ok := root.Get("method"); ok {
		if mv.Kind() != jcs.String {
			return "the message method is not a string"
		}
		m.Method, m.Params = mv.Str(), params
		if hasID && id.Kind() != jcs.Null {
			m.ID, m.Kind = id, Request
		} else {
			m.Kind = Notification
		}
		return ""
	}
	res, hasRes := root.Get("result")
	ev, hasErr := root.Get("error")
	switch {
	case hasRes && hasErr:
		return `a response with both "result" and "error"`
	case !hasRes && !hasErr:
		return `a message with neither "method", "result" nor "error"`
	case hasRes:
		if !hasID || id.Kind() == jcs.Null {
			return "a result without an id"
		}
		m.ID, m.Result, m.Kind = id, res, Response
		return ""
	}
	if ev.Kind() != jcs.Object {
		return `"error" is not an object`
	}
	cv, ok := ev.Get("code")
	if !ok || cv.Kind() != jcs.Number {
		return "an error without a numeric code"
	}
	code, ok := Int64(cv)
	if !ok || code < math.MinInt32 || code > math.MaxInt32 {
		return "an error code that is not a 32-bit integer"
	}
	if hasID {
		m.ID = id
	}
	m.Error, m.Code, m.Kind = ev, int(code), ErrorResponse
	return ""
}

// FromClient parses one JSON-RPC message as a strict MCP server accepts it
// from a client. The rules, in the order they are checked (the first
// broken one is the error, with HTTP status 400):
//
//   - strict JSON (-32700 "Parse error"; offsets in b, which may carry JSON
//     whitespace around the message);
//   - not a batch, an object (-32600);
//   - an id, when present, is a string or an integer written as one, never
//     null (-32600);
//   - "jsonrpc" is "2.0"; a method, when present, is a non-empty string; a
//     message is a request, a notification or a response, never two, and
//     a response has exactly one of result and error, and an id (-32600);
//   - params, when present, is an object (-32602 for an array, -32600 for
//     anything else);
//   - it means one thing to every decoder in common use (ambiguity: no two
//     member names that a case-insensitive decoder takes for one, no
//     case variant of a name the specification gives, a method in
//     printable ASCII; -32600, or -32602 inside params; Reason
//     ReasonAmbiguous).
//
// With an error, m is nil for the first two rules; otherwise it holds what
// was read before the rule that failed — its ID (nil when the id was
// invalid, so the answer carries null), and its Method and Kind once the
// method was read — for the error answer and a log.
func FromClient(b []byte) (*Message, *Error) {
	doc, err := jcs.Parse(b)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, mcpwire.CodeParseError, "Parse error: %s", safetext.Clip(err.Error(), 200))
	}
	root := doc.Root()
	if root.Kind() == jcs.Array {
		return nil, Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not accepted")
	}
	if root.Kind() != jcs.Object {
		return nil, Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: a JSON-RPC message must be an object")
	}
	m := &Message{Root: root, Raw: root.Raw()}
	bad := func(format string, args ...any) (*Message, *Error) {
		return m, Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: "+format, args...)
	}
	if v, ok := root.Get("id"); ok {
		switch {
		case v.Kind() == jcs.String:
			m.ID = v
		case v.Kind() == jcs.Number && isIntegerLiteral(v.Raw()):
			m.ID = v
		case v.Kind() == jcs.Null:
			return bad("id must not be null")
		default:
			return bad("id must be a string or an integer")
		}
	}
	if v, ok := root.Get("jsonrpc"); !ok || !v.StrEqual("2.0") {
		return bad(`"jsonrpc" must be "2.0"`)
	}
	hasMethod := false
	if v, ok := root.Get("method"); ok {
		if v.Kind() != jcs.String || v.Str() == "" {
			return bad("method must be a non-empty string")
		}
		m.Method, hasMethod = v.Str(), true
		m.Kind = Notification
		if m.ID.Valid() {
			m.Kind = Request
		}
	}
	res, hasResult := root.Get("result")
	ev, hasError := root.Get("error")
	switch {
	case hasMethod && (hasResult || hasError):
		return bad("a message cannot be both a request and a response")
	case !hasMethod && !hasResult && !hasError:
		return bad("no method, result or error")
	case !hasMethod:
		if hasResult == hasError {
			return bad("a response has exactly one of result and error")
		}
		if !m.ID.Valid() {
			return bad("a response needs an id")
		}
		m.Kind, m.Result, m.Error = Response, res, ev
		if hasError {
			m.Kind = ErrorResponse
			if cv, ok := ev.Get("code"); ok {
				if c, ok := Int64(cv); ok && c >= math.MinInt32 && c <= math.MaxInt32 {
					m.Code = int(c)
				}
			}
		}
	}
	if v, ok := root.Get("params"); ok {
		switch v.Kind() {
		case jcs.Object:
			m.Params = v
		case jcs.Array:
			return m, Errorf(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: MCP params must be an object")
		default:
			return bad("params must be a structured value")
		}
	}
	if e := m.ambiguity(); e != nil {
		return m, e
	}
	return m, nil
}

func isIntegerLiteral(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// AppendResult appends the response {"jsonrpc":"2.0","id":ID,"result":R}:
// id and result are raw JSON, written as they are.
func AppendResult(dst, id, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends the error response to the request with id (raw
// JSON; nil writes null, for a request whose id could not be read): code,
// message and, when e has it, data (raw JSON).
func AppendError(dst, id []byte, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
	if len(e.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, "}}"...)
}

// AppendNotification appends {"jsonrpc":"2.0","method":M,"params":P}
// (params raw JSON).
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = appendString(dst, method)
	dst = append(dst, `,"params":`...)
	dst = append(dst, params...)
	return append(dst, '}')
}

// appendString appends s as a JSON string the way encoding/json writes it
// (invalid UTF-8 replaced, <, > and & escaped).
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

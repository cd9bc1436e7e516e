package mcpclient

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/safetext"
)

// maxQuote is the most server-controlled text an error message quotes.
const maxQuote = 200

// quote is the one way server-controlled text enters a message: clipped to
// maxQuote bytes, escaped and quoted.
func quote(s string) string { return safetext.Quote(safetext.Clip(s, maxQuote)) }

// ProtocolError is a JSON-RPC error response from the server.
//
// Code -32022 (mcpwire.CodeUnsupportedProtocolVersion) means the server
// refused the protocol revision: no tool list was obtained, and the caller
// reports MCP-DRIFT-PROTOCOL-UNSUPPORTED (see IsProtocolUnsupported).
type ProtocolError struct {
	Method     string // the request the error answered
	Code       int
	Message    string // server-controlled, clipped; escape before printing
	HTTPStatus int    // 0 on stdio
	// Supported and Requested are data.supported and data.requested of a
	// -32022 error (server-controlled, bounded).
	Supported []string
	Requested string
}

func (e *ProtocolError) Error() string {
	var b strings.Builder
	b.WriteString("mcpclient: the server answered ")
	b.WriteString(e.Method)
	b.WriteString(" with JSON-RPC error ")
	b.WriteString(strconv.Itoa(e.Code))
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.HTTPStatus)
	}
	b.WriteString(": ")
	b.WriteString(quote(e.Message))
	if e.Code == mcpwire.CodeUnsupportedProtocolVersion && len(e.Supported) > 0 {
		b.WriteString("; it supports ")
		b.WriteString(quote(strings.Join(e.Supported, ", ")))
	}
	return b.String()
}

// HTTPError is an HTTP status that carries no usable JSON-RPC answer
// (401 and 403 always end up here, whatever their body).
type HTTPError struct {
	Method string
	Status int
	// WWWAuthenticate is the WWW-Authenticate header (all values joined with
	// ", ", clipped to 4 KiB); "" when the server sent none.
	// Server-controlled: escape before printing.
	WWWAuthenticate string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("mcpclient: %s: HTTP %d", e.Method, e.Status)
	switch {
	case e.WWWAuthenticate != "":
		msg += " with WWW-Authenticate " + quote(e.WWWAuthenticate)
	case e.Status == 401 || e.Status == 403:
		msg += " without WWW-Authenticate"
	}
	return msg
}

// LimitKind names the bound a LimitError hit.
type LimitKind string

// The bounds.
const (
	LimitResponseBytes LimitKind = "response-bytes"  // Config.MaxResponseBytes (a body, an SSE stream or a stdio line)
	LimitSSEEvents     LimitKind = "sse-events"      // Config.MaxSSEEvents
	LimitRequestTime   LimitKind = "request-timeout" // Config.RequestTimeout
	LimitStartupTime   LimitKind = "startup-timeout" // Config.StartupTimeout (stdio)
	LimitNoise         LimitKind = "stdout-noise"    // stdio: too many non-JSON lines
	LimitListBytes     LimitKind = "list-bytes"      // Config.MaxListBytes (all tools/list responses)
	LimitListTools     LimitKind = "list-tools"      // Config.MaxListTools (all tools/list pages)
	LimitListEntries   LimitKind = "list-entries"    // Config.MaxListTools, for a surface list (all its pages)
)

// LimitError is a configured bound that the exchange exceeded.
type LimitError struct {
	Method string
	Kind   LimitKind
	Max    int64 // bytes, events, lines, or milliseconds for the timeouts
}

func (e *LimitError) Error() string {
	switch e.Kind {
	case LimitRequestTime, LimitStartupTime:
		return fmt.Sprintf("mcpclient: %s: no answer within %s (%s)", e.Method, time.Duration(e.Max)*time.Millisecond, e.Kind)
	case LimitSSEEvents:
		return fmt.Sprintf("mcpclient: %s: the response stream exceeded %d events", e.Method, e.Max)
	case LimitNoise:
		return fmt.Sprintf("mcpclient: %s: the server wrote more than %d lines that are not JSON-RPC messages", e.Method, e.Max)
	case LimitListBytes:
		return fmt.Sprintf("mcpclient: %s: the listing exceeded %d bytes in all (%s), so it was not read further", e.Method, e.Max, e.Kind)
	case LimitListTools:
		return fmt.Sprintf("mcpclient: %s: the listing exceeded %d tools in all (%s), so it was not read further", e.Method, e.Max, e.Kind)
	case LimitListEntries:
		return fmt.Sprintf("mcpclient: %s: the listing exceeded %d entries in all (%s), so it was not read further", e.Method, e.Max, e.Kind)
	}
	return fmt.Sprintf("mcpclient: %s: the response exceeded %d bytes", e.Method, e.Max)
}

// UnreachableError means no MCP exchange could take place: connection
// refused, DNS, TLS, a child process that could not start or went away.
type UnreachableError struct {
	Target string // the URL, or argv[0] for stdio
	Err    error
}

func (e *UnreachableError) Error() string {
	return "mcpclient: cannot reach " + safetext.Quote(safetext.Clip(e.Target, 400)) + ": " + mcpwire.ErrorText(e.Err, 400)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// RedirectError is a redirect the client refused: to another origin
// (scheme, host and port), one that changes the request method, or more
// than five in a row.
type RedirectError struct {
	Status   int
	Location string // server-controlled; escape before printing
	Reason   string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("mcpclient: refused HTTP %d redirect to %s: %s", e.Status, quote(e.Location), e.Reason)
}

// ResponseError is an answer that is not a valid JSON-RPC response to the
// request: not JSON, not strict JSON, a batch, a response with another id,
// a result of the wrong shape, a stream that ended without the response.
type ResponseError struct {
	Method     string
	HTTPStatus int // 0 on stdio
	Reason     string
}

func (e *ResponseError) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("mcpclient: %s (HTTP %d): %s", e.Method, e.HTTPStatus, e.Reason)
	}
	return fmt.Sprintf("mcpclient: %s: %s", e.Method, e.Reason)
}

// VersionError is a legacy server that answered initialize with a protocol
// revision this client does not speak. Like -32022, it means no tool list
// was obtained for a protocol reason (IsProtocolUnsupported).
type VersionError struct {
	Requested string
	Answered  string // server-controlled, clipped
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("mcpclient: initialize asked for %s and the server answered protocolVersion %s, which this client does not speak", e.Requested, quote(e.Answered))
}

// ConfigError is an invalid Config; nothing was sent.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return "mcpclient: invalid config: " + e.Msg }

// IsProtocolUnsupported reports whether err means the server and this
// client share no protocol revision (-32022, or a legacy initialize answer
// naming a revision this client does not speak).
func IsProtocolUnsupported(err error) bool {
	var pe *ProtocolError
	if errors.As(err, &pe) && pe.Code == mcpwire.CodeUnsupportedProtocolVersion {
		return true
	}
	var ve *VersionError
	return errors.As(err, &ve)
}

// IsUnreachable reports whether err means the server could not be talked to
// at all.
func IsUnreachable(err error) bool {
	var ue *UnreachableError
	return errors.As(err, &ue)
}

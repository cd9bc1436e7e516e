// Package mcptrace is the tracing seam of mcpdrift's MCP code: the span
// attribute keys of the OpenTelemetry MCP conventions (defined here once,
// because the Go semconv module dropped them), the W3C trace context that
// travels in params._meta (traceparent, tracestate), and the small
// interface (Tracer, Span) through which mcpclient and the gateway start
// one span per MCP request.
//
// It imports no OpenTelemetry module: package telemetry, the only importer
// of the OTel SDK and its OTLP/HTTP exporter, implements Tracer. Code that
// is given no Tracer (nil) sends exactly what it sent without tracing.
//
// What a span may carry is decided here and in telemetry, never by the
// caller: method names, JSON-RPC ids and error codes, the tool name
// (escaped with safetext.EscapeASCII, clipped), the protocol version, the
// digest of the session id, the transport, the server's host and port.
// Never tool arguments, results, header values or descriptions: Request
// and Outcome have no field that could hold them.
package mcptrace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Attribute keys of the OpenTelemetry MCP conventions (the last in-tree
// version of the GenAI MCP conventions; see docs/architecture.md).
const (
	KeyMethodName         = "mcp.method.name"
	KeyErrorType          = "error.type"
	KeyToolName           = "gen_ai.tool.name"
	KeyRequestID          = "jsonrpc.request.id"
	KeyResponseStatusCode = "rpc.response.status_code"
	KeyOperationName      = "gen_ai.operation.name"
	KeyProtocolVersion    = "mcp.protocol.version"
	KeySessionID          = "mcp.session.id"
	KeyNetworkTransport   = "network.transport"
	KeyServerAddress      = "server.address"
	KeyServerPort         = "server.port"
	// KeyHTTPStatusCode is the stable HTTP convention's key, set when an
	// HTTP exchange answered with a status.
	KeyHTTPStatusCode = "http.response.status_code"

	// mcpdrift's own keys.
	KeyConnection      = "mcpdrift.connection"          // primary, second, anonymous, cloak
	KeyListPages       = "mcpdrift.tools_list.pages"    // the pages a listing read
	KeyListComplete    = "mcpdrift.tools_list.complete" // the listing ended without nextCursor
	KeyContextDropped  = "mcpdrift.trace_context.dropped"
	KeyGatewayMode     = "mcpdrift.proxy.mode"
	KeyGatewayDecision = "mcpdrift.proxy.decision" // of a SERVER span: allow, deny, audit_allow, audit_would_deny, audit_unjudged
	KeyGatewayReason   = "mcpdrift.proxy.reason"   // the decision's reason code (decide's, or observe_mode)
	KeyCommand         = "mcpdrift.command"
)

// Values.
const (
	OperationExecuteTool = "execute_tool" // gen_ai.operation.name of tools/call
	ErrorToolError       = "tool_error"   // error.type of a result with isError: true
	TransportPipe        = "pipe"         // network.transport of stdio
	TransportTCP         = "tcp"          // network.transport of HTTP
)

// Meta keys of the trace context in params._meta (reserved by the
// 2026-07-28 specification).
const (
	MetaTraceParent = "traceparent"
	MetaTraceState  = "tracestate"
)

// Kind is a span's kind.
type Kind uint8

// The kinds mcpdrift makes.
const (
	Internal Kind = iota // a run, a connection, a whole listing
	Client               // one request sent
	Server               // one request the gateway received
)

// Attr is one extra attribute of mcpdrift's own (KeyConnection, ...).
type Attr struct {
	Key  string
	Str  string
	Int  int64
	Bool bool
	Type AttrType
}

// AttrType says which field of an Attr holds its value.
type AttrType uint8

// Attribute types.
const (
	TypeString AttrType = iota
	TypeInt
	TypeBool
)

// String, Int and Bool make attributes.
func String(k, v string) Attr    { return Attr{Key: k, Str: v, Type: TypeString} }
func Int(k string, v int64) Attr { return Attr{Key: k, Int: v, Type: TypeInt} }
func Bool(k string, v bool) Attr { return Attr{Key: k, Bool: v, Type: TypeBool} }

// Request describes the span to start. The span's name is Name when set,
// else "{Method} {Target}" (or Method alone without a target), as the MCP
// conventions name spans.
type Request struct {
	Kind   Kind
	Name   string // for Internal spans
	Method string // mcp.method.name
	// Target is the tool name of tools/call (gen_ai.tool.name), or the
	// prompt name of prompts/get; raw here, escaped by TargetText.
	Target string
	// ID is the JSON-RPC id as sent (a number's text, or a string's JSON
	// text); "" for a notification.
	ID              string
	Transport       string // TransportPipe or TransportTCP; "" unknown
	ServerAddress   string
	ServerPort      int
	ProtocolVersion string
	SessionID       string // raw; the tracer records its digest (SessionText)
	// Parent, when valid, is the remote parent (a downstream client's
	// traceparent); otherwise the span is a child of the span in ctx.
	Parent SpanContext
	Attrs  []Attr
}

// Outcome is how a request ended.
type Outcome struct {
	// HTTPStatus is the HTTP status of the exchange (0: none, stdio).
	HTTPStatus int
	// RPCCode is the JSON-RPC error code when the answer was an error
	// response (HasRPCCode set).
	RPCCode    int
	HasRPCCode bool
	// ToolError: a tools/call result with isError: true.
	ToolError bool
	// Failure is a short fixed class for an exchange that got no JSON-RPC
	// answer ("timeout", "unreachable", "http_401", ...); it must never
	// hold server-controlled text.
	Failure         string
	ProtocolVersion string // learnt from the answer (initialize)
	SessionID       string // learnt from the answer (raw; recorded as its digest)
	Attrs           []Attr
}

// ErrorType is the error.type of an outcome: the JSON-RPC code as a
// string, tool_error, or the failure class ("" when the request succeeded).
func (o Outcome) ErrorType() string {
	switch {
	case o.HasRPCCode:
		return strconv.Itoa(o.RPCCode)
	case o.ToolError:
		return ErrorToolError
	}
	return o.Failure
}

// Tracer starts spans. A nil Tracer traces nothing.
type Tracer interface {
	// Start starts a span, a child of the span in ctx unless r.Parent is
	// valid, and returns a context that carries it.
	Start(ctx context.Context, r Request) (context.Context, Span)
}

// Span is one started span.
type Span interface {
	// Context is the span's own trace context: what goes into the
	// request's params._meta. It is the zero SpanContext when the span has
	// none to give.
	Context() SpanContext
	// End ends the span with the outcome of its request.
	End(o Outcome)
}

// Ref names one exported span: what a finding carries as trace_id and
// span_id. The zero Ref names none.
type Ref struct {
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
}

// IsZero reports whether r names no span.
func (r Ref) IsZero() bool { return r.TraceID == "" || r.SpanID == "" }

// RefOf is the Ref of a span: its ids when it is sampled (only sampled
// spans are exported), else the zero Ref — an id that resolves to
// nothing is never handed out.
func RefOf(s Span) Ref {
	if s == nil {
		return Ref{}
	}
	sc := s.Context()
	if !sc.Valid() || !sc.Sampled() {
		return Ref{}
	}
	return Ref{TraceID: sc.TraceIDString(), SpanID: sc.SpanIDString()}
}

// SpanName is the name a span of r gets.
func SpanName(r Request) string {
	if r.Name != "" {
		return r.Name
	}
	if t := TargetText(r.Target); t != "" {
		return MethodText(r.Method) + " " + t
	}
	return MethodText(r.Method)
}

// maxTargetLen bounds a name in a span.
const (
	maxTargetLen = 128
)

// TargetText is a tool or prompt name as a span shows it: clipped and
// escaped with safetext.EscapeASCII, the project's one escaping of names
// (a look-alike never passes for the ASCII name it imitates).
func TargetText(name string) string {
	if name == "" {
		return ""
	}
	return safetext.EscapeASCII(safetext.Clip(name, maxTargetLen))
}

// SessionText is a session id as a span shows it: a digest, not the id
// ("sha256:" and 16 hex digits). A legacy session id lets whoever holds it
// send requests in the session, so it is never handed to a tracing
// backend; its digest still ties a session's spans together.
func SessionText(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// MethodText is a method name as a span shows it. The gateway's
// downstream chooses it, so it is clipped and escaped too.
func MethodText(m string) string {
	return safetext.EscapeASCII(safetext.Clip(m, 128))
}

package mcpclient

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

// Method names.
const (
	methodDiscover    = "server/discover"
	methodInitialize  = "initialize"
	methodInitialized = "notifications/initialized"
	methodToolsList   = "tools/list"
	methodToolsCall   = "tools/call"
	methodPing        = "ping"
)

// rpcRequest is a request or notification as sent: Body holds the exact
// bytes, from which everything else (headers, transcript) is derived.
type rpcRequest struct {
	ID     int64 // 0 for a notification
	Method string
	Body   []byte
}

type wireRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// newRequest encodes a request (id > 0) or a notification (id == 0).
func newRequest(id int64, method string, params any) *rpcRequest {
	body, err := json.Marshal(wireRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		// Params are built here from strings and maps; this cannot fail.
		panic("mcpclient: encoding a request: " + err.Error())
	}
	return &rpcRequest{ID: id, Method: method, Body: body}
}

// implementation is an MCP Implementation object (clientInfo).
type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// requestMeta is the per-request _meta of the modern era; caps is the
// canonical ClientCapabilities object.
func requestMeta(rev string, client implementation, caps []byte) map[string]any {
	return map[string]any{
		mcpwire.MetaProtocolVersion:    rev,
		mcpwire.MetaClientCapabilities: json.RawMessage(caps),
		mcpwire.MetaClientInfo:         client,
	}
}

// maxRefusals bounds the server requests a run answers (HTTP transports;
// stdio has its own bound).
const maxRefusals = 100

// refusal is the answer to a server→client request: ping gets {} (it asks
// for nothing), everything else — sampling/createMessage,
// elicitation/create, roots/list included, whatever capabilities the run
// declared — a JSON-RPC error. The observer declares capabilities so that
// the server lists what it lists to such clients; it never produces
// content for the server.
func refusal(req *message) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), req.id.Raw()...)
	if req.method == methodPing {
		return append(b, `,"result":{}}`...)
	}
	return append(b, `,"error":{"code":-32601,"message":"Method not found: mcpdrift observes tools/list and answers no server requests"}}`...)
}

// requestHeaders derives the MCP request headers from the body about to be
// sent — the one place where headers and body are tied, so they cannot
// disagree:
//
//   - Mcp-Method is the body's method;
//   - Mcp-Protocol-Version is params._meta's protocolVersion when the body
//     has one (modern), else sessionVersion (the negotiated legacy version,
//     "" before initialize or for 2025-03-26, when it is not sent);
//   - Mcp-Name is params.name (tools/call, prompts/get) or params.uri
//     (resources/read), encoded with mcpwire.EncodeHeaderValue.
func requestHeaders(body []byte, sessionVersion string) (http.Header, error) {
	doc, err := jcs.Parse(body)
	if err != nil {
		return nil, err
	}
	root := doc.Root()
	mv, ok := root.Get("method")
	if !ok {
		// A response (the refusal of a server request, legacy sessions
		// only): no Mcp-Method, the session's version.
		_, res := root.Get("result")
		_, er := root.Get("error")
		if !res && !er {
			return nil, errors.New("a body that is neither a request nor a response")
		}
		h := http.Header{}
		if sessionVersion != "" {
			h.Set(mcpwire.HeaderProtocolVersion, sessionVersion)
		}
		return h, nil
	}
	if mv.Kind() != jcs.String {
		return nil, errors.New("request body without a method")
	}
	method := mv.Str()
	h := make(http.Header, 3)
	h.Set(mcpwire.HeaderMethod, method)
	version := sessionVersion
	if params, ok := root.Get("params"); ok && params.Kind() == jcs.Object {
		if meta, ok := params.Get("_meta"); ok {
			if v, ok := meta.Get(mcpwire.MetaProtocolVersion); ok && v.Kind() == jcs.String {
				version = v.Str()
			}
		}
		nameKey := ""
		switch method {
		case "tools/call", "prompts/get":
			nameKey = "name"
		case "resources/read":
			nameKey = "uri"
		}
		if nameKey != "" {
			if n, ok := params.Get(nameKey); ok && n.Kind() == jcs.String {
				h.Set(mcpwire.HeaderName, mcpwire.EncodeHeaderValue(n.Str()))
			}
		}
	}
	if version != "" {
		h.Set(mcpwire.HeaderProtocolVersion, version)
	}
	return h, nil
}

type msgKind uint8

const (
	kindResponse msgKind = iota + 1
	kindRequest
	kindNotification
)

// message is one JSON-RPC message as received, parsed strictly (the same
// parser manifest uses, so what steers the client — ids, nextCursor — is
// what the manifest will read).
type message struct {
	raw    []byte // the message exactly as received, surrounding whitespace trimmed
	doc    *jcs.Doc
	kind   msgKind
	method string    // requests and notifications
	id     jcs.Value // requests and responses; invalid or null for some error responses
	result jcs.Value // success responses
	isErr  bool
	code   int
	errMsg string
	data   jcs.Value
}

func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// parseMessage parses one JSON-RPC message. Errors are messages for people,
// already escaped.
func parseMessage(raw []byte) (*message, error) {
	raw = trimJSONSpace(raw)
	if len(raw) == 0 {
		return nil, errors.New("an empty body where a JSON-RPC message was expected")
	}
	if raw[0] == '[' {
		return nil, errors.New("a JSON array (a batch) where a single JSON-RPC message was expected")
	}
	doc, err := jcs.Parse(raw)
	if err != nil {
		return nil, errors.New("not strict JSON: " + safetext.Escape(safetext.Clip(err.Error(), 300)))
	}
	root := doc.Root()
	if root.Kind() != jcs.Object {
		return nil, errors.New("a JSON " + root.Kind().String() + " where a JSON-RPC message (an object) was expected")
	}
	if v, ok := root.Get("jsonrpc"); !ok || !v.StrEqual("2.0") {
		return nil, errors.New(`not a JSON-RPC 2.0 message ("jsonrpc" is not "2.0")`)
	}
	m := &message{raw: raw, doc: doc}
	id, hasID := root.Get("id")
	if hasID {
		m.id = id
		if k := id.Kind(); k != jcs.String && k != jcs.Number && k != jcs.Null {
			return nil, errors.New("the message id is a JSON " + k.String())
		}
	}
	if mv, ok := root.Get("method"); ok {
		if mv.Kind() != jcs.String {
			return nil, errors.New("the message method is not a string")
		}
		m.method = mv.Str()
		if hasID && id.Kind() != jcs.Null {
			m.kind = kindRequest
		} else {
			m.kind = kindNotification
		}
		return m, nil
	}
	m.kind = kindResponse
	res, hasRes := root.Get("result")
	ev, hasErr := root.Get("error")
	switch {
	case hasRes && hasErr:
		return nil, errors.New(`a response with both "result" and "error"`)
	case !hasRes && !hasErr:
		return nil, errors.New(`a message with neither "method", "result" nor "error"`)
	case hasRes:
		if !hasID || id.Kind() == jcs.Null {
			return nil, errors.New("a result without an id")
		}
		m.result = res
		return m, nil
	}
	m.isErr = true
	if ev.Kind() != jcs.Object {
		return nil, errors.New(`"error" is not an object`)
	}
	cv, ok := ev.Get("code")
	if !ok || cv.Kind() != jcs.Number {
		return nil, errors.New("an error without a numeric code")
	}
	code, ok := intValue(cv)
	if !ok || code < math.MinInt32 || code > math.MaxInt32 {
		return nil, errors.New("an error code that is not a 32-bit integer")
	}
	m.code = int(code)
	if mv, ok := ev.Get("message"); ok && mv.Kind() == jcs.String {
		m.errMsg = safetext.Clip(mv.Str(), 1024)
	}
	m.data, _ = ev.Get("data")
	return m, nil
}

// intValue returns an integral JSON number as int64.
func intValue(v jcs.Value) (int64, bool) {
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

// idIs reports whether the message id is the integer id.
func (m *message) idIs(id int64) bool {
	if !m.id.Valid() {
		return false
	}
	n, ok := intValue(m.id)
	return ok && n == id
}

// idText is the id for a message, escaped and clipped.
func (m *message) idText() string {
	if !m.id.Valid() {
		return "(none)"
	}
	return safetext.Escape(safetext.Clip(string(m.id.Raw()), 80))
}

// answers reports whether the response answers the request with id: same
// id, or an error response without an id (allowed for errors where the
// request id could not be read).
func (m *message) answers(id int64) bool {
	if m.kind != kindResponse {
		return false
	}
	if m.idIs(id) {
		return true
	}
	return m.isErr && (!m.id.Valid() || m.id.Kind() == jcs.Null)
}

// protocolError converts an error response.
func (m *message) protocolError(method string, status int) *ProtocolError {
	pe := &ProtocolError{Method: method, Code: m.code, Message: m.errMsg, HTTPStatus: status}
	if m.code == mcpwire.CodeUnsupportedProtocolVersion && m.data.Valid() && m.data.Kind() == jcs.Object {
		if s, ok := m.data.Get("supported"); ok && s.Kind() == jcs.Array {
			for i := range min(s.Len(), 32) {
				if e := s.Index(i); e.Kind() == jcs.String {
					pe.Supported = append(pe.Supported, safetext.Clip(e.Str(), 64))
				}
			}
		}
		if r, ok := m.data.Get("requested"); ok && r.Kind() == jcs.String {
			pe.Requested = safetext.Clip(r.Str(), 64)
		}
	}
	return pe
}

// serverInfoOf reads an Implementation object (name and version strings).
func serverInfoOf(v jcs.Value, ok bool) *ServerInfo {
	if !ok || v.Kind() != jcs.Object {
		return nil
	}
	si := &ServerInfo{}
	if n, ok := v.Get("name"); ok && n.Kind() == jcs.String {
		si.Name = safetext.Clip(n.Str(), 256)
	}
	if n, ok := v.Get("version"); ok && n.Kind() == jcs.String {
		si.Version = safetext.Clip(n.Str(), 256)
	}
	return si
}

// metaServerInfo reads _meta["io.modelcontextprotocol/serverInfo"] of a result.
func metaServerInfo(result jcs.Value) *ServerInfo {
	meta, ok := result.Get("_meta")
	if !ok {
		return nil
	}
	return serverInfoOf(meta.Get(mcpwire.MetaServerInfo))
}

// checkResultType applies "an unrecognized resultType MUST be treated as
// invalid; absent means complete".
func checkResultType(result jcs.Value) error {
	rt, ok := result.Get("resultType")
	if !ok || rt.StrEqual("complete") {
		return nil
	}
	if rt.StrEqual("input_required") {
		return errors.New(`the server asked for input (resultType "input_required"), which this client does not provide`)
	}
	return errors.New("unrecognized resultType " + quote(string(rt.Raw())))
}

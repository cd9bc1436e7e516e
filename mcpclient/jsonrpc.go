package mcpclient

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
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
	// params are the Mcp-Param-{Name} headers of a 2026-07-28 tools/call
	// over HTTP (frame.ParamHeaders).
	params []frame.ParamHeader
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
	if req.method == methodPing {
		return frame.AppendResult(nil, req.id.Raw(), []byte(`{}`))
	}
	return frame.AppendError(nil, req.id.Raw(), &frame.Error{Code: mcpwire.CodeMethodNotFound, Message: "Method not found: mcpdrift observes tools/list and answers no server requests"})
}

// requestHeaders derives the MCP request headers from the body about to be
// sent with frame.DeriveHeaders — the one place where headers and body are
// tied, so they cannot disagree:
//
//   - Mcp-Method is the body's method;
//   - Mcp-Protocol-Version is params._meta's protocolVersion when the body
//     has one (modern), else sessionVersion (the negotiated legacy version,
//     "" before initialize or for 2025-03-26, when it is not sent);
//   - Mcp-Name is params.name (tools/call, prompts/get) or params.uri
//     (resources/read), encoded with mcpwire.EncodeHeaderValue.
//
// A response (the refusal of a server request, legacy sessions only) has
// only the session's version.
func requestHeaders(body []byte, sessionVersion string) (http.Header, error) {
	m, err := frame.Parse(body)
	if err != nil {
		return nil, err
	}
	hs, err := frame.DeriveHeaders(m, sessionVersion)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, 3)
	hs.Set(h)
	return h, nil
}

type msgKind uint8

const (
	kindResponse msgKind = iota + 1
	kindRequest
	kindNotification
)

// message is the client's reading of one JSON-RPC message as received,
// parsed strictly by frame.FromServer (the parser manifest uses, so what
// steers the client — ids, nextCursor — is what the manifest will read).
type message struct {
	raw    []byte // the message exactly as received, surrounding whitespace trimmed
	kind   msgKind
	method string    // requests and notifications
	id     jcs.Value // requests and responses; invalid or null for some error responses
	result jcs.Value // success responses
	isErr  bool
	code   int
	errMsg string
	data   jcs.Value
}

// parseMessage parses one JSON-RPC message (frame.FromServer). Errors are
// messages for people, already escaped.
func parseMessage(raw []byte) (*message, error) {
	fm, err := frame.FromServer(raw)
	if err != nil {
		return nil, err
	}
	m := &message{raw: fm.Raw, method: fm.Method, id: fm.ID, result: fm.Result}
	switch fm.Kind {
	case frame.Request:
		m.kind = kindRequest
	case frame.Notification:
		m.kind = kindNotification
	case frame.Response:
		m.kind = kindResponse
	case frame.ErrorResponse:
		m.kind, m.isErr, m.code = kindResponse, true, fm.Code
		m.errMsg = safetext.Clip(fm.ErrorMessage(), 1024)
		m.data = fm.ErrorData()
	}
	return m, nil
}

// idIs reports whether the message id is the integer id.
func (m *message) idIs(id int64) bool {
	if !m.id.Valid() {
		return false
	}
	n, ok := frame.Int64(m.id)
	return ok && n == id
}

// idText is the id for a message (manifest.IDText), clipped.
func (m *message) idText() string {
	if !m.id.Valid() {
		return "(none)"
	}
	return manifest.IDText(m.id, 80)
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

// inputRequired reports whether rep is a result asking for input
// (resultType "input_required").
func inputRequired(rep *reply) bool {
	if rep == nil || rep.msg == nil || rep.msg.isErr || rep.msg.result.Kind() != jcs.Object {
		return false
	}
	rt, ok := rep.msg.result.Get("resultType")
	return ok && rt.StrEqual("input_required")
}

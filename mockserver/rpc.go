package mockserver

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Implementation-defined error codes (the -32000..-32019 range), as the
// TypeScript SDK uses them.
const (
	codeBadRequest      = -32000 // "Bad Request: ..." (no session, bad MCP-Protocol-Version, ...)
	codeSessionNotFound = -32001
)

// message is one parsed JSON-RPC message (frame.FromClient).
type message = frame.Message

// status maps an error without an explicit status: modern (SEP-2243 and
// §5.5) 404 for -32601, 500 for -32603, 400 otherwise; legacy 200 (a
// JSON-RPC error to a well-formed request).
func httpStatus(e *frame.Error, modern bool) int {
	if e.Status != 0 {
		return e.Status
	}
	if !modern {
		return http.StatusOK
	}
	switch e.Code {
	case mcpwire.CodeMethodNotFound:
		return http.StatusNotFound
	case mcpwire.CodeInternalError:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// responseBytes is the response with id to a request, room for it
// allocated once.
func responseBytes(id, result []byte) []byte {
	return frame.AppendResult(make([]byte, 0, len(result)+len(id)+32), id, result)
}

// modernIntent: params._meta carries a modern key.
func modernIntent(m *message) bool {
	meta, ok := m.Meta()
	if !ok {
		return false
	}
	_, a := meta.Get(mcpwire.MetaProtocolVersion)
	_, b := meta.Get(mcpwire.MetaClientCapabilities)
	return a || b
}

// exchange is the context one request is handled in.
type exchange struct {
	modern    bool
	version   string
	conn      int
	anonymous bool
	tools     *toolSet
	header    http.Header // nil on stdio
	entry     *LogEntry
	caps      []string // the client capabilities declared (modern: this request's)
}

// capabilityNames reads a ClientCapabilities object: its member names
// (logged as the raw object, clipped).
func capabilityNames(v jcs.Value, entry *LogEntry) []string {
	if !v.Valid() || v.Kind() != jcs.Object {
		return nil
	}
	entry.ClientCapabilities = safetext.Clip(string(v.Raw()), 1024)
	return v.Keys()
}

// initializeCaps are the capabilities a legacy initialize declared.
func initializeCaps(m *message, entry *LogEntry) []string {
	v, _ := m.Param("capabilities")
	return capabilityNames(v, entry)
}

// serverRequestBytes is the ServerRequest sent before a hostile method's
// response, with a fresh id and the smallest valid params of its method.
func (s *Server) serverRequestBytes() []byte {
	s.mu.Lock()
	s.srvReqs++
	n := s.srvReqs
	s.mu.Unlock()
	b := []byte(`{"jsonrpc":"2.0","id":"mock-srv-` + strconv.Itoa(n) + `","method":`)
	b = appendJSONString(b, s.cfg.ServerRequest)
	switch s.cfg.ServerRequest {
	case "sampling/createMessage":
		b = append(b, `,"params":{"messages":[{"role":"user","content":{"type":"text","text":"mock"}}],"maxTokens":16}`...)
	case "elicitation/create":
		b = append(b, `,"params":{"message":"mock","requestedSchema":{"type":"object","properties":{}}}`...)
	}
	return append(b, '}')
}

// wantsServerRequest: ServerRequest goes before the response to m.
func (s *Server) wantsServerRequest(m *message) bool {
	return s.cfg.ServerRequest != "" && s.hostile[m.Method]
}

// answerReason describes a client's answer to a server request, for the log.
func answerReason(m *message) string {
	if e, ok := m.Root.Get("error"); ok {
		if c, ok := e.Get("code"); ok {
			return "response: error " + string(c.Raw())
		}
		return "response: error"
	}
	return "response: result"
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// checkModernMeta validates params._meta of a modern request (§5.2) and the
// standard headers (SEP-2243; h is nil on stdio). It sets x.version.
func (s *Server) checkModernRequest(h http.Header, m *message, x *exchange) *frame.Error {
	if m.Kind.IsResponse() {
		return frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: a client must not send JSON-RPC responses")
	}
	if !m.Params.Valid() {
		return frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: params with _meta is required")
	}
	metaV, ok := m.Param("_meta")
	if !ok {
		return frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: missing params._meta")
	}
	if metaV.Kind() != jcs.Object {
		return frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: params._meta must be an object")
	}
	pv, ok := metaV.Get(mcpwire.MetaProtocolVersion)
	if !ok || pv.Kind() != jcs.String || pv.Str() == "" {
		return frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: missing or invalid _meta field %q", mcpwire.MetaProtocolVersion)
	}
	caps, ok := metaV.Get(mcpwire.MetaClientCapabilities)
	if !ok || caps.Kind() != jcs.Object {
		return frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: missing or invalid _meta field %q", mcpwire.MetaClientCapabilities)
	}
	x.caps = capabilityNames(caps, x.entry)
	if ci, ok := metaV.Get(mcpwire.MetaClientInfo); ok {
		x.entry.ClientInfoSent = true
		x.entry.ClientInfo = safetext.Clip(string(ci.Raw()), 1024)
		if !validImplementation(ci) {
			return frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: _meta field %q must be an object with string name and version", mcpwire.MetaClientInfo)
		}
	}
	if ll, ok := metaV.Get(mcpwire.MetaLogLevel); ok {
		if ll.Kind() != jcs.String || !slices.Contains(logLevels, ll.Str()) {
			return frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: _meta field %q must be a logging level", mcpwire.MetaLogLevel)
		}
	}
	version := pv.Str()
	x.entry.ProtocolVersion = version
	// The standard headers against the body (-32020), the version served
	// (-32022) and the name a tools/call, prompts/get or resources/read
	// carries (-32602), in the validation table's order.
	if e := frame.CheckHeaders(h, m, s.checkModernVersion); e != nil {
		return e
	}
	x.version = version
	return nil
}

// checkModernVersion is the -32022 for a version this server does not
// serve statelessly.
func (s *Server) checkModernVersion(version string) *frame.Error {
	if !slices.Contains(s.modernVersions, version) {
		return s.unsupportedVersion(version)
	}
	return nil
}

// initializeVersion is the protocolVersion an initialize asked for ("" if none).
func initializeVersion(m *message) string {
	if v, ok := m.Param("protocolVersion"); ok && v.Kind() == jcs.String {
		return v.Str()
	}
	return ""
}

func (s *Server) unsupportedVersion(requested string) *frame.Error {
	data := []byte(`{"supported":[`)
	for i, v := range s.allVersions {
		if i > 0 {
			data = append(data, ',')
		}
		data = appendJSONString(data, v)
	}
	data = append(data, `],"requested":`...)
	data = appendJSONString(data, requested)
	data = append(data, '}')
	e := frame.Errorf(http.StatusBadRequest, mcpwire.CodeUnsupportedProtocolVersion, "Unsupported protocol version: %q", safetext.Clip(requested, 64))
	e.Data = data
	return e
}

func validImplementation(v jcs.Value) bool {
	if v.Kind() != jcs.Object {
		return false
	}
	n, ok1 := v.Get("name")
	ver, ok2 := v.Get("version")
	return ok1 && ok2 && n.Kind() == jcs.String && ver.Kind() == jcs.String
}

// checkParamHeaders checks the Mcp-Param-{Name} headers of a tools/call
// against the arguments annotated "x-mcp-header" in the tool's inputSchema
// (frame.ParamHeaders and frame.CheckParamHeaders, the gateway's check).
func checkParamHeaders(h http.Header, tool []byte, args jcs.Value, hasArgs bool) *frame.Error {
	doc, err := jcs.Parse(tool)
	if err != nil {
		return nil
	}
	is, ok := doc.Root().Get("inputSchema")
	if !ok {
		return nil
	}
	if !hasArgs {
		// No annotated argument is present: a header of one is refused.
		args = jcs.Value{}
	}
	want, names := frame.ParamHeadersAndNames(is, args, true)
	return frame.CheckParamHeaders(h, want, names)
}

// Results.

func (s *Server) modernResult(inner []byte, cacheable bool) []byte {
	return s.modernResultInfo(inner, cacheable, !s.cfg.ServerInfoOnlyInDiscover)
}

// modernResultInfo is modernResult, with serverInfo in its _meta or not.
func (s *Server) modernResultInfo(inner []byte, cacheable, info bool) []byte {
	b := make([]byte, 0, len(inner)+160)
	b = append(b, `{"resultType":"complete"`...)
	if len(inner) > 0 {
		b = append(b, ',')
		b = append(b, inner...)
	}
	if cacheable && !s.cfg.OmitCacheFields {
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, s.cfg.TTLMs, 10)
		b = append(b, `,"cacheScope":`...)
		b = appendJSONString(b, s.cacheScope)
	}
	if !info {
		return append(b, '}')
	}
	b = append(b, `,"_meta":{"`+mcpwire.MetaServerInfo+`":`...)
	b = append(b, s.serverInfo...)
	return append(b, "}}"...)
}

func (s *Server) result(x *exchange, inner []byte, cacheable bool) []byte {
	if x.modern {
		return s.modernResult(inner, cacheable)
	}
	b := make([]byte, 0, len(inner)+2)
	b = append(b, '{')
	b = append(b, inner...)
	return append(b, '}')
}

func (s *Server) capabilities(modern bool) string {
	lc := "false"
	if s.cfg.ListChanged {
		lc = "true"
	}
	if modern {
		return `{"tools":{"listChanged":` + lc + `}` + s.surfaceCapabilities(lc) + `}`
	}
	return `{"tools":{"listChanged":` + lc + `},"logging":{}` + s.surfaceCapabilities(lc) + `}`
}

func (s *Server) discoverResult() []byte {
	var b []byte
	if !s.cfg.DiscoverWithoutVersions {
		b = append(b, `"supportedVersions":[`...)
		for i, v := range s.allVersions {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, v)
		}
		b = append(b, `],`...)
	}
	b = append(b, `"capabilities":`...)
	b = append(b, s.capabilities(true)...)
	if in := s.instructionsJSON(); in != nil {
		b = append(b, `,"instructions":`...)
		b = append(b, in...)
	}
	return s.modernResultInfo(b, true, true) // server/discover always says who it is
}

func (s *Server) initializeResult(version string) []byte {
	b := []byte(`{"protocolVersion":`)
	b = appendJSONString(b, version)
	b = append(b, `,"capabilities":`...)
	b = append(b, s.capabilities(false)...)
	b = append(b, `,"serverInfo":`...)
	b = append(b, s.serverInfo...)
	if in := s.instructionsJSON(); in != nil {
		b = append(b, `,"instructions":`...)
		b = append(b, in...)
	}
	return append(b, '}')
}

// checkInitialize validates legacy initialize params and negotiates.
func (s *Server) checkInitialize(m *message, entry *LogEntry) (string, *frame.Error) {
	if !m.ID.Valid() {
		return "", frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: initialize must be a request")
	}
	if !m.Params.Valid() {
		return "", frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: initialize needs params")
	}
	if ci, ok := m.Param("clientInfo"); ok {
		entry.ClientInfoSent = true
		entry.ClientInfo = safetext.Clip(string(ci.Raw()), 1024)
	}
	pv, ok := m.Param("protocolVersion")
	if !ok || pv.Kind() != jcs.String || pv.Str() == "" {
		return "", frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: initialize params.protocolVersion must be a string")
	}
	if c, ok := m.Param("capabilities"); !ok || c.Kind() != jcs.Object {
		return "", frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: initialize params.capabilities must be an object")
	}
	if ci, ok := m.Param("clientInfo"); !ok || !validImplementation(ci) {
		return "", frame.Errorf(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: initialize params.clientInfo must be an object with string name and version")
	}
	req := pv.Str()
	if slices.Contains(s.legacyVersions, req) {
		return req, nil
	}
	latest := s.legacyVersions[0]
	for _, v := range s.legacyVersions {
		if v > latest {
			latest = v
		}
	}
	return latest, nil
}

// Pagination. A cursor is base64url("mock-page@" + offset); with
// EmptyStringCursor the cursor of the second page is "" (modern only).

const cursorPrefix = "mock-page@"

func encodeCursor(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(off)))
}

func (s *Server) cursorFor(off int, modern bool) string {
	if modern && s.cfg.EmptyStringCursor && s.cfg.PageSize > 0 && off == s.cfg.PageSize {
		return ""
	}
	return encodeCursor(off)
}

// cursorOffset is the offset encodeCursor made c of.
func cursorOffset(c string) (int, bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return 0, false
	}
	digits := string(b[len(cursorPrefix):])
	off, err := strconv.Atoi(digits)
	if err != nil || off < 0 || strconv.Itoa(off) != digits {
		return 0, false
	}
	return off, true
}

func (s *Server) decodeCursor(c string, modern bool, n int) (int, bool) {
	if c == "" {
		if modern && s.cfg.EmptyStringCursor && s.cfg.PageSize > 0 && s.cfg.PageSize < n {
			return s.cfg.PageSize, true
		}
		return 0, false
	}
	off, ok := cursorOffset(c)
	if !ok {
		return 0, false
	}
	if off == 0 {
		return 0, true
	}
	if off >= n || (s.cfg.PageSize > 0 && off%s.cfg.PageSize != 0) || s.cfg.PageSize == 0 {
		return 0, false
	}
	return off, true
}

func (s *Server) toolsList(x *exchange, m *message) ([]byte, *frame.Error) {
	ts := x.tools
	n := len(ts.raws)
	off := 0
	if c, ok := m.Param("cursor"); ok {
		if c.Kind() != jcs.String {
			return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: cursor must be a string")
		}
		var valid bool
		if off, valid = s.decodeCursor(c.Str(), x.modern, n); !valid {
			return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid cursor")
		}
	}
	end := n
	if s.cfg.PageSize > 0 && off+s.cfg.PageSize < n {
		end = off + s.cfg.PageSize
	}
	size := 32
	for _, r := range ts.raws[off:end] {
		size += len(r) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `"tools":[`...)
	for i, r := range ts.raws[off:end] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	b = append(b, ']')
	next, hasNext := "", false
	switch {
	case end < n:
		next, hasNext = s.cursorFor(end, x.modern), true
	case s.cfg.CursorCycle:
		next, hasNext = encodeCursor(0), true
	}
	if hasNext {
		b = append(b, `,"nextCursor":`...)
		b = appendJSONString(b, next)
	}
	return s.result(x, b, true), nil
}

var okContent = []byte(`"content":[{"type":"text","text":"ok"}]`)

func (s *Server) toolsCall(x *exchange, m *message) ([]byte, *frame.Error) {
	nv, ok := m.Param("name")
	if !ok || nv.Kind() != jcs.String {
		return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: params.name must be a string")
	}
	args, hasArgs := m.Param("arguments")
	if hasArgs && args.Kind() != jcs.Object {
		return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Invalid params: params.arguments must be an object")
	}
	tool, ok := x.tools.find(nv.Str())
	if !ok {
		return nil, frame.Errorf(0, mcpwire.CodeInvalidParams, "Unknown tool: %s", safetext.Clip(nv.Str(), 128))
	}
	if x.modern && x.header != nil {
		if e := checkParamHeaders(x.header, tool, args, hasArgs); e != nil {
			return nil, e
		}
	}
	return s.result(x, okContent, false), nil
}

// dispatch answers a validated request (not initialize).
func (s *Server) dispatch(x *exchange, m *message) ([]byte, *frame.Error) {
	if res, e, ok := s.dispatchSurface(x, m); ok {
		return res, e
	}
	switch m.Method {
	case "tools/list":
		return s.toolsList(x, m)
	case "tools/call":
		return s.toolsCall(x, m)
	case "server/discover":
		if x.modern {
			return s.discoverResult(), nil
		}
	case "ping":
		if !x.modern {
			return []byte(`{}`), nil
		}
	case "logging/setLevel":
		// A legacy session is offered the logging capability, so its
		// setLevel is answered (the mock sends no log messages).
		if !x.modern {
			return []byte(`{}`), nil
		}
	}
	return nil, frame.Errorf(0, mcpwire.CodeMethodNotFound, "Method not found: %s", safetext.Clip(m.Method, 64))
}

// hostileBody applies WrongID, ErrorInsteadOfResult and InvalidJSON to a
// response; ok is false when none applies.
func (s *Server) hostileBody(id []byte, method string) ([]byte, bool) {
	if !s.hostile[method] {
		return nil, false
	}
	switch {
	case s.cfg.InvalidJSON:
		b := []byte(`{"jsonrpc":"2.0","id":`)
		b = append(b, id...)
		return append(b, `,"result":{"tools":[{"name":"trunc`...), true
	case s.cfg.ErrorInsteadOfResult:
		return frame.AppendError(nil, s.wrongID(id), frame.Errorf(0, mcpwire.CodeInternalError, "Internal error (mock: ErrorInsteadOfResult)")), true
	}
	return nil, false
}

func (s *Server) wrongID(id []byte) []byte {
	if !s.cfg.WrongID {
		return id
	}
	if len(id) > 0 && id[0] == '"' {
		return append([]byte(`"wrong-`), id[1:]...)
	}
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil && n < 1<<62 {
		return strconv.AppendInt(nil, n+1000, 10)
	}
	return []byte(`"wrong-id"`)
}

// respID is the id a response carries (WrongID for hostile methods).
func (s *Server) respID(id []byte, method string) []byte {
	if s.hostile[method] {
		return s.wrongID(id)
	}
	return id
}

// oversizedChunk is one valid-looking tool object, repeated.
var oversizedChunk = []byte(`{"name":"pad","description":"` + strings.Repeat("x", 400) + `","inputSchema":{"type":"object"}},`)

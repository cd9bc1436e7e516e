package mockserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Implementation-defined error codes (the -32000..-32019 range), as the
// TypeScript SDK uses them.
const (
	codeBadRequest      = -32000 // "Bad Request: ..." (no session, bad MCP-Protocol-Version, ...)
	codeSessionNotFound = -32001
)

// message is one parsed JSON-RPC message.
type message struct {
	root       jcs.Value
	id         []byte // raw JSON id; nil when absent
	method     string
	hasMethod  bool
	params     jcs.Value
	hasParams  bool
	isResponse bool
}

func (m *message) isNotification() bool { return m.hasMethod && m.id == nil }

// rpcError is a refusal: an HTTP status (0: chosen by era, see status) and
// a JSON-RPC error.
type rpcError struct {
	status int
	code   int
	msg    string
	data   []byte // raw JSON, optional
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.code, e.msg) }

func rpcErr(status, code int, format string, args ...any) *rpcError {
	return &rpcError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// status maps an error without an explicit status: modern (SEP-2243 and
// §5.5) 404 for -32601, 500 for -32603, 400 otherwise; legacy 200 (a
// JSON-RPC error to a well-formed request).
func (e *rpcError) httpStatus(modern bool) int {
	if e.status != 0 {
		return e.status
	}
	if !modern {
		return http.StatusOK
	}
	switch e.code {
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

func responseBytes(id, result []byte) []byte {
	b := make([]byte, 0, len(result)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

func errorBytes(id []byte, e *rpcError) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	if id == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, id...)
	}
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.code), 10)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, e.msg)
	if len(e.data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.data...)
	}
	return append(b, "}}"...)
}

func notificationBytes(method string, params []byte) []byte {
	b := []byte(`{"jsonrpc":"2.0","method":`)
	b = appendJSONString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	return append(b, '}')
}

// parseMessage parses one JSON-RPC message strictly (the jcs parser:
// duplicate member names, invalid UTF-8, lone surrogates and trailing data
// are parse errors). MCP ids are strings or integers, never null.
func parseMessage(body []byte) (*message, *rpcError) {
	doc, err := jcs.Parse(body)
	if err != nil {
		return nil, rpcErr(http.StatusBadRequest, mcpwire.CodeParseError, "Parse error: %s", safetext.Clip(err.Error(), 200))
	}
	root := doc.Root()
	if root.Kind() == jcs.Array {
		return nil, rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not accepted")
	}
	if root.Kind() != jcs.Object {
		return nil, rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: a JSON-RPC message must be an object")
	}
	m := &message{root: root}
	bad := func(format string, args ...any) (*message, *rpcError) {
		e := rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: "+format, args...)
		return m, e
	}
	if v, ok := root.Get("id"); ok {
		switch {
		case v.Kind() == jcs.String:
			m.id = v.Raw()
		case v.Kind() == jcs.Number && isIntegerLiteral(v.Raw()):
			m.id = v.Raw()
		case v.Kind() == jcs.Null:
			return bad("id must not be null")
		default:
			return bad("id must be a string or an integer")
		}
	}
	if v, ok := root.Get("jsonrpc"); !ok || !v.StrEqual("2.0") {
		return bad(`"jsonrpc" must be "2.0"`)
	}
	if v, ok := root.Get("method"); ok {
		if v.Kind() != jcs.String || v.Str() == "" {
			return bad("method must be a non-empty string")
		}
		m.method, m.hasMethod = v.Str(), true
	}
	_, hasResult := root.Get("result")
	_, hasError := root.Get("error")
	switch {
	case m.hasMethod && (hasResult || hasError):
		return bad("a message cannot be both a request and a response")
	case !m.hasMethod && !hasResult && !hasError:
		return bad("no method, result or error")
	case !m.hasMethod:
		if hasResult == hasError {
			return bad("a response has exactly one of result and error")
		}
		if m.id == nil {
			return bad("a response needs an id")
		}
		m.isResponse = true
	}
	if v, ok := root.Get("params"); ok {
		switch v.Kind() {
		case jcs.Object:
			m.params, m.hasParams = v, true
		case jcs.Array:
			return m, rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: MCP params must be an object")
		default:
			return bad("params must be a structured value")
		}
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

// param returns params[key].
func (m *message) param(key string) (jcs.Value, bool) {
	if !m.hasParams {
		return jcs.Value{}, false
	}
	return m.params.Get(key)
}

// meta returns params._meta when it is an object.
func (m *message) meta() (jcs.Value, bool) {
	v, ok := m.param("_meta")
	if !ok || v.Kind() != jcs.Object {
		return jcs.Value{}, false
	}
	return v, true
}

// modernIntent: params._meta carries a modern key.
func (m *message) modernIntent() bool {
	meta, ok := m.meta()
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
	v, _ := m.param("capabilities")
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
	return s.cfg.ServerRequest != "" && s.hostile[m.method]
}

// answerReason describes a client's answer to a server request, for the log.
func answerReason(m *message) string {
	if e, ok := m.root.Get("error"); ok {
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
func (s *Server) checkModernRequest(h http.Header, m *message, x *exchange) *rpcError {
	if m.isResponse {
		return rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: a client must not send JSON-RPC responses")
	}
	if !m.hasParams {
		return rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: params with _meta is required")
	}
	metaV, ok := m.param("_meta")
	if !ok {
		return rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: missing params._meta")
	}
	if metaV.Kind() != jcs.Object {
		return rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: params._meta must be an object")
	}
	pv, ok := metaV.Get(mcpwire.MetaProtocolVersion)
	if !ok || pv.Kind() != jcs.String || pv.Str() == "" {
		return rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: missing or invalid _meta field %q", mcpwire.MetaProtocolVersion)
	}
	caps, ok := metaV.Get(mcpwire.MetaClientCapabilities)
	if !ok || caps.Kind() != jcs.Object {
		return rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: missing or invalid _meta field %q", mcpwire.MetaClientCapabilities)
	}
	x.caps = capabilityNames(caps, x.entry)
	if ci, ok := metaV.Get(mcpwire.MetaClientInfo); ok {
		x.entry.ClientInfoSent = true
		x.entry.ClientInfo = safetext.Clip(string(ci.Raw()), 1024)
		if !validImplementation(ci) {
			return rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: _meta field %q must be an object with string name and version", mcpwire.MetaClientInfo)
		}
	}
	if ll, ok := metaV.Get(mcpwire.MetaLogLevel); ok {
		if ll.Kind() != jcs.String || !slices.Contains(logLevels, ll.Str()) {
			return rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: _meta field %q must be a logging level", mcpwire.MetaLogLevel)
		}
	}
	version := pv.Str()
	x.entry.ProtocolVersion = version
	if h != nil {
		hv, err := singleHeader(h, mcpwire.HeaderProtocolVersion)
		if err != nil {
			return err
		}
		if hv != version {
			return rpcErr(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: MCP-Protocol-Version header %q does not match _meta protocolVersion %q", safetext.Clip(hv, 64), safetext.Clip(version, 64))
		}
	}
	if !slices.Contains(s.modernVersions, version) {
		return s.unsupportedVersion(version)
	}
	x.version = version
	if h != nil {
		hm, err := singleHeader(h, mcpwire.HeaderMethod)
		if err != nil {
			return err
		}
		if hm != m.method {
			return rpcErr(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: Mcp-Method header %q does not match method %q", safetext.Clip(hm, 64), safetext.Clip(m.method, 64))
		}
	}
	var nameKey string
	switch m.method {
	case "tools/call", "prompts/get":
		nameKey = "name"
	case "resources/read":
		nameKey = "uri"
	}
	if nameKey != "" {
		nv, ok := m.param(nameKey)
		if !ok || nv.Kind() != jcs.String {
			return rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: params.%s must be a string", nameKey)
		}
		if h != nil {
			raw, err := singleHeader(h, mcpwire.HeaderName)
			if err != nil {
				return err
			}
			if err := checkHeaderValue(mcpwire.HeaderName, raw, nv.Str()); err != nil {
				return err
			}
		}
	}
	return nil
}

// initializeVersion is the protocolVersion an initialize asked for ("" if none).
func initializeVersion(m *message) string {
	if v, ok := m.param("protocolVersion"); ok && v.Kind() == jcs.String {
		return v.Str()
	}
	return ""
}

func (s *Server) unsupportedVersion(requested string) *rpcError {
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
	e := rpcErr(http.StatusBadRequest, mcpwire.CodeUnsupportedProtocolVersion, "Unsupported protocol version: %q", safetext.Clip(requested, 64))
	e.data = data
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

// singleHeader returns the one value of a required standard header: absent
// or repeated is a -32020.
func singleHeader(h http.Header, name string) (string, *rpcError) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", rpcErr(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: missing required %s header", name)
	case 1:
		return strings.Trim(vs[0], " \t"), nil
	}
	return "", rpcErr(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header repeated", name)
}

// checkHeaderValue validates an Mcp-Name / Mcp-Param-* value: only visible
// ASCII, SP and HTAB on the wire; =?base64?...?= decoded (invalid base64 is
// a mismatch); then equal to the body value.
func checkHeaderValue(name, raw, want string) *rpcError {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' {
			return rpcErr(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header has invalid characters (non-ASCII values must be =?base64?...?= encoded)", name)
		}
	}
	got, err := mcpwire.DecodeHeaderValue(raw)
	if err != nil {
		return rpcErr(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header: %s", name, err.Error())
	}
	if got != want {
		return rpcErr(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header does not match the body value %q", name, safetext.Clip(want, 128))
	}
	return nil
}

// checkParamHeaders checks the Mcp-Param-{Name} headers of a tools/call
// against the arguments annotated "x-mcp-header" in the tool's inputSchema
// (properties chains only). An annotated argument that is present and not
// null needs its header, equal after decoding (integers compared
// numerically, booleans as true/false).
func checkParamHeaders(h http.Header, tool []byte, args jcs.Value, hasArgs bool) *rpcError {
	if !hasArgs {
		return nil
	}
	doc, err := jcs.Parse(tool)
	if err != nil {
		return nil
	}
	is, ok := doc.Root().Get("inputSchema")
	if !ok {
		return nil
	}
	var phs []paramHeader
	walkParamHeaders(is, nil, &phs, 0)
	for _, ph := range phs {
		v, ok := args, true
		for _, k := range ph.path {
			if v, ok = v.Get(k); !ok {
				break
			}
		}
		if !ok || v.Kind() == jcs.Null {
			continue
		}
		hname := mcpwire.HeaderParamPrefix + ph.name
		raw, rerr := singleHeader(h, hname)
		if rerr != nil {
			return rerr
		}
		var want string
		switch v.Kind() {
		case jcs.String:
			want = v.Str()
		case jcs.True:
			want = "true"
		case jcs.False:
			want = "false"
		case jcs.Number:
			got, err := mcpwire.DecodeHeaderValue(raw)
			f, perr := strconv.ParseFloat(got, 64)
			if err != nil || perr != nil || f != v.Float() {
				return rpcErr(http.StatusBadRequest, mcpwire.CodeHeaderMismatch, "Header mismatch: %s header does not match the argument", hname)
			}
			continue
		default:
			continue // not a header-able type; the annotation itself is invalid
		}
		if e := checkHeaderValue(hname, raw, want); e != nil {
			return e
		}
	}
	return nil
}

type paramHeader struct {
	path []string
	name string
}

func walkParamHeaders(schema jcs.Value, path []string, out *[]paramHeader, depth int) {
	if depth > 32 || len(*out) > 64 || schema.Kind() != jcs.Object {
		return
	}
	props, ok := schema.Get("properties")
	if !ok || props.Kind() != jcs.Object {
		return
	}
	for i := range props.Len() {
		k, v := props.Member(i)
		p := append(slices.Clone(path), k.Str())
		if v.Kind() != jcs.Object {
			continue
		}
		if hv, ok := v.Get("x-mcp-header"); ok && hv.Kind() == jcs.String && hv.Str() != "" {
			*out = append(*out, paramHeader{p, hv.Str()})
		}
		walkParamHeaders(v, p, out, depth+1)
	}
}

// Results.

func (s *Server) modernResult(inner []byte, cacheable bool) []byte {
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
	if modern {
		return `{"tools":{"listChanged":false}}`
	}
	return `{"tools":{"listChanged":false},"logging":{}}`
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
	if s.cfg.Instructions != "" {
		b = append(b, `,"instructions":`...)
		b = appendJSONString(b, s.cfg.Instructions)
	}
	return s.modernResult(b, true)
}

func (s *Server) initializeResult(version string) []byte {
	b := []byte(`{"protocolVersion":`)
	b = appendJSONString(b, version)
	b = append(b, `,"capabilities":`...)
	b = append(b, s.capabilities(false)...)
	b = append(b, `,"serverInfo":`...)
	b = append(b, s.serverInfo...)
	if s.cfg.Instructions != "" {
		b = append(b, `,"instructions":`...)
		b = appendJSONString(b, s.cfg.Instructions)
	}
	return append(b, '}')
}

// checkInitialize validates legacy initialize params and negotiates.
func (s *Server) checkInitialize(m *message, entry *LogEntry) (string, *rpcError) {
	if m.id == nil {
		return "", rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidRequest, "Invalid Request: initialize must be a request")
	}
	if !m.hasParams {
		return "", rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: initialize needs params")
	}
	if ci, ok := m.param("clientInfo"); ok {
		entry.ClientInfoSent = true
		entry.ClientInfo = safetext.Clip(string(ci.Raw()), 1024)
	}
	pv, ok := m.param("protocolVersion")
	if !ok || pv.Kind() != jcs.String || pv.Str() == "" {
		return "", rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: initialize params.protocolVersion must be a string")
	}
	if c, ok := m.param("capabilities"); !ok || c.Kind() != jcs.Object {
		return "", rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: initialize params.capabilities must be an object")
	}
	if ci, ok := m.param("clientInfo"); !ok || !validImplementation(ci) {
		return "", rpcErr(http.StatusBadRequest, mcpwire.CodeInvalidParams, "Invalid params: initialize params.clientInfo must be an object with string name and version")
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

func (s *Server) decodeCursor(c string, modern bool, n int) (int, bool) {
	if c == "" {
		if modern && s.cfg.EmptyStringCursor && s.cfg.PageSize > 0 && s.cfg.PageSize < n {
			return s.cfg.PageSize, true
		}
		return 0, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return 0, false
	}
	digits := string(b[len(cursorPrefix):])
	off, err := strconv.Atoi(digits)
	if err != nil || off < 0 || strconv.Itoa(off) != digits {
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

func (s *Server) toolsList(x *exchange, m *message) ([]byte, *rpcError) {
	ts := x.tools
	n := len(ts.raws)
	off := 0
	if c, ok := m.param("cursor"); ok {
		if c.Kind() != jcs.String {
			return nil, rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: cursor must be a string")
		}
		var valid bool
		if off, valid = s.decodeCursor(c.Str(), x.modern, n); !valid {
			return nil, rpcErr(0, mcpwire.CodeInvalidParams, "Invalid cursor")
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

func (s *Server) toolsCall(x *exchange, m *message) ([]byte, *rpcError) {
	nv, ok := m.param("name")
	if !ok || nv.Kind() != jcs.String {
		return nil, rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: params.name must be a string")
	}
	args, hasArgs := m.param("arguments")
	if hasArgs && args.Kind() != jcs.Object {
		return nil, rpcErr(0, mcpwire.CodeInvalidParams, "Invalid params: params.arguments must be an object")
	}
	tool, ok := x.tools.find(nv.Str())
	if !ok {
		return nil, rpcErr(0, mcpwire.CodeInvalidParams, "Unknown tool: %s", safetext.Clip(nv.Str(), 128))
	}
	if x.modern && x.header != nil {
		if e := checkParamHeaders(x.header, tool, args, hasArgs); e != nil {
			return nil, e
		}
	}
	return s.result(x, okContent, false), nil
}

// dispatch answers a validated request (not initialize).
func (s *Server) dispatch(x *exchange, m *message) ([]byte, *rpcError) {
	switch m.method {
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
	}
	return nil, rpcErr(0, mcpwire.CodeMethodNotFound, "Method not found: %s", safetext.Clip(m.method, 64))
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
		return errorBytes(s.wrongID(id), rpcErr(0, mcpwire.CodeInternalError, "Internal error (mock: ErrorInsteadOfResult)")), true
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

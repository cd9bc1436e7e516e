package mcpclient

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// rpcIn is a request as a test server decodes it.
type rpcIn struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	raw     []byte
}

func (q *rpcIn) params() map[string]any {
	var p map[string]any
	_ = json.Unmarshal(q.Params, &p)
	return p
}

func (q *rpcIn) meta() map[string]any {
	m, _ := q.params()["_meta"].(map[string]any)
	return m
}

func (q *rpcIn) cursor() (string, bool) {
	c, ok := q.params()["cursor"].(string)
	return c, ok
}

func readRPC(t testing.TB, r *http.Request) *rpcIn {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		t.Errorf("server: reading body: %v", err)
		return nil
	}
	q := &rpcIn{raw: b}
	if err := json.Unmarshal(b, q); err != nil {
		t.Errorf("server: body is not JSON: %v: %s", err, b)
		return nil
	}
	return q
}

// respond writes one JSON-RPC response body, result or error being raw JSON.
func respond(w http.ResponseWriter, status int, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func respondErr(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if id == nil {
		id = json.RawMessage("null")
	}
	m, _ := json.Marshal(msg)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, m)
}

// page is one tools/list page a test server serves.
type page struct {
	tools string  // the raw JSON of the tools array's members
	next  *string // nextCursor; nil for none
}

func cur(s string) *string { return &s }

// pageResult renders a tools/list result with odd but valid formatting, so
// byte fidelity is visible.
func pageResult(p page, modern bool) string {
	var b strings.Builder
	b.WriteString("{ ")
	if modern {
		b.WriteString(`"resultType":"complete", "ttlMs":60000,"cacheScope":"public", `)
	}
	b.WriteString(`"tools" : [` + p.tools + `]`)
	if p.next != nil {
		n, _ := json.Marshal(*p.next)
		b.WriteString(`, "nextCursor":` + string(n))
	}
	b.WriteString(" }")
	return b.String()
}

// pageFor maps a request cursor to a page: none is page 0, "pN" is page N
// (and "" is a valid cursor naming page 1 in tests that use it).
func pageFor(pages []page, cursor string, has bool) (page, bool) {
	if !has {
		return pages[0], true
	}
	if cursor == "" {
		return pages[1], len(pages) > 1
	}
	n, err := strconv.Atoi(strings.TrimPrefix(cursor, "p"))
	if err != nil || n < 0 || n >= len(pages) {
		return page{}, false
	}
	return pages[n], true
}

const discoverResult = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},` +
	`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake-modern","version":"1.2.3"}},"ttlMs":3600000,"cacheScope":"public"}`

// modernServer is a strict stateless 2026-07-28 server.
type modernServer struct {
	t     testing.TB
	pages []page
	sse   bool
	// discover, when set, answers server/discover instead.
	discover func(w http.ResponseWriter, q *rpcIn) bool
	// wantHeaders are checked on every request.
	wantHeaders http.Header
	// accept lists the revisions accepted (default 2026-07-28).
	accept []string

	mu       sync.Mutex
	methods  []string
	versions []string // Mcp-Protocol-Version per request
}

func (s *modernServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	q := readRPC(s.t, r)
	if q == nil {
		respondErr(w, 400, nil, mcpwire.CodeParseError, "parse error")
		return
	}
	s.mu.Lock()
	s.methods = append(s.methods, q.Method)
	s.versions = append(s.versions, r.Header.Get("MCP-Protocol-Version"))
	s.mu.Unlock()
	if msg := checkModernRequest(r, q); msg != "" {
		s.t.Errorf("server: %s: %s", q.Method, msg)
		respondErr(w, 400, q.ID, mcpwire.CodeHeaderMismatch, msg)
		return
	}
	for k, vs := range s.wantHeaders {
		if got := r.Header.Values(k); strings.Join(got, "\n") != strings.Join(vs, "\n") {
			s.t.Errorf("server: %s: header %s = %q, want %q", q.Method, k, got, vs)
		}
	}
	accept := s.accept
	if accept == nil {
		accept = []string{mcpwire.Rev20260728}
	}
	v, _ := q.meta()[mcpwire.MetaProtocolVersion].(string)
	if !contains(accept, v) {
		sup, _ := json.Marshal(accept)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":%s,"requested":%q}}}`, q.ID, sup, v)
		return
	}
	switch q.Method {
	case "server/discover":
		if s.discover != nil && s.discover(w, q) {
			return
		}
		res := discoverResult
		if s.accept != nil {
			sup, _ := json.Marshal(s.accept)
			res = strings.Replace(res, `["2026-07-28"]`, string(sup), 1)
		}
		respond(w, 200, q.ID, res)
	case "tools/list":
		c, has := q.cursor()
		p, ok := pageFor(s.pages, c, has)
		if !ok {
			respondErr(w, 400, q.ID, mcpwire.CodeInvalidParams, "Invalid cursor")
			return
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, q.ID, pageResult(p, true))
		if s.sse {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	default:
		respondErr(w, 404, q.ID, mcpwire.CodeMethodNotFound, "Method not found")
	}
}

// seen returns the methods and Mcp-Protocol-Version headers received.
func (s *modernServer) seen() (methods, versions []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...), append([]string(nil), s.versions...)
}

func (s *modernServer) methodsSeen() []string { m, _ := s.seen(); return m }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkModernRequest applies the 2026-07-28 request rules a strict server
// enforces; it returns what is wrong, or "".
func checkModernRequest(r *http.Request, q *rpcIn) string {
	switch {
	case r.Header.Get("Content-Type") != "application/json":
		return "Content-Type is " + r.Header.Get("Content-Type")
	case !strings.Contains(r.Header.Get("Accept"), "application/json") || !strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
		return "Accept is " + r.Header.Get("Accept")
	case q.JSONRPC != "2.0" || len(q.ID) == 0 || string(q.ID) == "null":
		return "not a JSON-RPC request"
	case r.Header.Get("Mcp-Method") != q.Method:
		return "Mcp-Method " + r.Header.Get("Mcp-Method") + " != body method " + q.Method
	case r.Header.Get("Mcp-Session-Id") != "":
		return "a session id on a modern request"
	}
	meta := q.meta()
	if meta == nil {
		return "params._meta missing"
	}
	v, ok := meta[mcpwire.MetaProtocolVersion].(string)
	if !ok {
		return "no protocolVersion in _meta"
	}
	if _, ok := meta[mcpwire.MetaClientCapabilities].(map[string]any); !ok {
		return "no clientCapabilities object in _meta"
	}
	ci, ok := meta[mcpwire.MetaClientInfo].(map[string]any)
	if !ok || ci["name"] == "" || ci["version"] == "" {
		return "no clientInfo in _meta"
	}
	if h := r.Header.Get("MCP-Protocol-Version"); h != v {
		return "MCP-Protocol-Version " + h + " != _meta " + v
	}
	if q.Method == "tools/list" && r.Header.Get("Mcp-Name") != "" {
		return "Mcp-Name on tools/list"
	}
	return ""
}

// legacyServer is a stateful 2025-11-25 server with sessions.
type legacyServer struct {
	t     testing.TB
	pages []page
	// discover answers server/discover sent without a session.
	discover func(w http.ResponseWriter, q *rpcIn)
	// sse answers requests as event streams, with a priming event, a
	// keep-alive comment, a notification and a server request first.
	sse         bool
	crlf        bool
	deleteAllow bool

	mu          sync.Mutex
	initialized bool
	deleted     bool
	methods     []string
}

const legacySession = "sess-4f2a"

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodDelete {
		if r.Header.Get("Mcp-Session-Id") != legacySession {
			s.t.Errorf("server: DELETE without the session id")
		}
		s.deleted = true
		if !s.deleteAllow {
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
		return
	}
	q := readRPC(s.t, r)
	if q == nil {
		w.WriteHeader(400)
		return
	}
	s.methods = append(s.methods, q.Method)
	if r.Header.Get("Mcp-Method") != q.Method {
		s.t.Errorf("server: Mcp-Method %q != %q", r.Header.Get("Mcp-Method"), q.Method)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if q.Method == "initialize" {
		if sid != "" {
			s.t.Errorf("server: initialize with a session id")
		}
		p := q.params()
		if p["protocolVersion"] != mcpwire.Rev20251125 {
			s.t.Errorf("server: initialize asked for %v", p["protocolVersion"])
		}
		if r.Header.Get("MCP-Protocol-Version") != "" {
			s.t.Errorf("server: MCP-Protocol-Version on initialize")
		}
		w.Header().Set("Mcp-Session-Id", legacySession)
		s.write(w, q.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake-legacy","version":"0.9"}}`)
		return
	}
	if sid == "" {
		if q.Method == "server/discover" && s.discover != nil {
			s.discover(w, q)
			return
		}
		respondErr(w, 400, nil, -32000, "Bad Request: Server not initialized")
		return
	}
	if sid != legacySession {
		w.WriteHeader(404)
		return
	}
	if v := r.Header.Get("MCP-Protocol-Version"); v != mcpwire.Rev20251125 {
		s.t.Errorf("server: %s: MCP-Protocol-Version %q", q.Method, v)
		w.WriteHeader(400)
		return
	}
	switch q.Method {
	case "notifications/initialized":
		s.initialized = true
		w.WriteHeader(http.StatusAccepted)
	case "tools/list":
		if !s.initialized {
			s.t.Errorf("server: tools/list before notifications/initialized")
		}
		if len(q.ID) == 0 {
			s.t.Errorf("server: tools/list without id")
		}
		if _, ok := q.meta()[mcpwire.MetaProtocolVersion]; ok {
			s.t.Errorf("server: modern _meta on a legacy tools/list")
		}
		c, has := q.cursor()
		p, ok := pageFor(s.pages, c, has)
		if !ok {
			respondErr(w, 200, q.ID, mcpwire.CodeInvalidParams, "Invalid cursor")
			return
		}
		s.write(w, q.ID, pageResult(p, false))
	default:
		respondErr(w, 200, q.ID, mcpwire.CodeMethodNotFound, "Method not found")
	}
}

func (s *legacyServer) write(w http.ResponseWriter, id json.RawMessage, result string) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
	if !s.sse {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
		return
	}
	nl := "\n"
	if s.crlf {
		nl = "\r\n"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := strings.Join([]string{
		"id: prime-1", "data: ", "",
		": keep-alive", "",
		`event: message`, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`, "",
		`event: message`, `data: {"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`, "",
		"event: message", "id: e-2", "data: " + body, "", "",
	}, nl)
	io.WriteString(w, ev)
}

func (s *legacyServer) snapshot() (methods []string, deleted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...), s.deleted
}

// toolsJSON returns n tool objects named prefix0..prefixN-1.
func toolsJSON(prefix string, n int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf(`{"name":"%s%d","description":"d\u00e9 %d","inputSchema":{"type":"object","properties":{"x":{"type":"number","maximum":1.0E2}}}}`, prefix, i, i))
	}
	return strings.Join(parts, ",")
}

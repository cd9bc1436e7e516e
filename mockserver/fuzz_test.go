package mockserver

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpwire"

	"github.com/mcpdrift/mcpdrift/safetext"
)

// Header presence bits of FuzzHandler's flags.
const (
	fPV = 1 << iota
	fMethod
	fName
	fAccept
	fCT
	fSession
	fAuth
	fAuthServer
)

var fuzzMethods = []string{http.MethodPost, http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodOptions}

func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// FuzzHandler feeds arbitrary bodies and headers to the HTTP handler. It
// must never panic, must always answer with a known status and a
// well-formed body (JSON for application/json, parseable SSE whose data
// is JSON), and must never let a request through (2xx) that lacks what a
// conformant client sends: a POST with Content-Type application/json and
// an Accept listing both types, and then either a legacy initialize, a
// legacy request on the live session with its MCP-Protocol-Version, or a
// modern request whose MCP-Protocol-Version, Mcp-Method and Mcp-Name
// headers match its body and whose _meta carries the required fields.
func FuzzHandler(f *testing.F) {
	tools := append(simpleTools("t", 3),
		json.RawMessage(`{"name":"=?base64?abc?=","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"h\u00e9","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}`))
	plain := MustNew(Config{Tools: tools, PageSize: 2, EmptyStringCursor: true})
	authed := MustNew(Config{Tools: tools, RequireAuth: "tok", AnonymousTools: simpleTools("anon", 1), Response: SSEResponses})
	sid := map[*Server]string{}
	initSession := func(s *Server) {
		if id, ok := sid[s]; ok {
			if _, live := s.session(id); live {
				return
			}
		}
		h := baseHeaders()
		if s == authed {
			h.Set("Authorization", "Bearer tok")
		}
		rec := serve(s, http.MethodPost, legacyInitBody("2025-11-25"), h)
		id := rec.Header().Get(mcpwire.HeaderSessionID)
		h = legacyHeaders(id, "2025-11-25")
		if s == authed {
			h.Set("Authorization", "Bearer tok")
		}
		if rec := serve(s, http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); rec.Code != 202 {
			f.Fatalf("session setup: %d", rec.Code)
		}
		sid[s] = id
	}

	all := uint8(fPV | fMethod | fName | fAccept | fCT)
	f.Add(modernBody(1, "tools/list", ""), uint8(0), modern, "tools/list", "", "application/json, text/event-stream", "application/json", all)
	f.Add(modernBody(1, "tools/call", `"name":"t1"`), uint8(0), modern, "tools/call", "t1", "application/json, text/event-stream", "application/json", all)
	f.Add(modernBody(1, "tools/call", `"name":"=?base64?abc?="`), uint8(0), modern, "tools/call", "=?base64?abc?=", "application/json, text/event-stream", "application/json", all)
	f.Add(modernBody(1, "tools/call", `"name":"hé","arguments":{"r":"x"}`), uint8(0), modern, "tools/call", "=?base64?aMOp?=", "application/json, text/event-stream", "application/json", all)
	f.Add(modernBody(1, "tools/list", `"cursor":""`), uint8(0), modern, "tools/list", "", "application/json, text/event-stream", "application/json", all|fAuthServer)
	f.Add(modernBody(1, "server/discover", ""), uint8(0), "2099-01-01", "server/discover", "", "application/json, text/event-stream", "application/json", all|fAuth|fAuthServer)
	f.Add(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, uint8(0), modern, "", "", "application/json, text/event-stream", "application/json", all)
	f.Add(legacyInitBody("2025-06-18"), uint8(0), "", "", "", "application/json, text/event-stream", "application/json", uint8(fAccept|fCT))
	f.Add(listBody, uint8(0), "2025-11-25", "", "", "application/json, text/event-stream", "application/json", uint8(fAccept|fCT|fSession|fPV))
	f.Add(listBody, uint8(2), "2025-11-25", "", "", "", "", uint8(fSession|fPV))
	f.Add(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, uint8(0), "", "", "", "*/*", "text/plain", uint8(fAccept|fCT))
	// Near misses: each differs from an accepted request in one header.
	f.Add(modernBody(1, "tools/list", ""), uint8(0), modern, "tools/lisX", "", "application/json, text/event-stream", "application/json", all)
	f.Add(modernBody(1, "tools/list", ""), uint8(0), "2025-11-25", "tools/list", "", "application/json, text/event-stream", "application/json", all)
	f.Add(modernBody(1, "tools/call", `"name":"t1"`), uint8(0), modern, "tools/call", "t2", "application/json, text/event-stream", "application/json", all)
	f.Add(modernBody(1, "tools/call", `"name":"t1"`), uint8(0), modern, "tools/call", "t1", "application/json, text/event-stream", "application/json", all&^fName)
	f.Add(modernBody(1, "tools/list", ""), uint8(0), modern, "tools/list", "", "application/json", "application/json", all)
	f.Add(listBody, uint8(0), "2025-06-18", "", "", "application/json, text/event-stream", "application/json", uint8(fAccept|fCT|fSession|fPV))
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{}}`, uint8(1), "", "", "", "", "", uint8(0))

	f.Fuzz(func(t *testing.T, body string, hm uint8, pv, mm, mn, accept, ct string, flags uint8) {
		for _, v := range []string{pv, mm, mn, accept, ct} {
			if !validHeaderValue(v) {
				return // the HTTP server refuses such headers before any handler runs
			}
		}
		s := plain
		if flags&fAuthServer != 0 {
			s = authed
		}
		initSession(s)
		method := fuzzMethods[int(hm)%len(fuzzMethods)]
		h := http.Header{}
		opt := func(bit uint8, k, v string) {
			if flags&bit != 0 {
				h.Set(k, v)
			}
		}
		opt(fPV, mcpwire.HeaderProtocolVersion, pv)
		opt(fMethod, mcpwire.HeaderMethod, mm)
		opt(fName, mcpwire.HeaderName, mn)
		opt(fAccept, "Accept", accept)
		opt(fCT, "Content-Type", ct)
		opt(fSession, mcpwire.HeaderSessionID, sid[s])
		opt(fAuth, "Authorization", "Bearer tok")
		rec := serve(s, method, body, h)
		checkResponse(t, rec)
		if rec.Code/100 != 2 {
			return
		}
		if why := bypass(s, method, body, h, sid[s]); why != "" {
			t.Fatalf("%s accepted (%d) a request that %s\nheaders %v\nbody %q", method, rec.Code, why, h, safetext.Clip(body, 300))
		}
	})
}

func serve(s *Server, method, body string, h http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header = h.Clone()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

var knownStatus = map[int]bool{200: true, 202: true, 400: true, 401: true, 403: true, 404: true, 405: true, 406: true, 413: true, 415: true, 500: true}

func checkResponse(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if !knownStatus[rec.Code] {
		t.Fatalf("status %d", rec.Code)
	}
	b := rec.Body.Bytes()
	ct, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	switch {
	case rec.Code == 202:
		if len(b) != 0 {
			t.Fatalf("202 with a body %q", b)
		}
	case ct == "application/json":
		var m rpcMsg
		if err := json.Unmarshal(b, &m); err != nil || (m.Error == nil) == (m.Result == nil) {
			t.Fatalf("%d body is not a JSON-RPC response: %q", rec.Code, safetext.Clip(string(b), 300))
		}
		if m.Error != nil && rec.Code == 200 && m.Error.Code == 0 {
			t.Fatal("error code 0")
		}
		if rec.Code >= 400 && m.Error == nil {
			t.Fatalf("%d with a result", rec.Code)
		}
	case ct == "text/event-stream":
		if rec.Code != 200 {
			t.Fatalf("SSE with status %d", rec.Code)
		}
		for _, e := range parseSSE(t, b) {
			if e.data != "" && !json.Valid([]byte(e.data)) {
				t.Fatalf("SSE data is not JSON: %q", safetext.Clip(e.data, 300))
			}
		}
	case rec.Code == 200 && len(b) == 0:
		// DELETE of a session
	default:
		t.Fatalf("%d with Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// bypass re-derives, independently of the server, whether an accepted
// request carried everything it had to; it returns what was missing.
func bypass(s *Server, method, body string, h http.Header, sid string) string {
	if s.cfg.RequireAuth != "" && h.Get("Authorization") != "Bearer "+s.cfg.RequireAuth && h.Get("Authorization") != "" {
		return "had a wrong token"
	}
	sessionOK := len(h.Values(mcpwire.HeaderSessionID)) == 1 && h.Get(mcpwire.HeaderSessionID) == sid &&
		len(h.Values(mcpwire.HeaderProtocolVersion)) == 1 && h.Get(mcpwire.HeaderProtocolVersion) == "2025-11-25"
	if method == http.MethodDelete {
		if !sessionOK {
			return "ended a session without its id and version"
		}
		return ""
	}
	if method != http.MethodPost {
		return "was not a POST"
	}
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err != nil || mt != "application/json" {
		return "had no JSON Content-Type"
	}
	if !acceptsBoth(h.Values("Accept")) {
		return "did not Accept both types"
	}
	var msg struct {
		ID     json.RawMessage            `json:"id"`
		Method *string                    `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		return "was not a JSON object (encoding/json: " + err.Error() + ")"
	}
	if msg.Method == nil {
		return "had no method"
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(msg.Params["_meta"], &meta)
	if *msg.Method == "initialize" && meta == nil {
		return "" // a legacy initialize needs no session
	}
	if sessionOK {
		return "" // a legacy request on the live session
	}
	// Otherwise: a modern request or notification.
	pv := h.Values(mcpwire.HeaderProtocolVersion)
	if len(pv) != 1 {
		return "had no single MCP-Protocol-Version and no session"
	}
	if msg.ID == nil {
		return "" // a notification: only the version header is defined
	}
	var bodyPV string
	if json.Unmarshal(meta[mcpwire.MetaProtocolVersion], &bodyPV) != nil || bodyPV != strings.TrimSpace(pv[0]) {
		return "had MCP-Protocol-Version unequal to _meta"
	}
	var caps map[string]any
	if json.Unmarshal(meta[mcpwire.MetaClientCapabilities], &caps) != nil || caps == nil {
		return "had no clientCapabilities object"
	}
	if mm := h.Values(mcpwire.HeaderMethod); len(mm) != 1 || strings.Trim(mm[0], " \t") != *msg.Method {
		return "had Mcp-Method unequal to method"
	}
	if *msg.Method == "tools/call" {
		var name string
		_ = json.Unmarshal(msg.Params["name"], &name)
		mn := h.Values(mcpwire.HeaderName)
		if len(mn) != 1 {
			return "had no Mcp-Name"
		}
		if got, err := mcpwire.DecodeHeaderValue(strings.Trim(mn[0], " \t")); err != nil || got != name {
			return "had Mcp-Name unequal to params.name"
		}
	}
	return ""
}

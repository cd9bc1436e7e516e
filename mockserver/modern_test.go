package mockserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/mcpwire"
)

func TestModernToolsListExactBytes(t *testing.T) {
	s, ts := newHTTP(t, Config{Tools: v1Tools(t), ServerName: "acme", ServerVersion: "9"})
	r := post(t, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", ""))
	m := wantOK(t, r)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	sameRaw(t, r.body, examples.V1)
	lr := listOf(t, m)
	if lr.ResultType == nil || *lr.ResultType != "complete" || lr.TTLMs == nil || *lr.TTLMs != 0 || lr.CacheScope == nil || *lr.CacheScope != "public" {
		t.Fatalf("cache/result fields: %s", m.Result)
	}
	if lr.NextCursor != nil {
		t.Fatalf("one page expected, got nextCursor %q", *lr.NextCursor)
	}
	if !bytes.Contains(lr.Meta, []byte(`"io.modelcontextprotocol/serverInfo":{"name":"acme","version":"9"}`)) {
		t.Fatalf("_meta %s", lr.Meta)
	}
	if r.header.Get(mcpwire.HeaderSessionID) != "" {
		t.Fatal("a modern response must not carry Mcp-Session-Id")
	}
	// The raw tool bytes appear verbatim in the response body.
	for _, tool := range v1Tools(t) {
		if !bytes.Contains(r.body, tool) {
			t.Fatalf("tool bytes not served verbatim: %s", tool)
		}
	}
	l := s.Log()
	if len(l) != 1 || !l[0].Passed || l[0].Era != "modern" || !l[0].ClientInfoSent || l[0].Method != "tools/list" || l[0].ProtocolVersion != modern {
		t.Fatalf("log %+v", l)
	}
}

func TestModernOmitCacheFieldsAndScope(t *testing.T) {
	_, ts := newHTTP(t, Config{Tools: simpleTools("t", 1), OmitCacheFields: true})
	lr := listOf(t, wantOK(t, post(t, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", ""))))
	if lr.TTLMs != nil || lr.CacheScope != nil || lr.ResultType == nil {
		t.Fatalf("OmitCacheFields: %+v", lr)
	}
	_, ts = newHTTP(t, Config{TTLMs: 60000, CacheScope: "private"})
	r := post(t, ts.URL, modernBody(1, "server/discover", ""), modernHeaders("server/discover", ""))
	lr = listOf(t, wantOK(t, r))
	if *lr.TTLMs != 60000 || *lr.CacheScope != "private" {
		t.Fatalf("discover cache fields: %s", r.body)
	}
}

func TestDiscover(t *testing.T) {
	_, ts := newHTTP(t, Config{Instructions: "be nice"})
	m := wantOK(t, post(t, ts.URL, modernBody(7, "server/discover", ""), modernHeaders("server/discover", "")))
	var d struct {
		ResultType        string          `json:"resultType"`
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions"`
		TTLMs             *int64          `json:"ttlMs"`
		CacheScope        string          `json:"cacheScope"`
		Meta              map[string]json.RawMessage
	}
	if err := json.Unmarshal(m.Result, &d); err != nil {
		t.Fatal(err)
	}
	if string(m.ID) != "7" || d.ResultType != "complete" || strings.Join(d.SupportedVersions, ",") != strings.Join(DefaultVersions, ",") ||
		string(d.Capabilities) != `{"tools":{"listChanged":false}}` || d.Instructions != "be nice" || d.TTLMs == nil || d.CacheScope != "public" {
		t.Fatalf("discover: %s", m.Result)
	}
	if !bytes.Contains(m.Result, []byte(`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpdrift-mockserver","version":"0.0.0"}}`)) {
		t.Fatalf("serverInfo: %s", m.Result)
	}
}

// TestModernStrictness: every required header and _meta field, removed or
// altered one at a time, is refused with the right status and code.
func TestModernStrictness(t *testing.T) {
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"=?base64?abc?=","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"h\u00e9llo w\u00f6rld","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":" padded ","inputSchema":{"type":"object"}}`),
	}
	_, ts := newHTTP(t, Config{Tools: tools})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := func(name string) string {
		n, _ := json.Marshal(name)
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(n) + `,"arguments":{},` + meta + `}}`
	}
	okBody := call("echo")
	type tc struct {
		name   string
		body   string
		edit   func(h http.Header)
		status int
		code   int // 0: success
	}
	del := func(k string) func(http.Header) { return func(h http.Header) { h.Del(k) } }
	set := func(k, v string) func(http.Header) { return func(h http.Header) { h.Set(k, v) } }
	cases := []tc{
		{"valid", okBody, nil, 200, 0},
		// _meta fields (-32602)
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, nil, 400, -32602},
		{"no _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, nil, 400, -32602},
		{"_meta not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":[]}}`, nil, 400, -32602},
		{"no protocolVersion", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`, nil, 400, -32602},
		{"protocolVersion not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}`, nil, 400, -32602},
		{"no clientCapabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, nil, 400, -32602},
		{"clientCapabilities null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}}`, nil, 400, -32602},
		{"clientInfo without version", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x"}}}}`, nil, 400, -32602},
		{"bad logLevel", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}}`, nil, 400, -32602},
		{"params.name missing", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `}}`, nil, 400, -32602},
		{"unknown tool", call("nope"), set(mcpwire.HeaderName, "nope"), 400, -32602},
		// standard headers (-32020)
		{"no MCP-Protocol-Version", okBody, del(mcpwire.HeaderProtocolVersion), 400, -32020},
		{"MCP-Protocol-Version differs", okBody, set(mcpwire.HeaderProtocolVersion, "2025-11-25"), 400, -32020},
		{"MCP-Protocol-Version repeated", okBody, func(h http.Header) { h.Add(mcpwire.HeaderProtocolVersion, modern) }, 400, -32020},
		{"no Mcp-Method", okBody, del(mcpwire.HeaderMethod), 400, -32020},
		{"Mcp-Method differs", okBody, set(mcpwire.HeaderMethod, "tools/list"), 400, -32020},
		{"Mcp-Method case differs", okBody, set(mcpwire.HeaderMethod, "TOOLS/CALL"), 400, -32020},
		{"Mcp-Method with surrounding space", okBody, set(mcpwire.HeaderMethod, " tools/call "), 200, 0},
		{"no Mcp-Name", okBody, del(mcpwire.HeaderName), 400, -32020},
		{"Mcp-Name differs", okBody, set(mcpwire.HeaderName, "other"), 400, -32020},
		{"Mcp-Name repeated", okBody, func(h http.Header) { h.Add(mcpwire.HeaderName, "echo") }, 400, -32020},
		{"Mcp-Name base64 of the name", okBody, set(mcpwire.HeaderName, "=?base64?ZWNobw==?="), 200, 0},
		{"Mcp-Name base64 of another name", okBody, set(mcpwire.HeaderName, "=?base64?b3RoZXI=?="), 400, -32020},
		{"Mcp-Name bad padding", okBody, set(mcpwire.HeaderName, "=?base64?ZWNobw?="), 400, -32020},
		{"Mcp-Name bad base64 characters", okBody, set(mcpwire.HeaderName, "=?base64?ZW*obw==?="), 400, -32020},
		{"Mcp-Name upper-case sentinel is literal", okBody, set(mcpwire.HeaderName, "=?BASE64?ZWNobw==?="), 400, -32020},
		{"Mcp-Name sentinel-looking name sent plain", call("=?base64?abc?="), set(mcpwire.HeaderName, "=?base64?abc?="), 400, -32020},
		{"Mcp-Name sentinel-looking name encoded", call("=?base64?abc?="), set(mcpwire.HeaderName, mcpwire.EncodeHeaderValue("=?base64?abc?=")), 200, 0},
		{"Mcp-Name non-ASCII encoded", call("héllo wörld"), set(mcpwire.HeaderName, mcpwire.EncodeHeaderValue("héllo wörld")), 200, 0},
		{"Mcp-Name non-ASCII raw", call("héllo wörld"), set(mcpwire.HeaderName, "héllo wörld"), 400, -32020},
		{"Mcp-Name padded name encoded", call(" padded "), set(mcpwire.HeaderName, mcpwire.EncodeHeaderValue(" padded ")), 200, 0},
		{"Mcp-Name padded name raw (trimmed)", call(" padded "), set(mcpwire.HeaderName, " padded "), 400, -32020},
		// transport
		{"Accept without event-stream", okBody, set("Accept", "application/json"), 406, -32600},
		{"Accept without json", okBody, set("Accept", "text/event-stream"), 406, -32600},
		{"no Accept", okBody, del("Accept"), 406, -32600},
		{"Accept json q=0", okBody, set("Accept", "application/json;q=0, text/event-stream"), 406, -32600},
		{"Accept wildcard only", okBody, set("Accept", "*/*"), 406, -32600},
		{"Content-Type text/plain", okBody, set("Content-Type", "text/plain"), 415, -32600},
		{"no Content-Type", okBody, del("Content-Type"), 415, -32600},
		{"Content-Type with charset", okBody, set("Content-Type", "application/json; charset=utf-8"), 200, 0},
		{"batch", "[" + okBody + "]", nil, 400, -32600},
		{"parse error", `{"jsonrpc":"2.0",`, nil, 400, -32700},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}`, nil, 400, -32700},
		{"null id", strings.Replace(okBody, `"id":1`, `"id":null`, 1), nil, 400, -32600},
		{"fractional id", strings.Replace(okBody, `"id":1`, `"id":1.5`, 1), nil, 400, -32600},
		{"jsonrpc 1.0", strings.Replace(okBody, `"2.0"`, `"1.0"`, 1), nil, 400, -32600},
		{"a response", `{"jsonrpc":"2.0","id":1,"result":{},"params":{` + meta + `}}`, nil, 400, -32600},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := modernHeaders("tools/call", "echo")
			if c.edit != nil {
				c.edit(h)
			}
			r := post(t, ts.URL, c.body, h)
			if c.code == 0 {
				m := wantOK(t, r)
				if !bytes.Contains(m.Result, []byte(`"content":[{"type":"text","text":"ok"}]`)) || !bytes.Contains(m.Result, []byte(`"resultType":"complete"`)) {
					t.Fatalf("tools/call result %s", m.Result)
				}
				return
			}
			wantErr(t, r, c.status, c.code)
		})
	}
}

// TestModernHeaderRulesOtherMethods: Mcp-Name also guards resources/read
// (params.uri) and prompts/get; those methods are not implemented, so a
// well-formed request is 404 -32601.
func TestModernHeaderRulesOtherMethods(t *testing.T) {
	_, ts := newHTTP(t, Config{})
	uri := "file:///tmp/a b.txt"
	body := modernBody(1, "resources/read", `"uri":"`+uri+`"`)
	wantErr(t, post(t, ts.URL, body, modernHeaders("resources/read", "")), 400, -32020)
	wantErr(t, post(t, ts.URL, body, modernHeaders("resources/read", "file:///tmp/other")), 400, -32020)
	wantErr(t, post(t, ts.URL, body, modernHeaders("resources/read", uri)), 404, -32601)
	body = modernBody(1, "prompts/get", `"name":"p"`)
	wantErr(t, post(t, ts.URL, body, modernHeaders("prompts/get", "")), 400, -32020)
	wantErr(t, post(t, ts.URL, body, modernHeaders("prompts/get", "p")), 404, -32601)
	// tools/list needs no Mcp-Name.
	wantOK(t, post(t, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", "")))
}

func TestModernVersions(t *testing.T) {
	_, ts := newHTTP(t, Config{})
	for _, v := range []string{"2099-01-01", "2025-11-25", "bogus"} {
		h := modernHeaders("tools/list", "")
		h.Set(mcpwire.HeaderProtocolVersion, v)
		r := post(t, ts.URL, modernBodyV(3, "tools/list", "", v), h)
		wantErr(t, r, 400, -32022)
		m := decode(t, r.body)
		var d struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		if err := json.Unmarshal(m.Error.Data, &d); err != nil || d.Requested != v || strings.Join(d.Supported, ",") != strings.Join(DefaultVersions, ",") || string(m.ID) != "3" {
			t.Fatalf("%s: data %s id %s", v, m.Error.Data, m.ID)
		}
	}
	// A custom list.
	_, ts = newHTTP(t, Config{Era: ModernOnly, SupportedVersions: []string{"2027-01-01", modern, "2025-11-25"}})
	h := modernHeaders("tools/list", "")
	h.Set(mcpwire.HeaderProtocolVersion, "2027-01-01")
	wantOK(t, post(t, ts.URL, modernBodyV(1, "tools/list", "", "2027-01-01"), h))
	r := post(t, ts.URL, modernBodyV(1, "server/discover", "", modern), modernHeaders("server/discover", ""))
	if !bytes.Contains(r.body, []byte(`"supportedVersions":["2027-01-01","2026-07-28"]`)) {
		t.Fatalf("modern-only discover lists legacy versions: %s", r.body)
	}
}

func TestModernUnknownMethodAndHTTPMethods(t *testing.T) {
	for _, era := range []Era{DualEra, ModernOnly} {
		_, ts := newHTTP(t, Config{Era: era})
		for _, method := range []string{"nope/nope", "ping", "logging/setLevel", "subscriptions/listen", "prompts/list"} {
			wantErr(t, post(t, ts.URL, modernBody(1, method, ""), modernHeaders(method, "")), 404, -32601)
		}
		r := do(t, nil, http.MethodGet, ts.URL, "", http.Header{"Accept": {"text/event-stream"}})
		wantErr(t, r, 405, -32600)
		if !strings.HasPrefix(r.header.Get("Allow"), "POST") {
			t.Fatalf("Allow %q", r.header.Get("Allow"))
		}
		wantErr(t, do(t, nil, http.MethodPut, ts.URL, "", nil), 405, -32600)
	}
	_, ts := newHTTP(t, Config{Era: ModernOnly})
	wantErr(t, do(t, nil, http.MethodDelete, ts.URL, "", http.Header{mcpwire.HeaderSessionID: {"x"}}), 405, -32600)
	// initialize to a modern-only server: 404 -32601 naming the versions.
	r := post(t, ts.URL, legacyInitBody("2025-11-25"), baseHeaders())
	wantErr(t, r, 404, -32601)
	if !bytes.Contains(r.body, []byte(`"supported":["2026-07-28"]`)) {
		t.Fatalf("initialize refusal names no versions: %s", r.body)
	}
}

func TestModernIgnoresSessionAndNotifications(t *testing.T) {
	s, ts := newHTTP(t, Config{Tools: simpleTools("t", 2)})
	h := modernHeaders("tools/list", "")
	h.Set(mcpwire.HeaderSessionID, "stale-session")
	r := post(t, ts.URL, modernBody(1, "tools/list", ""), h)
	wantOK(t, r)
	if r.header.Get(mcpwire.HeaderSessionID) != "" {
		t.Fatal("session id echoed")
	}
	// A notification is 202 with a version header, refused without.
	n := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
	h = modernHeaders("notifications/cancelled", "")
	if r := post(t, ts.URL, n, h); r.status != http.StatusAccepted || len(r.body) != 0 {
		t.Fatalf("notification: %v", r)
	}
	h.Del(mcpwire.HeaderProtocolVersion)
	wantErr(t, post(t, ts.URL, n, h), 400, -32020)
	h = modernHeaders("notifications/other", "")
	wantErr(t, post(t, ts.URL, n, h), 400, -32020)
	if s.Log()[0].Session != "" {
		t.Fatal("modern log entry has a session")
	}
}

func TestClientInfoRecorded(t *testing.T) {
	s, ts := newHTTP(t, Config{})
	wantOK(t, post(t, ts.URL, modernBody(1, "tools/list", ""), modernHeaders("tools/list", "")))
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	wantOK(t, post(t, ts.URL, body, modernHeaders("tools/list", "")))
	l := s.Log()
	if !l[0].ClientInfoSent || l[0].ClientInfo != `{"name":"test","version":"1"}` || l[1].ClientInfoSent {
		t.Fatalf("clientInfo recording: %+v / %+v", l[0], l[1])
	}
	if l[0].Headers.Get(mcpwire.HeaderMethod) != "tools/list" || l[0].Headers.Get("Accept") == "" {
		t.Fatalf("headers not logged: %v", l[0].Headers)
	}
}

func TestParamHeaders(t *testing.T) {
	tool := `{"name":"deploy","inputSchema":{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},` +
		`"count":{"type":"integer","x-mcp-header":"Count"},` +
		`"dry":{"type":"boolean","x-mcp-header":"Dry"},` +
		`"opts":{"type":"object","properties":{"tier":{"type":"string","x-mcp-header":"Tier"}}}}}}`
	_, ts := newHTTP(t, Config{Tools: []json.RawMessage{json.RawMessage(tool)}})
	body := modernBody(1, "tools/call", `"name":"deploy","arguments":{"region":"eu west","count":42,"dry":true,"opts":{"tier":"gold"}}`)
	full := func() http.Header {
		h := modernHeaders("tools/call", "deploy")
		h.Set("Mcp-Param-Region", "eu west")
		h.Set("Mcp-Param-Count", "42.0")
		h.Set("Mcp-Param-Dry", "true")
		h.Set("Mcp-Param-Tier", "=?base64?Z29sZA==?=")
		return h
	}
	wantOK(t, post(t, ts.URL, body, full()))
	for _, edit := range []func(http.Header){
		func(h http.Header) { h.Del("Mcp-Param-Region") },
		func(h http.Header) { h.Set("Mcp-Param-Region", "us") },
		func(h http.Header) { h.Set("Mcp-Param-Count", "43") },
		func(h http.Header) { h.Set("Mcp-Param-Dry", "True") },
		func(h http.Header) { h.Del("Mcp-Param-Tier") },
		func(h http.Header) { h.Set("Mcp-Param-Tier", "=?base64?Z29sZA?=") },
	} {
		h := full()
		edit(h)
		wantErr(t, post(t, ts.URL, body, h), 400, -32020)
	}
	// Absent or null arguments need no header.
	body = modernBody(1, "tools/call", `"name":"deploy","arguments":{"region":null}`)
	wantOK(t, post(t, ts.URL, body, modernHeaders("tools/call", "deploy")))
}

func TestOriginAndBodyLimit(t *testing.T) {
	_, ts := newHTTP(t, Config{MaxBodyBytes: 1 << 20})
	h := modernHeaders("tools/list", "")
	h.Set("Origin", "https://evil.example")
	wantErr(t, post(t, ts.URL, modernBody(1, "tools/list", ""), h), 403, -32600)
	h.Set("Origin", "http://localhost:3000")
	wantOK(t, post(t, ts.URL, modernBody(1, "tools/list", ""), h))
	h.Set("Origin", "null")
	wantErr(t, post(t, ts.URL, modernBody(1, "tools/list", ""), h), 403, -32600)
	big := modernBody(1, "tools/list", `"pad":"`+strings.Repeat("x", 1<<20)+`"`)
	wantErr(t, post(t, ts.URL, big, modernHeaders("tools/list", "")), 413, -32600)
}

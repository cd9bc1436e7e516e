package mockserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/mcpwire"

	"github.com/mcpdrift/mcpdrift/safetext"
)

const listBody = `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`

func TestLegacyLifecycle(t *testing.T) {
	s, ts := newHTTP(t, Config{Tools: v1Tools(t)})
	u := ts.URL

	// Nothing before initialize.
	r := post(t, u, listBody, baseHeaders())
	wantErr(t, r, 400, -32000)
	if m := decode(t, r.body); m.Error.Message != "Bad Request: Server not initialized" {
		t.Fatalf("message %q", m.Error.Message)
	}
	wantErr(t, post(t, u, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, baseHeaders()), 400, -32000)

	// initialize: bad params are refused and mint no session.
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"a","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a"}}}`,
	} {
		r := post(t, u, bad, baseHeaders())
		wantErr(t, r, 400, -32602)
		if r.header.Get(mcpwire.HeaderSessionID) != "" {
			t.Fatal("a refused initialize minted a session")
		}
	}
	h := baseHeaders()
	h.Set(mcpwire.HeaderSessionID, "leftover")
	wantErr(t, post(t, u, legacyInitBody("2025-11-25"), h), 400, -32600)

	r = post(t, u, legacyInitBody("2025-11-25"), baseHeaders())
	m := wantOK(t, r)
	sid := r.header.Get(mcpwire.HeaderSessionID)
	if !strings.HasPrefix(sid, "mock-") {
		t.Fatalf("session id %q", sid)
	}
	var ir struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      struct{ Name string }
	}
	if err := json.Unmarshal(m.Result, &ir); err != nil || ir.ProtocolVersion != "2025-11-25" || ir.ServerInfo.Name != "mcpdrift-mockserver" {
		t.Fatalf("initialize result %s", m.Result)
	}
	hv := legacyHeaders(sid, "2025-11-25")

	// tools/list before notifications/initialized is refused; ping is not.
	wantErr(t, post(t, u, listBody, hv), 400, -32000)
	wantOK(t, post(t, u, `{"jsonrpc":"2.0","id":"p","method":"ping"}`, hv))
	// notifications/initialized needs the version header too.
	wantErr(t, post(t, u, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacyHeaders(sid, "")), 400, -32000)
	if r := post(t, u, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hv); r.status != 202 || len(r.body) != 0 {
		t.Fatalf("initialized: %v", r)
	}

	// The logging capability it offers is served (the MCP Inspector sets
	// a level as soon as it connects).
	wantOK(t, post(t, u, `{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"info"}}`, hv))
	r = post(t, u, listBody, hv)
	m = wantOK(t, r)
	sameRaw(t, r.body, examples.V1)
	lr := listOf(t, m)
	if lr.ResultType != nil || lr.TTLMs != nil || lr.CacheScope != nil || lr.Meta != nil {
		t.Fatalf("legacy result carries modern fields: %s", safetext.Clip(string(m.Result), 200))
	}

	// Session and version rules after initialize.
	wantErr(t, post(t, u, listBody, legacyHeaders("", "2025-11-25")), 400, -32000)
	wantErr(t, post(t, u, listBody, legacyHeaders("mock-unknown", "2025-11-25")), 404, -32001)
	wantErr(t, post(t, u, listBody, legacyHeaders(sid, "")), 400, -32000)
	wantErr(t, post(t, u, listBody, legacyHeaders(sid, "2025-06-18")), 400, -32000)
	wantErr(t, post(t, u, listBody, legacyHeaders(sid, "2026-07-28")), 400, -32000)
	hh := legacyHeaders(sid, "2025-11-25")
	hh.Add(mcpwire.HeaderSessionID, sid)
	wantErr(t, post(t, u, listBody, hh), 400, -32000)
	bad := legacyHeaders(sid, "2025-11-25")
	bad.Set("Accept", "application/json")
	wantErr(t, post(t, u, listBody, bad), 406, -32600)

	// Methods.
	wantErr(t, post(t, u, `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, hv), 200, -32601)
	wantErr(t, post(t, u, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`, hv), 200, -32602)
	m = wantOK(t, post(t, u, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_issues","arguments":{"repo":"a/b"}}}`, hv))
	if string(m.Result) != `{"content":[{"type":"text","text":"ok"}]}` {
		t.Fatalf("tools/call %s", m.Result)
	}
	wantErr(t, post(t, u, `{"jsonrpc":"2.0","id":1,"result":{}}`, hv), 400, -32600)
	wantErr(t, post(t, u, `[`+listBody+`]`, hv), 400, -32600)
	wantErr(t, do(t, nil, http.MethodGet, u, "", hv), 405, -32600)

	// DELETE ends the session; then 404.
	wantErr(t, do(t, nil, http.MethodDelete, u, "", legacyHeaders("", "")), 400, -32000)
	if r := do(t, nil, http.MethodDelete, u, "", hv); r.status != 200 {
		t.Fatalf("DELETE: %v", r)
	}
	wantErr(t, post(t, u, listBody, hv), 404, -32001)
	wantErr(t, do(t, nil, http.MethodDelete, u, "", hv), 404, -32001)

	var sawInit bool
	for _, e := range s.Log() {
		if e.Method == "initialize" && e.Passed {
			sawInit = e.ClientInfoSent && e.Session == sid && e.Era == "legacy"
		}
	}
	if !sawInit {
		t.Fatal("initialize not logged with its session")
	}
}

func TestLegacyNegotiation(t *testing.T) {
	_, ts := newHTTP(t, Config{})
	for req, want := range map[string]string{
		"2025-06-18": "2025-06-18",
		"2025-03-26": "2025-03-26",
		"2024-01-01": "2025-11-25",
		"2026-07-28": "2025-11-25",
	} {
		r := post(t, ts.URL, legacyInitBody(req), baseHeaders())
		m := wantOK(t, r)
		if !bytes.Contains(m.Result, []byte(`"protocolVersion":"`+want+`"`)) {
			t.Fatalf("%s: %s", req, m.Result)
		}
	}
	// 2025-03-26 sessions may omit the header (but not send a wrong one).
	sid := legacyInit(t, ts.URL, "2025-03-26")
	wantOK(t, post(t, ts.URL, listBody, legacyHeaders(sid, "")))
	wantOK(t, post(t, ts.URL, listBody, legacyHeaders(sid, "2025-03-26")))
	wantErr(t, post(t, ts.URL, listBody, legacyHeaders(sid, "2025-06-18")), 400, -32000)
	// 2025-06-18 sessions must send it.
	sid = legacyInit(t, ts.URL, "2025-06-18")
	wantErr(t, post(t, ts.URL, listBody, legacyHeaders(sid, "")), 400, -32000)
	wantOK(t, post(t, ts.URL, listBody, legacyHeaders(sid, "2025-06-18")))
}

// TestLegacyOnly: no server/discover; a modern request is answered the
// way a legacy TypeScript server answers it (not a modern error).
func TestLegacyOnly(t *testing.T) {
	_, ts := newHTTP(t, Config{Era: LegacyOnly, Tools: simpleTools("t", 1)})
	for _, method := range []string{"server/discover", "tools/list"} {
		r := post(t, ts.URL, modernBody(1, method, ""), modernHeaders(method, ""))
		wantErr(t, r, 400, -32000)
		if mcpwire.IsModernErrorCode(errCode(t, r.body)) {
			t.Fatal("modern error code from a legacy-only server")
		}
	}
	sid := legacyInit(t, ts.URL, "2025-11-25")
	wantErr(t, post(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, legacyHeaders(sid, "2025-11-25")), 200, -32601)
	wantOK(t, post(t, ts.URL, listBody, legacyHeaders(sid, "2025-11-25")))
	// A modern _meta on a session request does not make it modern here.
	wantOK(t, post(t, ts.URL, modernBody(2, "tools/list", ""), legacyHeaders(sid, "2025-11-25")))
}

// TestDualEraRouting: a dual-era server answers a modern request
// statelessly even with a stale session header, and legacy requests with
// session rules.
func TestDualEraRouting(t *testing.T) {
	_, ts := newHTTP(t, Config{Tools: simpleTools("t", 1)})
	sid := legacyInit(t, ts.URL, "2025-11-25")
	h := modernHeaders("tools/list", "")
	h.Set(mcpwire.HeaderSessionID, sid)
	m := wantOK(t, post(t, ts.URL, modernBody(1, "tools/list", ""), h))
	if !bytes.Contains(m.Result, []byte(`"resultType":"complete"`)) {
		t.Fatal("modern request with a session header was not answered statelessly")
	}
	// Modern headers without _meta: a modern refusal (-32602), not a
	// legacy one.
	wantErr(t, post(t, ts.URL, listBody, modernHeaders("tools/list", "")), 400, -32602)
	h = baseHeaders()
	h.Set(mcpwire.HeaderProtocolVersion, modern)
	wantErr(t, post(t, ts.URL, listBody, h), 400, -32602)
}

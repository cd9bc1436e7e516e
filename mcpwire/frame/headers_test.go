package frame

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/mcpwire"
)

const testMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func modernReq(method, extra string) string {
	p := `{` + testMeta
	if extra != "" {
		p += "," + extra
	}
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + p + `}}`
}

func mustParse(t *testing.T, body string) *Message {
	t.Helper()
	m, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDeriveHeaders(t *testing.T) {
	cases := []struct {
		body    string
		session string
		want    map[string]string
	}{
		{modernReq("tools/list", ""), "2025-11-25",
			map[string]string{"Mcp-Method": "tools/list", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Name": ""}},
		{modernReq("tools/call", `"name":"get_weather"`), "",
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "get_weather", "Mcp-Protocol-Version": "2026-07-28"}},
		{modernReq("prompts/get", `"name":"Hello, 世界"`), "",
			map[string]string{"Mcp-Name": "=?base64?SGVsbG8sIOS4lueVjA==?="}},
		{modernReq("resources/read", `"uri":"=?base64?literal?="`), "",
			map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="}},
		{modernReq("resources/read", `"name":"not the uri"`), "",
			map[string]string{"Mcp-Name": ""}},
		{modernReq("tools/list", `"name":"not a call"`), "",
			map[string]string{"Mcp-Name": ""}},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"x"}}`, "2025-06-18",
			map[string]string{"Mcp-Protocol-Version": "2025-06-18", "Mcp-Name": ""}},
		{`{"jsonrpc":"2.0","id":6,"method":"initialize"}`, "",
			map[string]string{"Mcp-Method": "initialize", "Mcp-Protocol-Version": ""}},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "2025-11-25",
			map[string]string{"Mcp-Method": "notifications/initialized", "Mcp-Protocol-Version": "2025-11-25"}},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7},"name":7}}`, "2025-11-25",
			map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Name": ""}},
		// The refusal of a server request: only the session's version.
		{`{"jsonrpc":"2.0","id":"srv-1","error":{"code":-32601,"message":"no"}}`, "2025-11-25",
			map[string]string{"Mcp-Method": "", "Mcp-Protocol-Version": "2025-11-25"}},
		{`{"jsonrpc":"2.0","id":"srv-1","result":{}}`, "",
			map[string]string{"Mcp-Method": "", "Mcp-Protocol-Version": ""}},
	}
	for _, c := range cases {
		hs, err := DeriveHeaders(mustParse(t, c.body), c.session)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		hs.Set(h)
		for k, v := range c.want {
			if got := h.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", c.body, k, got, v)
			}
		}
	}
	for _, body := range []string{`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"method":1}`, `[]`} {
		if _, err := DeriveHeaders(mustParse(t, body), ""); err == nil {
			t.Errorf("%s: derived", body)
		}
	}
	if _, err := DeriveHeaders(&Message{}, ""); err == nil {
		t.Error("a zero message derived headers")
	}
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func onlyModern(v string) *Error {
	if v != mcpwire.Rev20260728 {
		return Errorf(http.StatusBadRequest, mcpwire.CodeUnsupportedProtocolVersion, "Unsupported protocol version: %q", v)
	}
	return nil
}

func TestCheckHeaders(t *testing.T) {
	const pv, mm, mn = mcpwire.HeaderProtocolVersion, mcpwire.HeaderMethod, mcpwire.HeaderName
	list := modernReq("tools/list", "")
	call := modernReq("tools/call", `"name":"get_weather"`)
	uni := modernReq("tools/call", `"name":"h\u00e9"`)
	old := strings.Replace(list, "2026-07-28", "2099-01-01", 1)
	oldCall := strings.Replace(call, "2026-07-28", "2099-01-01", 1)
	noName := modernReq("tools/call", `"name":5`)
	cases := []struct {
		name string
		body string
		h    http.Header
		code int
		msg  string
	}{
		{"list", list, hdr(pv, "2026-07-28", mm, "tools/list"), 0, ""},
		{"trimmed", list, hdr(pv, " 2026-07-28\t", mm, "tools/list "), 0, ""},
		{"version missing", list, hdr(mm, "tools/list"), -32020, "missing required Mcp-Protocol-Version"},
		{"version repeated", list, hdr(pv, "2026-07-28", pv, "2026-07-28", mm, "tools/list"), -32020, "repeated"},
		{"version unequal", list, hdr(pv, "2025-11-25", mm, "tools/list"), -32020, `MCP-Protocol-Version header "2025-11-25" does not match _meta protocolVersion "2026-07-28"`},
		{"version not served", old, hdr(pv, "2099-01-01", mm, "tools/list"), -32022, "Unsupported"},
		// The order: an unsupported version before the method, a mismatched version before both.
		{"not served, method wrong", old, hdr(pv, "2099-01-01", mm, "tools/call"), -32022, "Unsupported"},
		{"version unequal, not served", old, hdr(pv, "2026-07-28", mm, "tools/call"), -32020, "MCP-Protocol-Version"},
		{"method missing", list, hdr(pv, "2026-07-28"), -32020, "missing required Mcp-Method"},
		{"method case", list, hdr(pv, "2026-07-28", mm, "Tools/List"), -32020, `Mcp-Method header "Tools/List" does not match method "tools/list"`},
		{"call", call, hdr(pv, "2026-07-28", mm, "tools/call", mn, "get_weather"), 0, ""},
		{"call base64", call, hdr(pv, "2026-07-28", mm, "tools/call", mn, mcpwire.EncodeHeaderValue("get_weather")+""), 0, ""},
		{"call name as base64 anyway", call, hdr(pv, "2026-07-28", mm, "tools/call", mn, "=?base64?Z2V0X3dlYXRoZXI=?="), 0, ""},
		{"name missing", call, hdr(pv, "2026-07-28", mm, "tools/call"), -32020, "missing required Mcp-Name"},
		{"name unequal", call, hdr(pv, "2026-07-28", mm, "tools/call", mn, "delete_all"), -32020, "does not match the body value"},
		{"name bad base64", call, hdr(pv, "2026-07-28", mm, "tools/call", mn, "=?base64?!!?="), -32020, "invalid =?base64?"},
		{"name raw non-ASCII", uni, hdr(pv, "2026-07-28", mm, "tools/call", mn, "h\u00e9"), -32020, "invalid characters"},
		{"name encoded non-ASCII", uni, hdr(pv, "2026-07-28", mm, "tools/call", mn, mcpwire.EncodeHeaderValue("h\u00e9")), 0, ""},
		{"name not a string", noName, hdr(pv, "2026-07-28", mm, "tools/call", mn, "5"), -32602, "params.name must be a string"},
		{"method before name", noName, hdr(pv, "2026-07-28", mm, "tools/list"), -32020, "Mcp-Method"},
		{"not served before name", oldCall, hdr(pv, "2099-01-01", mm, "tools/call", mn, "x"), -32022, ""},
	}
	for _, c := range cases {
		e := CheckHeaders(c.h, mustParse(t, c.body), onlyModern)
		switch {
		case c.code == 0 && e != nil:
			t.Errorf("%s: refused: %v", c.name, e)
		case c.code != 0 && (e == nil || e.Code != c.code || !strings.Contains(e.Message, c.msg)):
			t.Errorf("%s: got %v, want %d %q", c.name, e, c.code, c.msg)
		case e != nil && e.Code == -32020 && e.Status != http.StatusBadRequest:
			t.Errorf("%s: status %d", c.name, e.Status)
		}
	}
	// Without supported, the version is only compared.
	if e := CheckHeaders(hdr(pv, "2099-01-01", mm, "tools/list"), mustParse(t, old), nil); e != nil {
		t.Errorf("no version check: %v", e)
	}
	// stdio: no headers, only the body's own rules.
	if e := CheckHeaders(nil, mustParse(t, old), onlyModern); e == nil || e.Code != -32022 {
		t.Errorf("stdio version: %v", e)
	}
	if e := CheckHeaders(nil, mustParse(t, noName), onlyModern); e == nil || e.Code != -32602 || e.Status != 0 {
		t.Errorf("stdio name: %v", e)
	}
	if e := CheckHeaders(nil, mustParse(t, call), onlyModern); e != nil {
		t.Errorf("stdio call: %v", e)
	}
}

func TestCheckHeadersNotification(t *testing.T) {
	const pv, mm = mcpwire.HeaderProtocolVersion, mcpwire.HeaderMethod
	bare := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
	meta := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,` + testMeta + `}}`
	badMeta := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}}`
	cases := []struct {
		name string
		body string
		h    http.Header
		code int
		msg  string
	}{
		{"bare", bare, hdr(pv, "2026-07-28"), 0, ""},
		{"with method", bare, hdr(pv, "2026-07-28", mm, "notifications/cancelled"), 0, ""},
		{"with meta", meta, hdr(pv, "2026-07-28"), 0, ""},
		{"version missing", bare, hdr(mm, "notifications/cancelled"), -32020, "missing required"},
		{"meta unequal", meta, hdr(pv, "2025-11-25"), -32020, "MCP-Protocol-Version header does not match _meta protocolVersion"},
		{"meta not a string", badMeta, hdr(pv, "2026-07-28"), -32020, "does not match _meta"},
		{"not served", bare, hdr(pv, "2025-11-25"), -32022, ""},
		{"method unequal", bare, hdr(pv, "2026-07-28", mm, "notifications/initialized"), -32020, "Mcp-Method header does not match method"},
		{"method repeated", bare, hdr(pv, "2026-07-28", mm, "a", mm, "b"), -32020, "repeated"},
	}
	for _, c := range cases {
		e := CheckHeaders(c.h, mustParse(t, c.body), onlyModern)
		switch {
		case c.code == 0 && e != nil:
			t.Errorf("%s: refused: %v", c.name, e)
		case c.code != 0 && (e == nil || e.Code != c.code || !strings.Contains(e.Message, c.msg)):
			t.Errorf("%s: got %v, want %d %q", c.name, e, c.code, c.msg)
		}
	}
	if e := CheckHeaders(nil, mustParse(t, bare), onlyModern); e != nil {
		t.Errorf("stdio notification: %v", e)
	}
}

// What a sender derives, a receiver accepts.
func TestDeriveThenCheck(t *testing.T) {
	for _, body := range []string{
		modernReq("tools/list", `"cursor":"c"`),
		modernReq("tools/call", `"name":" padded "`),
		modernReq("tools/call", `"name":"=?base64?x?="`),
		modernReq("prompts/get", `"name":"\u202eevil"`),
		modernReq("resources/read", `"uri":"file:///tmp/a b"`),
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{` + testMeta + `}}`,
	} {
		m := mustParse(t, body)
		hs, err := DeriveHeaders(m, "")
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		hs.Set(h)
		if e := CheckHeaders(h, m, onlyModern); e != nil {
			t.Errorf("%s: %v (headers %v)", body, e, h)
		}
	}
}

// A body whose method or protocol version cannot travel as a header value
// as it is (spaces around it, which a receiver trims; a control or
// non-ASCII character) has no headers: DeriveHeaders refuses it and
// CheckHeaders answers -32600, whatever headers come with it.
func TestDeriveHeadersUnsendable(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":" "}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28 "}}}`,
		`{"jsonrpc":"2.0","id":1,"method":" tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list\r\nX-Injected: 1","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28\u00e9"}}}`,
	} {
		m, err := Parse([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if _, err := DeriveHeaders(m, ""); err == nil {
			t.Errorf("%s: headers derived", body)
		}
		h := http.Header{}
		h.Set("MCP-Protocol-Version", "2026-07-28")
		h.Set("Mcp-Method", "tools/list")
		if e := CheckHeaders(h, m, nil); e == nil || e.Code != mcpwire.CodeInvalidRequest {
			t.Errorf("%s: CheckHeaders %v", body, e)
		}
	}
}

package proxy_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

// The gateway's own refusals carry the HTTP status the 2026-07-28
// revision gives their code, as a server's would (clients read 404 with
// -32601 to tell a modern server from a legacy one); in the legacy era
// they ride a 200 like a server's JSON-RPC errors.
func TestOwnErrorStatus(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	_, enforce := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up, Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	_, observe := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Observe})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	post := func(url, body string, h map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	modern := func(name string) map[string]string {
		return map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": name, "MCP-Protocol-Version": "2026-07-28"}
	}
	cases := []struct {
		what, url, body string
		h               map[string]string
		status          int
		want            []string
	}{
		{"an unknown tool", enforce, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{},` + meta + `}}`, modern("nope"),
			400, []string{`"code":-32602`, `"reason":"call_unknown_tool"`}},
		{"arguments outside the schema", enforce, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":7},` + meta + `}}`, modern("search_issues"),
			400, []string{`"code":-32602`, `"reason":"call_arguments_invalid"`}},
		{"a paged list from the gateway", enforce, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x",` + meta + `}}`, map[string]string{"Mcp-Method": "tools/list", "MCP-Protocol-Version": "2026-07-28"},
			400, []string{`"code":-32602`, `"reason":"invalid_cursor"`}},
		{"a call in observe mode", observe, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":"x"},` + meta + `}}`, modern("search_issues"),
			404, []string{`"code":-32601`, `"reason":"observe_mode"`}},
	}
	for _, c := range cases {
		resp, out := post(c.url, c.body, c.h)
		if resp.StatusCode != c.status {
			t.Errorf("%s: HTTP %d, want %d: %s", c.what, resp.StatusCode, c.status, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %s lacks %s", c.what, out, w)
			}
		}
	}

	// Legacy: the same refusal on a 200.
	resp, out := post(enforce, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("legacy initialize: %d %q %s", resp.StatusCode, sid, out)
	}
	h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	post(enforce, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	resp, out = post(enforce, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, h)
	if resp.StatusCode != 200 || !strings.Contains(out, `"code":-32602`) || !strings.Contains(out, `"reason":"call_unknown_tool"`) {
		t.Errorf("legacy refusal: HTTP %d %s", resp.StatusCode, out)
	}
}

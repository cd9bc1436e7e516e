package proxy_test

// Regression tests for what real peers (internal/peers: the go-sdk and
// mcp-go clients, the MCP Inspector, the official conformance suite)
// found wrong in the gateway, each reproduced here without the peer.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/proxy"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// A stdio downstream that closes its stdin ends the session at once, even
// with a request in flight that the upstream is slow to answer (found by
// the MCP Inspector: its subscriptions/listen kept `mcpdrift proxy` alive
// until the client killed it, and without a kill, for the request
// timeout). A request piped in just before the end is still answered.
func TestServeStdioEndsWithTheDownstream(t *testing.T) {
	for _, slow := range []bool{false, true} {
		cfg := mockserver.Config{}
		if slow {
			cfg.Slow = 20 * time.Second
		}
		_, up := upstreamMock(t, cfg, exampleV1)
		g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
			Baseline: baselineOf(t, exampleV1, manifest.Identity{}), RequestTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		in := strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + modernMeta + `}}` + "\n")
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- g.ServeStdio(context.Background(), in, outW); outW.Close() }()
		var lines []string
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("slow=%v: ServeStdio did not return after its stdin ended", slow)
		}
		took := time.Since(start)
		if slow && took > 5*time.Second {
			t.Errorf("slow upstream: ServeStdio took %v after its stdin ended", took)
		}
		if !slow && (len(lines) != 1 || !strings.Contains(lines[0], `"id":7,"result"`)) {
			t.Errorf("a request piped in before the end: %q, want its answer", lines)
		}
	}
}

// postModern POSTs one 2026-07-28 request to url with the headers its body
// derives, and returns the status, the Content-Type and the body.
func postModern(t *testing.T, url, method, params string, extra map[string]string) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	for k, v := range extra {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// A 2026-07-28 error keeps the HTTP status the upstream gave it (404 for
// -32601, 400 for -32022), and an answer the upstream sent on an event
// stream reaches the downstream on one (found by the conformance suite's
// server-stateless and server-sse-multiple-streams scenarios through an
// audit gateway: every error had become a 200, every stream a JSON body).
func TestUpstreamStatusAndFramingRelayed(t *testing.T) {
	for _, sse := range []bool{false, true} {
		cfg := mockserver.Config{}
		if sse {
			cfg.Response = mockserver.SSEResponses
		}
		_, up := upstreamMock(t, cfg, exampleV1)
		_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
			Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
		status, ct, body := postModern(t, url, "nope/nope", modernMeta, nil)
		if status != http.StatusNotFound || !strings.Contains(body, `"code":-32601`) {
			t.Errorf("sse=%v: unknown method: %d %s, want the upstream's 404 -32601", sse, status, body)
		}
		v2099 := strings.Replace(modernMeta, "2026-07-28", "2099-01-01", 1)
		status, _, body = postModern(t, url, "tools/list", v2099, map[string]string{"MCP-Protocol-Version": "2099-01-01"})
		if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32022`) {
			t.Errorf("sse=%v: unsupported version: %d %s, want the upstream's 400 -32022", sse, status, body)
		}
		status, ct, body = postModern(t, url, "tools/list", modernMeta, nil)
		wantCT := "application/json"
		if sse {
			wantCT = "text/event-stream"
		}
		if status != http.StatusOK || !strings.HasPrefix(ct, wantCT) || !strings.Contains(body, `"search_issues"`) {
			t.Errorf("sse=%v: tools/list: %d %s %.120s, want 200 %s", sse, status, ct, body, wantCT)
		}
	}
}

// A 2026-07-28 tools/call of a tool whose inputSchema annotates an
// argument with x-mcp-header carries its Mcp-Param-* header to an HTTP
// upstream, which checks it against the body: the gateway forwards it
// from an HTTP downstream (checking it agrees with the body, -32020 when
// it is missing or differs) and derives it for a stdio downstream, which
// has no headers to give (found by the go-sdk and mcp-go clients through
// the gateway in front of a stateless go-sdk server, whose get_repo tool
// annotates owner: every call was refused upstream with -32020, and by the
// conformance suite's http-custom-header-server-validation).
func TestParamHeadersReachTheUpstream(t *testing.T) {
	tools := `{"tools":[{"name":"get_repo","description":"Fetch a repository.","inputSchema":{"type":"object","properties":{"owner":{"type":"string","x-mcp-header":"Owner"},"repo":{"type":"string"},"stats":{"type":"boolean","x-mcp-header":"Include-Stats"}},"required":["owner","repo"]}}]}`
	manifestPath := toolsManifest(t, tools)
	mock, up := upstreamMock(t, mockserver.Config{}, manifestPath)
	cfg := proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, manifestPath, manifest.Identity{})}
	_, url := gateway(t, cfg)
	call := `"name":"get_repo","arguments":{"owner":"Zoë","repo":"app","stats":true},` + modernMeta
	ok := map[string]string{"Mcp-Name": "get_repo", "Mcp-Param-Owner": "=?base64?Wm/Dqw==?=", "Mcp-Param-Include-Stats": "true"}
	status, _, body := postModern(t, url, "tools/call", call, ok)
	if status != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Errorf("HTTP downstream with its Mcp-Param-* headers: %d %s, want the upstream's result", status, body)
	}
	for _, bad := range []map[string]string{
		{"Mcp-Name": "get_repo", "Mcp-Param-Include-Stats": "true"},                                            // Owner missing
		{"Mcp-Name": "get_repo", "Mcp-Param-Owner": "Zoe", "Mcp-Param-Include-Stats": "true"},                  // not the argument
		{"Mcp-Name": "get_repo", "Mcp-Param-Owner": "=?base64?Wm/Dqw==?=", "Mcp-Param-Include-Stats": "false"}, // not the argument
	} {
		before := mock.LogTotal()
		status, _, body := postModern(t, url, "tools/call", call, bad)
		if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32020`) {
			t.Errorf("HTTP downstream with headers %v: %d %s, want the gateway's 400 -32020", bad, status, body)
		}
		for _, e := range mock.Log()[before:] {
			if e.Method == "tools/call" {
				t.Errorf("headers %v: the call reached the upstream", bad)
			}
		}
	}

	// stdio downstream: the gateway derives them.
	g, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	in := strings.NewReader(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{` + call + `}}` + "\n")
	var out strings.Builder
	if err := g.ServeStdio(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"id":"c","result"`) {
		t.Errorf("stdio downstream: %s, want the upstream's result", out.String())
	}
	var seen bool
	for _, e := range mock.Log() {
		if e.Method == "tools/call" && e.Headers.Get("Mcp-Param-Owner") == "=?base64?Wm/Dqw==?=" && e.Headers.Get("Mcp-Param-Include-Stats") == "true" {
			seen = true
		}
	}
	if !seen {
		t.Error("the upstream never saw the call with its Mcp-Param-* headers")
	}
}

// Every annotation of a served tool is checked, however many it has: the
// gateway derived at most 64 headers, so a downstream client's header for
// a 65th annotated argument went upstream unchecked, disagreeing with the
// body it claims to mirror.
func TestManyParamHeadersAllChecked(t *testing.T) {
	const n = 70
	var props, args []string
	ok := map[string]string{"Mcp-Name": "wide"}
	for i := range n {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string","x-mcp-header":"H%d"}`, i, i))
		args = append(args, fmt.Sprintf(`"p%d":"v%d"`, i, i))
		ok[fmt.Sprintf("Mcp-Param-H%d", i)] = fmt.Sprintf("v%d", i)
	}
	tools := `{"tools":[{"name":"wide","description":"Many headers.","inputSchema":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}]}`
	manifestPath := toolsManifest(t, tools)
	mock, up := upstreamMock(t, mockserver.Config{}, manifestPath)
	cfg := proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Enforce, Target: up,
		Baseline: baselineOf(t, manifestPath, manifest.Identity{})}
	_, url := gateway(t, cfg)
	call := `"name":"wide","arguments":{` + strings.Join(args, ",") + `},` + modernMeta
	if status, _, body := postModern(t, url, "tools/call", call, ok); status != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Fatalf("all %d headers agreeing: %d %s, want the upstream's result", n, status, body)
	}
	bad := map[string]string{}
	for k, v := range ok {
		bad[k] = v
	}
	bad[fmt.Sprintf("Mcp-Param-H%d", n-1)] = "forged"
	before := mock.LogTotal()
	if status, _, body := postModern(t, url, "tools/call", call, bad); status != http.StatusBadRequest || !strings.Contains(body, `"code":-32020`) {
		t.Errorf("the last of %d headers disagreeing with its argument: %d %s, want the gateway's 400 -32020", n, status, body)
	}
	for _, e := range mock.Log()[before:] {
		if e.Method == "tools/call" {
			t.Errorf("the call with a forged Mcp-Param-H%d reached the upstream", n-1)
		}
	}
}

// toolsManifest writes a tools/list of the tools given (JSON) and returns
// its path, for upstreamMock and baselineOf.
func toolsManifest(t *testing.T, tools string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(path, []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A request with no session and no _meta protocolVersion is -32602 (400),
// the revision's answer to a missing _meta field, not a header mismatch
// (found by the conformance suite's server-stateless
// sep-2575-request-meta-invalid-* checks through an audit gateway); one
// whose _meta names an old version still reaches the upstream, whose
// -32022 tells the client what it serves.
func TestMissingMetaIsInvalidParams(t *testing.T) {
	_, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	for _, params := range []string{``, `"_meta":{}`, `"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}`} {
		status, _, body := postModern(t, url, "tools/list", params, nil)
		if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32602`) {
			t.Errorf("params {%s}: %d %s, want 400 -32602", params, status, body)
		}
	}
	old := strings.Replace(modernMeta, "2026-07-28", "2025-06-18", 1)
	status, _, body := postModern(t, url, "tools/list", old, map[string]string{"MCP-Protocol-Version": "2025-06-18"})
	if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32022`) {
		t.Errorf("an old version in _meta: %d %s, want the upstream's 400 -32022", status, body)
	}
}

// The gateway on loopback refuses a request whose Host or Origin names
// another host (403): DNS rebinding would otherwise let a web page reach
// the upstream through it, past the upstream's own Host check, which sees
// the gateway's (found by the conformance suite's dns-rebinding-protection
// through an audit gateway in front of the go-sdk server, which refuses
// such requests itself).
func TestDNSRebindingRefused(t *testing.T) {
	mock, up := upstreamMock(t, mockserver.Config{}, exampleV1)
	_, url := gateway(t, proxy.Config{Upstream: proxy.Upstream{URL: up}, Mode: proxy.Audit, Target: up,
		Baseline: baselineOf(t, exampleV1, manifest.Identity{})})
	host := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://")
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"evil.example.com", "http://evil.example.com", http.StatusForbidden},
		{"evil.example.com", "", http.StatusForbidden},
		{host, "http://evil.example.com", http.StatusForbidden},
		{host, "null", http.StatusForbidden},
		{host, "http://" + host, http.StatusOK},
		{"localhost:8080", "http://localhost:6274", http.StatusOK},
		{host, "", http.StatusOK},
	} {
		before := mock.LogTotal()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`))
		req.Host = c.host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Host %q Origin %q: %d, want %d", c.host, c.origin, resp.StatusCode, c.want)
		}
		if c.want == http.StatusForbidden && mock.LogTotal() != before {
			t.Errorf("Host %q Origin %q: the request reached the upstream", c.host, c.origin)
		}
	}
}
